/**
 * README §svc chat: a question answered elsewhere is withdrawn as `(answered elsewhere: <decision>)`, one
 * whose turn ended as `(the turn ended before an answer)`. A turn cancelled while its tool waits for a
 * confirmation resolves the request as a deny nobody gave (`cancelled: true`, spec 2 state table), and
 * svc chat showed that as `(answered elsewhere: deny)`: an answer nobody gave.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { sessionOf, startChat } from '../helpers/chat-cli.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const server = await startAgentServer({ after }, { env: fakeProviderEnv(fake, ['anthropic']) });

test('the question of a turn cancelled elsewhere is withdrawn as ended, not as answered', async () => {
  fake.script([
    { text: 'first' },
    { toolUses: [{ name: 'write_file', input: { path: 'a.txt', content: 'a' } }] },
  ]);
  const c = startChat(server.url, server.env, ['--workspace', server.workspace]);
  c.child.stdin!.write('one\n');
  await c.waitFor(/^first\n— done/m); // the chat's stream is live
  const sid = sessionOf(c.out());
  const started = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'from another client' }],
  });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const turnId = started.body.turn_id as string;
  await c.waitFor(/^\? allow write_file path=a\.txt content=a \[y\/n\/a\] $/m);
  const cancel = await server.api('POST', `/sessions/${sid}/turns/${turnId}/cancel`, { reason: 'elsewhere' });
  assert.equal(cancel.status < 300, true, JSON.stringify(cancel.body));
  await c.waitFor(/^— cancelled \(elsewhere\)/m);
  c.child.stdin!.end();
  assert.equal(await c.exit, 0, c.err());
  assert.match(c.out(), /\(the turn ended before an answer\)$/m);
  assert.doesNotMatch(c.out(), /answered elsewhere/);
});

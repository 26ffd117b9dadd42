/**
 * A turn refused at submission (503 routing_failed) must not poison the session: its user message stays
 * readable (status cancelled) but is never sent to a model again. A message too large for every model used
 * to stay in the history, so every later turn of the session was refused with context_too_small too.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';

const fake = await startFakeProvider();
after(() => fake.close());
// one server for both tests: each works in a session of its own
const server = await startAgentServer({ after }, { env: fakeProviderEnv(fake, ['anthropic']) });

test('a message too large for every model is refused and the next turn runs without it', async () => {
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const huge = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'log line\n'.repeat(300_000) }],
  });
  assert.equal(huge.status, 503, JSON.stringify(huge.body).slice(0, 300));
  assert.equal(huge.body.error.code, 'routing_failed');
  assert.equal(huge.body.error.details.tried[0].reason, 'context_too_small');

  fake.script([{ text: 'small answer' }]);
  const small = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'hi' }],
  });
  assert.equal(small.status, 202, JSON.stringify(small.body).slice(0, 300));
  for (let i = 0; i < 400; i++) {
    const s = (await server.api('GET', `/sessions/${sid}`)).body;
    if (s.current_turn_id === null) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const sent = fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
  assert.equal(JSON.stringify(sent.messages).includes('log line'), false);
  const messages = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  assert.deepEqual(
    messages.map((m: { role: string; status: string }) => [m.role, m.status]),
    [
      ['user', 'cancelled'],
      ['user', 'completed'],
      ['assistant', 'completed'],
    ],
  );
});

// A prompt the provider refuses outright (400: an image it cannot read, a document it will not take) failed
// its turn and then every later one, since it was sent again with each of them.
test('a prompt the provider refused with a 400 on the first call is not sent again with the next turns', async () => {
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const idle = async () => {
    for (let i = 0; i < 400; i++) {
      if ((await server.api('GET', `/sessions/${sid}`)).body.current_turn_id === null) return;
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  fake.script([{ error: 400, message: 'Could not process image' }]);
  await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'the unreadable one' }],
  });
  await idle();
  fake.script([{ text: 'fine' }]);
  await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'next' }] });
  await idle();
  const sent = JSON.stringify(fake.requests.at(-1)!.body);
  assert.equal(sent.includes('the unreadable one'), false);
  assert.equal(sent.includes('next'), true);
  const messages = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  assert.deepEqual(
    messages.map((m: { role: string; status: string }) => [m.role, m.status]),
    [
      ['user', 'cancelled'],
      ['user', 'completed'],
      ['assistant', 'completed'],
    ],
  );
});

/**
 * README §svc chat: a question answered elsewhere is withdrawn as `(answered elsewhere: <decision>)`, one
 * whose turn ended as `(the turn ended before an answer)`. A turn cancelled while its tool waits for a
 * confirmation resolves the request as a deny nobody gave (`cancelled: true`, spec 2 state table), and
 * svc chat showed that as `(answered elsewhere: deny)`: an answer nobody gave.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, test } from 'node:test';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { ensureBuilt, SVC_BIN } from '../helpers/svc.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const server = await startAgentServer(
  { after },
  { env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: fake.anthropicBaseUrl } },
);

test('the question of a turn cancelled elsewhere is withdrawn as ended, not as answered', async () => {
  ensureBuilt();
  fake.script([
    { text: 'first' },
    { toolUses: [{ name: 'write_file', input: { path: 'a.txt', content: 'a' } }] },
  ]);
  const child = spawn(
    process.execPath,
    [SVC_BIN, 'chat', '--server', server.url, '--workspace', server.workspace],
    {
      env: server.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  after(() => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout.setEncoding('utf8').on('data', (d) => {
    out += d;
    for (const w of waiters.splice(0)) w();
  });
  child.stderr.setEncoding('utf8').on('data', (d) => {
    err += d;
  });
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const waitFor = (re: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (re.test(out)) return resolve();
        if (child.exitCode !== null) return reject(new Error(`chat exited first:\n${out}\n${err}`));
        waiters.push(check);
      };
      child.once('exit', () => check());
      check();
    });

  child.stdin.write('one\n');
  await waitFor(/^first\n— done/m); // the chat's stream is live
  const sid = /session (sess_[0-9A-Z]{26})/.exec(out)![1];
  const started = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'from another client' }],
  });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const turnId = started.body.turn_id as string;
  await waitFor(/^\? allow write_file path=a\.txt content=a \[y\/n\/a\] $/m);
  const cancel = await server.api('POST', `/sessions/${sid}/turns/${turnId}/cancel`, { reason: 'elsewhere' });
  assert.equal(cancel.status < 300, true, JSON.stringify(cancel.body));
  await waitFor(/^— cancelled \(elsewhere\)/m);
  child.stdin.end();
  assert.equal(await exit, 0, err);
  assert.match(out, /\(the turn ended before an answer\)$/m);
  assert.doesNotMatch(out, /answered elsewhere/);
});

/**
 * Servers sharing a SQLite trace store (README §Trace store). A second `svc serve` would cancel the first's
 * running turns as server_restart: it is refused (exit 1, one sentence naming the store and the first's pid)
 * before it changes anything. A second `svc gateway` (a rolling update's new pod beside the old one) starts,
 * says it shares the store, and names none of the first's calls in flight as gaps. The first's held turn or
 * call then completes untouched, a gateway and a serve share a store as before, and a first server killed
 * with -9 does not block the next start.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { freePort, type RunningSvc, runSvc, startSvc } from '../helpers/svc.ts';

async function until(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The refusal: exit 1 and one sentence naming the store and the running server's pid; nothing started. */
function assertRefused(
  result: { code: number | null; stderr: string; stdout: string },
  kind: string,
  db: string,
  first: RunningSvc,
): void {
  assert.equal(result.code, 1, result.stderr);
  const lines = result.stderr.trim().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  assert.ok(lines[0].includes(`svc ${kind} (pid ${first.child.pid})`), lines[0]);
  assert.ok(lines[0].includes(db), lines[0]);
  assert.doesNotMatch(result.stdout + result.stderr, /listening/);
}

test('a second svc serve on the store is refused; the first one’s running turn completes; kill -9 frees the store', async (t) => {
  const fake = await startFakeProvider();
  t.after(() => fake.close());
  const env = fakeProviderEnv(fake, ['anthropic', 'openai']);
  const first = await startAgentServer(t, { env });
  const sid = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body.id;
  fake.script([{ hold: true, text: 'held answer' }]);
  const turn = await first.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'go' }] });
  assert.equal(turn.status, 202, JSON.stringify(turn.body));
  await until('the turn’s call to reach the provider', () => fake.requests.length === 1);

  const second = await runSvc(['serve', '--port', String(await freePort())], {
    env: first.env,
    timeoutMs: 15_000,
  });
  assertRefused(second, 'serve', first.db, first.svc);

  assert.equal(fake.release(), 1);
  const events = async () =>
    (await first.api('GET', `/sessions/${sid}/events?limit=100`)).body.events as Array<{ type: string }>;
  await until('the turn to end', async () => (await events()).some((e) => e.type.startsWith('turn.c')));
  const types = (await events()).map((e) => e.type);
  assert.ok(types.includes('turn.completed'), types.join());
  assert.ok(!types.includes('turn.cancelled') && !types.includes('bus.gap_detected'), types.join());

  assert.equal(await first.svc.stop('SIGKILL'), null);
  const after = await startAgentServer(t, { env, home: first.home });
  assert.equal((await after.api('GET', `/sessions/${sid}`)).status, 200);
});

test('a second svc gateway on the store starts beside the first and names none of its calls as gaps; a svc serve beside them starts; kill -9 frees the store', async (t) => {
  const stack = await startGatewayStack();
  const later: RunningSvc[] = [];
  t.after(async () => {
    for (const svc of later) await svc.stop();
    await stack.stop();
  });
  const db = stack.files.db;
  stack.fake.script([{ hold: true }]);
  const call = fetch(`${stack.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai:gpt-5-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await until('the call to reach the provider', () => stack.fake.requests.length === 1);

  const second = await startSvc(['gateway', '--port', '{port}'], { env: stack.files.env });
  later.push(second);
  const { stdout, stderr } = second.output();
  assert.match(
    stdout + stderr,
    new RegExp(`another svc gateway is running.*"other_pid":${stack.gw.child.pid}`),
  );
  const viaSecond = await fetch(`${second.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai:gpt-5-mini', messages: [{ role: 'user', content: 'also' }] }),
  });
  assert.equal(viaSecond.status, 200);
  // the agent server and the gateways share one store (the container's layout)
  const serve = await startSvc(['serve', '--port', '{port}'], {
    env: { ...stack.files.env, SVC_DB_PATH: db },
    readyPath: '/health',
  });
  later.push(serve);

  assert.equal(stack.fake.release(), 1);
  assert.equal((await call).status, 200);
  assert.deepEqual(readEvents(db, 'bus.gap_detected'), []);

  stack.gw.child.kill('SIGKILL');
  await stack.gw.stop();
  await second.stop();
  later.push(await startSvc(['gateway', '--port', '{port}'], { env: stack.files.env }));
});

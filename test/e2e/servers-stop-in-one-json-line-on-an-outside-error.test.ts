/**
 * An error thrown outside any request (an uncaught exception, an unhandled rejection) in a long-running
 * server: Node's default printed a raw stack beside the JSON-lines log and exited at once, so the opening
 * events the gateway's trace writer still held for company were lost. Each server now logs one JSON error
 * line (the error's class; never its message, which may quote a prompt; the stack with SVC_DEBUG=1),
 * flushes the trace writer and exits 1. The fault comes from SVC_TEST_FAULT, a test-only hook: SIGUSR2
 * throws (or rejects a promise) outside any request.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { startAgentServer } from '../helpers/agent-server.ts';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { runSvc, startSvc } from '../helpers/svc.ts';

async function waitFor(what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Every stderr line is JSON; the one error line says what stopped the server. */
function fatalLine(stderr: string, origin: string, debug = false): Record<string, unknown> {
  const lines = stderr.trim().split('\n');
  for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `not a JSON line: ${line}`);
  const fatal = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'error');
  assert.equal(fatal.length, 1, stderr);
  assert.equal(fatal[0].msg, 'unexpected error outside a request; stopping');
  assert.equal(fatal[0].origin, origin);
  assert.equal(fatal[0].error_class, 'Error');
  // the message may quote a prompt: only SVC_DEBUG=1's stack carries it
  if (!debug) assert.doesNotMatch(stderr, /prompt text/, 'the message is never logged');
  return fatal[0];
}

test('svc gateway: an uncaught exception is one JSON line, the held events are flushed, exit 1', async (t) => {
  const stack = await startGatewayStack({ env: { SVC_TEST_FAULT: 'throw' } });
  t.after(() => stack.stop());
  const { gw, fake } = stack;
  fake.script(['hang']); // a call in flight: its opening events wait in the trace writer for company
  const answer = fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai:gpt-5-mini', messages: [{ role: 'user', content: 'hi' }] }),
  }).catch(() => 'connection closed');
  await waitFor('the upstream request', () => fake.requests.length === 1);
  gw.child.kill('SIGUSR2');
  assert.equal(await exitOf(gw.child), 1, gw.output().stderr);
  assert.equal(await answer, 'connection closed');
  const line = fatalLine(gw.output().stderr, 'uncaught_exception');
  assert.equal(line.stack, undefined, 'no stack without SVC_DEBUG=1');
  const types = readEvents(stack.files.db).map((e) => e.type);
  assert.ok(types.includes('llm.call_started'), types.join(' '));
});

test('svc serve: an unhandled rejection is one JSON line, exit 1', async () => {
  const server = await startAgentServer({ after }, { env: { SVC_TEST_FAULT: 'reject' } });
  server.svc.child.kill('SIGUSR2');
  assert.equal(await exitOf(server.svc.child), 1, server.svc.output().stderr);
  fatalLine(server.svc.output().stderr, 'unhandled_rejection');
});

test('svc forward: an unhandled rejection is one JSON line with its stack under SVC_DEBUG=1, exit 1', async () => {
  const target = createServer((_req, res) => res.end('ok')).listen(0, '127.0.0.1');
  await once(target, 'listening');
  after(() => target.close());
  const to = `127.0.0.1:${(target.address() as AddressInfo).port}`;
  const fwd = await startSvc(['forward', '--listen', '127.0.0.1:{port}', '--target', to], {
    env: { ...process.env, SVC_TEST_FAULT: 'reject', SVC_DEBUG: '1' },
    readyPath: '/',
  });
  after(() => fwd.stop());
  fwd.child.kill('SIGUSR2');
  assert.equal(await exitOf(fwd.child), 1, fwd.output().stderr);
  const line = fatalLine(fwd.output().stderr, 'unhandled_rejection', true);
  assert.match(String(line.stack), /^Error: SVC_TEST_FAULT: .*\n +at /);
});

test('SVC_TEST_FAULT other than throw or reject refuses the start in one sentence, exit 1', async () => {
  // read as unset before, so a mistyped hook (`rejects`) ran a server whose fault test could never fire
  const r = await runSvc(['forward', '--listen', '127.0.0.1:0', '--target', '127.0.0.1:9'], {
    env: { ...process.env, SVC_TEST_FAULT: 'rejects' },
    timeoutMs: 15_000,
  });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /^svc: SVC_TEST_FAULT must be throw or reject .*not "rejects"; unset it/);
});

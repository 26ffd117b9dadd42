/**
 * A client that leaves in the middle of its request body (issue 17 item 8) is a client disconnect, not a
 * gateway failure: the request log line and the trace's turn.completed both say 499 `cancelled`, the
 * log says so at info level, and nothing is logged as an unhandled error.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('a client that leaves mid-body is logged once as a 499 client disconnect at info level', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const { port, hostname } = new URL(stack.gw.url);

  for (const [path, auth] of [
    ['/v1/chat/completions', `Authorization: Bearer ${stack.token}`],
    ['/v1/messages', `x-api-key: ${stack.token}\r\nanthropic-version: 2023-06-01`],
  ] as const) {
    const socket = connect(Number(port), hostname);
    t.after(() => socket.destroy());
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const part = '{"model":"openai:gpt-5-mini","messages":[{"role":"user","content":"';
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${stack.gw.url.slice(7)}\r\n${auth}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n${part}`,
    );
    // the gateway is reading the body once it authenticated the request: its turn has an id then
    await new Promise((r) => setTimeout(r, 200));
    socket.destroy();

    const line = await waitFor('the request log line', () =>
      jsonLines(stack.gw.output().stdout).find((l) => l.msg === 'request' && l.path === path),
    );
    assert.equal(line.status, 499, JSON.stringify(line));
    const turn = await waitFor('turn.completed', () =>
      readEvents(stack.files.db, 'turn.completed').find((e) => e.turn_id === line.request_id),
    );
    assert.equal(turn.payload.status, 499);
    assert.equal(turn.payload.error_code, 'cancelled');
  }

  const { stdout, stderr } = stack.gw.output();
  const logs = jsonLines(`${stdout}\n${stderr}`);
  assert.equal(
    logs.filter((l) => l.level === 'info' && /client disconnected/.test(String(l.msg))).length,
    2,
    'one info line per disconnect',
  );
  assert.doesNotMatch(`${stdout}${stderr}`, /unhandled error/);
  assert.ok(!logs.some((l) => l.level === 'error' || l.level === 'warn'), `${stdout}${stderr}`);
});

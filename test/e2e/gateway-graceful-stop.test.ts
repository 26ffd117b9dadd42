/**
 * Graceful stop of the real `svc gateway` (spec 1 §Deployment contract, DECISIONS §3): on SIGTERM or
 * SIGINT it stops accepting connections, lets a request already in flight finish with its answer, flushes
 * that call's events to the trace store and exits 0. An answer that starts during the stop says
 * `Connection: close`, so a keep-alive client opens a new connection instead of reusing one the stop closes.
 * A connection that has sent no request (or part of its head) is closed at once, like an idle keep-alive
 * one: it does not hold the stop for the drain's 30 s.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

/** A connection open before the stop that sends `bytes` (no whole request head); resolves when the server closes it. */
async function connectionSending(port: number, bytes: string): Promise<{ closed: Promise<void> }> {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => {});
  socket.on('data', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  if (bytes) socket.write(bytes);
  return { closed };
}

/** Whether a new TCP connection to the port is refused (the listener is closed). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

async function waitFor(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal}: no new connections, the in-flight request finishes, its trace is durable, exit 0`, {
    timeout: 30_000,
  }, async (t) => {
    const stack = await startGatewayStack();
    t.after(() => stack.stop());
    const { gw, fake } = stack;

    // The upstream holds its answer for 1.5 s, so the request is still in flight when the signal lands.
    fake.script(['slow-headers=1500']);
    const answer = stack.openai.chat.completions
      .create({ model: 'openai:gpt-5-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    let answered = false;
    answer.then(
      () => {
        answered = true;
      },
      () => {},
    );
    await waitFor('the upstream request', () => fake.requests.length === 1);
    const silent = await connectionSending(gw.port, '');
    const halfHead = await connectionSending(
      gw.port,
      'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n',
    );

    const exit = gw.stop(signal);
    await waitFor('the listener to close', () => refused(gw.port));
    await Promise.all([silent.closed, halfHead.closed]);
    assert.equal(
      answered,
      false,
      'the listener and the connections without a request closed while the request was in flight',
    );
    assert.equal(fake.requests[0].closedEarlyAt, undefined, 'the upstream call was not cut off');

    const { data, response } = await answer;
    assert.equal(response.status, 200);
    assert.equal(data.choices[0].finish_reason, 'stop');
    // the stop closes the socket after this answer: the client must not send its next request on it
    assert.equal(response.headers.get('connection'), 'close');
    assert.equal(await exit, 0, gw.output().stderr);
    assert.match(gw.output().stderr, /gateway stopped/);

    const turnId = response.headers.get('svc-request-id');
    const types = readEvents(stack.files.db)
      .filter((e) => e.turn_id === turnId)
      .map((e) => e.type);
    assert.deepEqual(types, ['route.decided', 'llm.call_started', 'llm.call_completed', 'turn.completed']);
  });
}

/**
 * Graceful stop of the real `svc gateway` (spec 1 §Deployment contract, DECISIONS §3): on SIGTERM or
 * SIGINT it stops accepting connections, lets a request already in flight finish with its answer, flushes
 * that call's events to the trace store and exits 0. An answer that starts during the stop says
 * `Connection: close`, so a keep-alive client opens a new connection instead of reusing one the stop closes.
 * A connection that has sent no request (or part of its head) is closed at once, like an idle keep-alive
 * one: it does not hold the stop for the drain's 30 s. Streams in flight at the signal, in each inbound shape
 * and translated from another provider's wire, run to their terminal frame and keep their events. A second
 * signal cuts the streams still running off: each ends with its shape's error frame (`service_shutting_down`),
 * which the official SDKs raise as an APIError, and its call's closing events are committed before the exit.
 * A request waiting to retry when the stop begins makes no further attempt: it is answered 503 at once.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';
import { parseSseText } from '../helpers/sse-fixtures.ts';

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

/** A stream of each inbound shape, translated from another wire, dripping so that it is still running at the signal. */
const STREAMS = [
  { path: '/v1/messages', model: 'openai:gpt-5-mini', last: 'message_stop' },
  { path: '/v1/chat/completions', model: 'anthropic:claude-haiku-4-5', last: '[DONE]' },
  { path: '/v1/responses', model: 'anthropic:claude-haiku-4-5', last: 'response.completed' },
] as const;

/** A reply of `words` words, each frame held `dripMs` by the fake provider. */
function dripping(dripMs: number, words: number): string {
  return `[[fake:drip=${dripMs};text=${Array.from({ length: words }, (_, i) => `w${i}`).join(' ')}]]`;
}

/** Starts a dripping stream; resolves with its head once its first frame arrived, and with its whole text later. */
async function streamInFlight(
  stack: GatewayStack,
  s: { path: string; model: string },
  text = dripping(100, 8),
) {
  const res = await fetch(`${stack.gw.url}${s.path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.token}`,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    },
    body: JSON.stringify(
      s.path === '/v1/responses'
        ? { model: s.model, stream: true, input: text }
        : { model: s.model, stream: true, max_tokens: 64, messages: [{ role: 'user', content: text }] },
    ),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let body = decoder.decode((await reader.read()).value);
  const rest = (async () => {
    for (let r = await reader.read(); !r.done; r = await reader.read()) body += decoder.decode(r.value);
    return body;
  })();
  return { res, rest };
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
    // a request waiting out the provider's retry hint (5 s) when the signal lands
    const waiting = fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.token}`,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: 'anthropic:claude-haiku-4-5',
        max_tokens: 64,
        messages: [{ role: 'user', content: '<waits> [[fake:error=429;retry-after=5]]' }],
      }),
    });
    const waitingAttempts = () =>
      fake.requests.filter((r) => JSON.stringify(r.body).includes('<waits>')).length;
    await waitFor('the first attempt of the request that waits', () => waitingAttempts() === 1);
    const streams = await Promise.all(STREAMS.map((s) => streamInFlight(stack, s)));
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
    assert.ok(
      fake.requests.every((r) => r.closedEarlyAt === undefined),
      'no upstream call was cut off',
    );

    // a stopping gateway makes no further attempt: the request that waited to retry is answered at once with
    // the 503 the SDKs retry (on another replica), not held for the provider's hint (before: a second attempt
    // 5 s later, then its 429)
    const cut = await waiting;
    const cutBody = (await cut.json()) as { type: string; error: { type: string; code: string } };
    assert.equal(cut.status, 503, JSON.stringify(cutBody));
    assert.equal(cutBody.error.code, 'service_shutting_down');
    assert.equal(cut.headers.get('x-should-retry'), 'true');
    assert.equal(waitingAttempts(), 1, 'no attempt after the stop began');
    const cutEvents = readEvents(stack.files.db).filter(
      (e) => e.turn_id === cut.headers.get('svc-request-id'),
    );
    assert.deepEqual(
      cutEvents
        .filter((e) => e.type === 'llm.call_failed')
        .map((e) => [e.payload.error_class, e.payload.code]),
      [['cancelled', 'service_shutting_down']],
    );

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

    // the streams were in flight at the signal (their first frames had arrived) ...
    const stopping = gw
      .output()
      .stderr.split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'gateway stopping');
    assert.equal(stopping?.in_flight, 2 + STREAMS.length, JSON.stringify(stopping));
    // ... and each ran to its own terminal frame, its call recorded as a success
    for (const [i, { res, rest }] of streams.entries()) {
      const frames = parseSseText(await rest);
      const last = frames.at(-1)!;
      assert.equal(
        last.data === '[DONE]' ? '[DONE]' : JSON.parse(last.data).type,
        STREAMS[i].last,
        STREAMS[i].path,
      );
      const calls = readEvents(stack.files.db).filter((e) => e.turn_id === res.headers.get('svc-request-id'));
      const completed = calls.filter((e) => e.type === 'llm.call_completed');
      assert.equal(completed.length, 1, STREAMS[i].path);
      assert.equal(completed[0].payload.error_class, null);
      assert.equal(calls.filter((e) => e.type === 'turn.completed')[0]?.payload.status, 200);
    }
  });
}

/** The error a stream read through an official SDK ended with (null: it ended well). */
async function sdkStreamInFlight(stream: AsyncIterable<unknown>): Promise<{ ended: Promise<unknown> }> {
  const events = stream[Symbol.asyncIterator]();
  await events.next(); // its first event arrived: the stream is running
  const ended = (async () => {
    try {
      while (!(await events.next()).done);
      return null;
    } catch (err) {
      return err;
    }
  })();
  return { ended };
}

test('a second SIGTERM cuts the running streams off: each ends with its shape error frame, its events committed', {
  timeout: 30_000,
}, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const { gw } = stack;
  // 60 frames 150 ms apart: only the cut ends these streams while the test runs
  const long = dripping(150, 60);
  const messages = [{ role: 'user' as const, content: long }];
  const anthropicStreams = ['anthropic:claude-haiku-4-5', 'openai:gpt-5-mini'].map(async (model) => {
    const { data, response } = await stack.anthropic.messages
      .create({ model, max_tokens: 64, stream: true, messages })
      .withResponse();
    return { model, id: response.headers.get('svc-request-id'), ...(await sdkStreamInFlight(data)) };
  });
  const chatStreams = ['openai:gpt-5-mini', 'anthropic:claude-haiku-4-5'].map(async (model) => {
    const { data, response } = await stack.openai.chat.completions
      .create({ model, stream: true, messages })
      .withResponse();
    return { model, id: response.headers.get('svc-request-id'), ...(await sdkStreamInFlight(data)) };
  });
  const responsesStreams = ['openai:gpt-5-mini', 'anthropic:claude-haiku-4-5'].map(async (model) => ({
    model,
    ...(await streamInFlight(stack, { path: '/v1/responses', model }, long)),
  }));
  const [sdkMessages, sdkChat, raw] = await Promise.all([
    Promise.all(anthropicStreams),
    Promise.all(chatStreams),
    Promise.all(responsesStreams),
  ]);

  const exited = once(gw.child, 'exit');
  gw.child.kill('SIGTERM');
  await waitFor('the stop to begin', () => gw.output().stderr.includes('"msg":"gateway stopping"'));
  gw.child.kill('SIGTERM');

  // the official SDKs raise the gateway's error, not a dropped connection (TypeError: terminated)
  for (const s of sdkMessages) {
    const err = await s.ended;
    assert.ok(err instanceof Anthropic.APIError, `${s.model}: ${String(err)}`);
    assert.equal((err.error as { error: { code: string } }).error.code, 'service_shutting_down', s.model);
  }
  for (const s of sdkChat) {
    const err = await s.ended;
    assert.ok(err instanceof OpenAI.APIError, `${s.model}: ${String(err)}`);
    assert.equal(err.code, 'service_shutting_down', s.model);
  }
  // Codex reads the Responses stream's end: error, then response.failed, numbered on from what came before
  for (const s of raw) {
    const frames = parseSseText(await s.rest).map((f) => JSON.parse(f.data) as Record<string, unknown>);
    const [error, failed] = frames.slice(-2);
    assert.equal(error.type, 'error', s.model);
    assert.equal(error.code, 'service_shutting_down', s.model);
    assert.equal(failed.type, 'response.failed', s.model);
    assert.deepEqual(
      frames.map((f) => f.sequence_number),
      frames.map((_, i) => i),
      s.model,
    );
  }
  assert.deepEqual(await exited, [0, null], gw.output().stderr);

  // each call closed once, as cancelled by the gateway, and its turn names the code the client got
  const events = readEvents(stack.files.db);
  const ids = [
    ...sdkMessages.map((s) => s.id),
    ...sdkChat.map((s) => s.id),
    ...raw.map((s) => s.res.headers.get('svc-request-id')),
  ];
  for (const id of ids) {
    const closing = events.filter(
      (e) => e.turn_id === id && e.type !== 'route.decided' && e.type !== 'llm.call_started',
    );
    assert.deepEqual(
      closing.map((e) => [
        e.type,
        e.payload.error_class ?? e.payload.status,
        e.payload.code ?? e.payload.error_code,
      ]),
      [
        ['llm.call_failed', 'cancelled', 'service_shutting_down'],
        ['turn.completed', 200, 'service_shutting_down'],
      ],
      id ?? '',
    );
  }
});

import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { createAnthropicAdapter } from '#src/adapters/registry.ts';
import { createBus } from '#src/events/bus.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { type LlmCallDeps, LlmCallFailed, openLlmCall } from '#src/llm/call.ts';
import { createRetryBudget, DEFAULT_RETRY_POLICY, resolveClientRetryHint } from '#src/llm/retry.ts';
import type { Upstream, UpstreamRequest, UpstreamResponse } from '#src/llm/upstream.ts';
import { loadModelRegistry } from '#src/models/registry.ts';

const registry = loadModelRegistry(undefined);
const model = registry.get('anthropic:claude-haiku-4-5')!;
const adapter = createAnthropicAdapter({ baseUrl: 'https://a.test', apiKey: 'k' });

type Answer = { status: number; headers?: Record<string, string>; body?: string } | Error;

/** An upstream transport that answers from a list and records what it was sent. */
function scriptedUpstream(answers: Answer[]): Upstream & { sent: UpstreamRequest[] } {
  const sent: UpstreamRequest[] = [];
  return {
    sent,
    async send(req) {
      sent.push(req);
      const a = answers.shift() ?? { status: 200, body: '{}' };
      if (a instanceof Error) throw a;
      const body = Object.assign(Readable.from([Buffer.from(a.body ?? '')]), {
        text: async () => a.body ?? '',
      });
      return { status: a.status, headers: a.headers ?? {}, body } as unknown as UpstreamResponse;
    },
    close: async () => {},
  };
}

function setup(answers: Answer[], overrides: Partial<LlmCallDeps> = {}) {
  const events: Array<EventEnvelope & { payload: Record<string, unknown> }> = [];
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  bus.subscribe({
    name: 'test',
    handle: (e) => void events.push(e as EventEnvelope & { payload: Record<string, unknown> }),
  });
  const upstream = scriptedUpstream(answers);
  const sleeps: number[] = [];
  const deps: LlmCallDeps = {
    bus,
    clock: systemClock,
    log: silentLogger,
    upstream,
    registry,
    retryPolicy: DEFAULT_RETRY_POLICY,
    retryBudget: createRetryBudget(),
    sleep: async (ms) => void sleeps.push(ms),
    ...overrides,
  };
  const input = (signal = new AbortController().signal) => ({
    adapter,
    model,
    call: { url: 'https://a.test/v1/messages', headers: {}, body: '{"model":"claude-haiku-4-5"}' },
    attribution: {
      requested_model: 'fast',
      model: model.id,
      provider: 'anthropic',
      gateway_key_id: 'gk_1',
      inbound_shape: 'anthropic' as const,
      user_id: null,
      team_id: null,
      parent_session_id: null,
    },
    stream: false,
    turnId: 'turn_1',
    signal,
  });
  const ofType = (type: string) => events.filter((e) => e.type === type);
  return { deps, input, upstream, sleeps, events, ofType };
}

const rateLimited = { status: 429, headers: { 'retry-after': '2' }, body: '{"type":"error","error":{}}' };

test('a 429 with retry-after is retried after the hinted delay and the call completes priced', async () => {
  const s = setup([rateLimited, { status: 200, body: '{}' }]);
  const open = await openLlmCall(s.deps, s.input());
  assert.equal(open.attempts, 2);
  assert.deepEqual(s.sleeps, [2000]);
  assert.equal(s.upstream.sent.length, 2);
  assert.equal(s.upstream.sent[0].body, s.upstream.sent[1].body, 'the same bytes on every attempt');
  const { cost } = open.complete({
    usage: { input_tokens: 1000, output_tokens: 100, cached_input_tokens: 0, cache_creation_input_tokens: 0 },
    stopReason: 'end_turn',
  });
  assert.equal(cost.cost_usd, '0.001500'); // haiku 4.5: 1000 × 1e-6 + 100 × 5e-6
  const [completed] = s.ofType('llm.call_completed');
  assert.equal(completed.payload.attempts, 2);
  assert.equal(completed.payload.cost_usd, '0.001500');
  assert.equal(completed.parent_event_id, s.ofType('llm.call_started')[0].id);
  assert.throws(() => open.complete({ usage: completed.payload as never, stopReason: null }), /closed/);
});

test('retries stop after maxRetries; the failure is published once with its class', async () => {
  const overloaded = { status: 529, body: '{"type":"error","error":{"type":"overloaded_error"}}' };
  const s = setup([overloaded, overloaded, overloaded, overloaded]);
  await assert.rejects(openLlmCall(s.deps, s.input()), (err: unknown) => {
    assert.ok(err instanceof LlmCallFailed);
    assert.equal(err.toSvcError().code, 'upstream_overloaded');
    assert.equal(err.toSvcError().status, 503);
    // no provider hint: the client is told the backoff the gateway's next retry would have used
    assert.equal(err.toSvcError().details?.retry_after_ms, resolveClientRetryHint(DEFAULT_RETRY_POLICY, 3));
    return true;
  });
  assert.equal(s.upstream.sent.length, 3);
  const failed = s.ofType('llm.call_failed');
  assert.equal(failed.length, 1);
  assert.equal(failed[0].payload.error_class, 'overloaded');
  assert.equal(failed[0].payload.attempts, 3);
  assert.equal(s.ofType('llm.call_completed').length, 0);
});

test('a 400 and a 401 are never retried', async () => {
  for (const [status, code] of [
    [400, 'upstream_invalid_request'],
    [401, 'upstream_auth_failed'],
  ] as const) {
    const s = setup([{ status, body: '{"type":"error","error":{"message":"nope"}}' }]);
    await assert.rejects(
      openLlmCall(s.deps, s.input()),
      (err: unknown) => err instanceof LlmCallFailed && err.toSvcError().code === code,
    );
    assert.equal(s.upstream.sent.length, 1);
  }
});

test('a hint above 30 s is not waited for', async () => {
  const s = setup([{ status: 429, headers: { 'retry-after': '31' }, body: '{}' }]);
  await assert.rejects(openLlmCall(s.deps, s.input()), LlmCallFailed);
  assert.deepEqual(s.sleeps, []);
  assert.equal(s.upstream.sent.length, 1);
});

test('a spent retry budget answers with the first failure', async () => {
  const budget = { recordRequest() {}, tryAcquire: () => false };
  const s = setup([rateLimited, { status: 200 }], { retryBudget: budget });
  await assert.rejects(openLlmCall(s.deps, s.input()), LlmCallFailed);
  assert.equal(s.upstream.sent.length, 1);
});

test('a client that leaves during a backoff closes the call as cancelled with no usage', async () => {
  const controller = new AbortController();
  const s = setup([rateLimited], {
    sleep: (_ms, signal) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason));
        controller.abort();
      }),
  });
  await assert.rejects(
    openLlmCall(s.deps, s.input(controller.signal)),
    (err: unknown) => err instanceof LlmCallFailed && err.failure.error_class === 'cancelled',
  );
  const [completed] = s.ofType('llm.call_completed');
  assert.equal(completed.payload.error_class, 'cancelled');
  assert.equal(completed.payload.output_tokens, 0);
  assert.equal(s.ofType('llm.call_failed').length, 0);
});

test('a connection error is retried; a model without prices is stamped loudly, not silently $0', async () => {
  const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
  const unpriced = { ...model, prices: undefined } as unknown as typeof model;
  const s = setup([reset, { status: 200, body: '{}' }]);
  const open = await openLlmCall(s.deps, { ...s.input(), model: { ...unpriced, id: 'anthropic:nope' } });
  assert.equal(open.attempts, 2);
  open.complete({
    usage: { input_tokens: 5, output_tokens: 5, cached_input_tokens: 0, cache_creation_input_tokens: 0 },
    stopReason: 'end_turn',
  });
  const [completed] = s.ofType('llm.call_completed');
  assert.equal(completed.payload.cost_usd, '0');
  assert.equal(completed.payload.priced, false);
  assert.equal(completed.payload.pricing_warning, 'model_unpriced');
});

test('a stream whose upstream never reported usage is stamped usage_missing, not a silent $0', async () => {
  const s = setup([{ status: 200, body: '{}' }]);
  const open = await openLlmCall(s.deps, s.input());
  open.complete({
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      cached_input_tokens: 0,
      cache_creation_input_tokens: 0,
      missing: true,
    },
    stopReason: 'end_turn',
  });
  const [completed] = s.ofType('llm.call_completed');
  assert.equal(completed.payload.usage_missing, true);
  assert.equal(completed.payload.pricing_warning, 'usage_missing');
  assert.equal(completed.payload.cost_usd, '0.000000');
});

test('an error body over 1 MiB is not read whole: the failure is classified by its status alone', async () => {
  const huge = JSON.stringify({
    type: 'error',
    error: { type: 'invalid_request_error', message: 'x'.repeat(2 ** 21) },
  });
  const s = setup([{ status: 400, body: huge }]);
  await assert.rejects(openLlmCall(s.deps, s.input()), (err: unknown) => {
    assert.ok(err instanceof LlmCallFailed);
    assert.equal(err.failure.error_class, 'invalid_request');
    assert.equal(err.failure.message, 'upstream returned HTTP 400');
    return true;
  });
  const small = JSON.stringify({
    type: 'error',
    error: { type: 'invalid_request_error', message: 'bad field' },
  });
  const t = setup([{ status: 400, body: small }]);
  await assert.rejects(openLlmCall(t.deps, t.input()), (err: unknown) => {
    assert.ok(err instanceof LlmCallFailed);
    assert.equal(err.failure.message, 'bad field');
    return true;
  });
});

test('a client that leaves after a stream answered 200, before its first event, is billed the input estimate', async () => {
  // the provider answered the head and is reading the prompt (a long prompt can take seconds before the first
  // token): it bills that input, so the cancelled call is not recorded at $0 (README §Streaming)
  const controller = new AbortController();
  const silent = new Readable({ read() {} });
  // as undici does: the request's abort destroys the body being read
  controller.signal.addEventListener('abort', () =>
    silent.destroy(Object.assign(new Error('Request aborted'), { code: 'UND_ERR_ABORTED' })),
  );
  const upstream: Upstream = {
    async send() {
      queueMicrotask(() => controller.abort());
      return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: silent };
    },
    close: async () => {},
  };
  const s = setup([], { upstream });
  await assert.rejects(
    openLlmCall(s.deps, { ...s.input(controller.signal), stream: true, inputTokensEstimate: 1200 }),
    (err: unknown) => err instanceof LlmCallFailed && err.failure.error_class === 'cancelled',
  );
  const [completed] = s.ofType('llm.call_completed');
  assert.equal(completed.payload.error_class, 'cancelled');
  assert.equal(completed.payload.input_tokens, 1200);
  assert.equal(completed.payload.usage_estimated, true);
  assert.equal(completed.payload.cost_usd, '0.001200'); // haiku 4.5: 1200 × 1e-6
  assert.equal(s.ofType('llm.call_failed').length, 0);
});

test('a 200 body cut short right after a nested object is retried like any cut-short body; a whole malformed one is not', async () => {
  // a chunked body closed cleanly at a `}` of a nested object: its last character is the object's end, yet the
  // answer's JSON is not whole (before: taken for a whole malformed body, not retried, not billed)
  const whole = '{"id":"msg_1","type":"message","content":[{"type":"text","text":"hi"}]}';
  const cut = whole.slice(0, whole.indexOf('}') + 1);
  const s = setup([
    { status: 200, body: cut },
    { status: 200, body: whole },
  ]);
  const open = await openLlmCall(s.deps, { ...s.input(), bodyMaxBytes: 1 << 20, inputTokensEstimate: 100 });
  assert.equal(open.attempts, 2);
  assert.deepEqual(open.json, JSON.parse(whole));
  // a body that is whole but no JSON (balanced, an unquoted value) is the decoder's 502: one attempt
  const malformed = setup([{ status: 200, body: '{"id":"msg_1","malformed": oops}' }]);
  const once = await openLlmCall(malformed.deps, { ...malformed.input(), bodyMaxBytes: 1 << 20 });
  assert.equal(once.attempts, 1);
  assert.equal(once.json, undefined);
});

test("a head waited for all the call's time left is one attempt, however early undici's coarse timer fired", async () => {
  // undici counts a headersTimeout of a second or more in half-second ticks and can fire up to a tick early:
  // the attempt was given all the time left, so the call's time is spent, and a hang is not retried
  const headTimeout = () =>
    Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' });
  const s = setup([headTimeout(), { status: 200, body: '{}' }], { totalTimeoutMs: 60_000 });
  await assert.rejects(openLlmCall(s.deps, s.input()), (err: unknown) => {
    assert.ok(err instanceof LlmCallFailed);
    assert.equal(err.toSvcError().code, 'upstream_timeout');
    return true;
  });
  assert.equal(s.upstream.sent.length, 1);
  assert.equal(s.upstream.sent[0].headersTimeoutMs! > 59_000, true, 'the attempt was given the time left');
  // without a total time the head's timeout is the transport's own, and a retry may still answer
  const open = setup([headTimeout(), { status: 200, body: '{}' }]);
  await openLlmCall(open.deps, open.input()).catch(() => undefined);
  assert.equal(open.upstream.sent.length, 2);
});

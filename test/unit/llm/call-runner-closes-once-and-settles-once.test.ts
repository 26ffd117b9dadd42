import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import v8 from 'node:v8';
import { createAnthropicAdapter } from '#src/adapters/registry.ts';
import { emptyUsage } from '#src/canonical/response.ts';
import type { CanonicalStreamEvent } from '#src/canonical/stream.ts';
import { createBus } from '#src/events/bus.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';
import { type Decimal, formatDecimal } from '#src/lib/decimal.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { LlmCallFailed } from '#src/llm/call.ts';
import { createRetryBudget, DEFAULT_RETRY_POLICY } from '#src/llm/retry.ts';
import { type CallScope, createCallRunner, type Hold } from '#src/llm/runner.ts';
import type { Upstream, UpstreamResponse } from '#src/llm/upstream.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { loadRoutingPolicy } from '#src/routing/load-policy.ts';
import { describeRequest } from '#src/routing/request-facts.ts';
import { ANTHROPIC_TOOL_STREAM as FIXTURE } from '../../helpers/sse-fixtures.ts';

const ANTHROPIC_TOOL_STREAM = FIXTURE.split('\n');

const registry = loadModelRegistry(undefined);
const policy = loadRoutingPolicy({ path: undefined, registry, log: silentLogger });
const adapter = createAnthropicAdapter({ baseUrl: 'https://a.test', apiKey: 'k' });

type Answer = { status: number; body: string | AsyncIterable<Uint8Array> };

function setup(answers: Answer[], adapters: Record<string, typeof adapter> = { anthropic: adapter }) {
  const events: Array<EventEnvelope & { payload: Record<string, any> }> = [];
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const committed: string[] = [];
  bus.subscribe({
    name: 'recorder',
    durable: true,
    handle: async (e) => {
      events.push(e as never);
      await new Promise((r) => setTimeout(r, 5));
      committed.push(e.type);
    },
  });
  const upstream: Upstream = {
    async send(req) {
      const a = answers.shift() ?? { status: 500, body: '{}' };
      if (req.signal?.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
      const stream =
        typeof a.body === 'string' ? Readable.from([Buffer.from(a.body)]) : Readable.from(a.body);
      const body = Object.assign(stream, { text: async () => (typeof a.body === 'string' ? a.body : '') });
      return { status: a.status, headers: {}, body } as unknown as UpstreamResponse;
    },
    close: async () => {},
  };
  const runner = createCallRunner({
    bus,
    registry,
    policy,
    adapters,
    llm: {
      bus,
      clock: systemClock,
      log: silentLogger,
      upstream,
      registry,
      retryPolicy: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
      retryBudget: createRetryBudget(),
    },
  });
  const holds: string[] = [];
  const hold: Hold = {
    settle: (c: Decimal) => void holds.push(`settle ${formatDecimal(c)}`),
    release: () => void holds.push('release'),
  };
  return {
    runner,
    events,
    holds,
    hold,
    committed,
    ofType: (t: string) => events.filter((e) => e.type === t),
  };
}

const scope = (actor: 'gateway' | 'agent'): CallScope => ({
  actor,
  turnId: 'turn_1',
  sessionId: actor === 'agent' ? 'sess_1' : null,
  gatewayKeyId: actor === 'gateway' ? 'gk_1' : null,
  inboundShape: actor === 'gateway' ? 'anthropic' : null,
  userId: null,
  teamId: null,
  parentSessionId: null,
});

function route(s: ReturnType<typeof setup>, actor: 'gateway' | 'agent', model = 'fast') {
  const facts = describeRequest(
    {
      model,
      system: [],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      stream: true,
      include_usage: true,
    },
    { workspacePath: null },
  );
  return s.runner.route({ facts, scope: scope(actor) });
}

async function* sse(lines: string[], pauseAfter?: number) {
  let n = 0;
  for (const line of lines) {
    if (pauseAfter !== undefined && n++ === pauseAfter) await new Promise((r) => setTimeout(r, 200));
    yield Buffer.from(`${line}\n`);
  }
}

const call = { url: 'https://a.test/v1/messages', headers: {}, body: '{}' };

test('route publishes route.decided with the caller scope and resolves the adapter and upstream model', () => {
  const s = setup([]);
  const routed = route(s, 'agent');
  assert.equal(routed.model.id, 'anthropic:claude-haiku-4-5');
  assert.equal(routed.upstreamModel, 'claude-haiku-4-5');
  const [decided] = s.ofType('route.decided');
  assert.equal(decided.session_id, 'sess_1');
  assert.equal(decided.actor, 'router');
  assert.equal(decided.payload.gateway_key_id, null);
  assert.equal(decided.payload.chosen_model, 'anthropic:claude-haiku-4-5');
});

test('a model nobody serves: route.decided with winner -1, then the chain error is thrown', () => {
  const s = setup([], {});
  assert.throws(() => route(s, 'gateway'), { code: 'routing_failed' });
  assert.equal(s.ofType('route.decided')[0].payload.winner_index, -1);
});

test('a failed start releases the hold once and publishes llm.call_failed once', async () => {
  const s = setup([
    { status: 400, body: '{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}' },
  ]);
  const routed = route(s, 'gateway');
  await assert.rejects(
    s.runner.start({
      routed,
      call,
      stream: false,
      scope: scope('gateway'),
      requestedModel: 'fast',
      signal: new AbortController().signal,
      hold: s.hold,
    }),
    (err) => err instanceof LlmCallFailed,
  );
  assert.deepEqual(s.holds, ['release']);
  assert.equal(s.ofType('llm.call_failed').length, 1);
});

test('complete settles the hold with the priced cost and a second close throws', async () => {
  const s = setup([{ status: 200, body: '{}' }]);
  const routed = route(s, 'gateway');
  const running = await s.runner.start({
    routed,
    call,
    stream: false,
    scope: scope('gateway'),
    requestedModel: 'fast',
    signal: new AbortController().signal,
    hold: s.hold,
  });
  const usage = {
    input_tokens: 1000,
    output_tokens: 100,
    cached_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  running.complete({ usage, stopReason: 'end_turn' });
  assert.deepEqual(s.holds, ['settle 0.001500']);
  assert.equal(formatDecimal(running.spent()), '0.001500');
  assert.throws(
    () =>
      running.fail({
        error_class: 'server_error',
        code: 'upstream_error',
        status: null,
        message: 'x',
        retryable: false,
      }),
    /closed/,
  );
  assert.throws(() => running.cancel(usage, null), /closed/);
  assert.equal(s.ofType('llm.call_completed').length, 1);
  assert.equal(s.ofType('llm.call_failed').length, 0);
});

// A getter in the running call's object literal (a new closure per call) put every call's object in V8's
// dictionary mode, and each call's objects (request, events, answer) then outlived the scavenges until the
// next full GC: ~14 KiB promoted to the old generation per gateway request (README §Performance).
test('running calls are plain objects of one shape: closed is a data property that complete sets', async () => {
  v8.setFlagsFromString('--allow-natives-syntax');
  const sameFastShape = new Function('a', 'b', 'return %HasFastProperties(a) && %HaveSameMap(a, b)');
  const s = setup([
    { status: 200, body: '{}' },
    { status: 200, body: '{}' },
  ]);
  const start = () =>
    s.runner.start({
      routed: route(s, 'gateway'),
      call,
      stream: false,
      scope: scope('gateway'),
      requestedModel: 'fast',
      signal: new AbortController().signal,
      hold: s.hold,
    });
  const [a, b] = [await start(), await start()];
  assert.equal(sameFastShape(a, b), true);
  assert.equal(a.closed, false);
  a.complete({ usage: emptyUsage(), stopReason: 'end_turn' });
  assert.equal(a.closed, true);
  assert.equal(b.closed, false);
});

// PostgreSQL writes a settlement after the call closes: the answer (sent once `committed` settles) waited
// only for the trace, so the client's next request could be checked against a spend without this call
test('a closing commit waits for the hold to be written too (settled, or released on a failure)', async () => {
  const s = setup([
    { status: 200, body: '{}' },
    { status: 200, body: '{}' },
  ]);
  const usage = {
    input_tokens: 1000,
    output_tokens: 100,
    cached_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  const failure = {
    error_class: 'server_error' as const,
    code: 'upstream_error' as const,
    status: null,
    message: 'x',
    retryable: false,
  };
  for (const close of ['complete', 'fail'] as const) {
    let write!: () => void;
    const written = new Promise<void>((r) => (write = r));
    const running = await s.runner.start({
      routed: route(s, 'gateway'),
      call,
      stream: false,
      scope: scope('gateway'),
      requestedModel: 'fast',
      signal: new AbortController().signal,
      hold: { settle: () => written, release: () => written },
    });
    const published =
      close === 'complete'
        ? running.complete({ usage, stopReason: 'end_turn' }).published
        : running.fail(failure);
    let committed = false;
    void published.committed.then(() => (committed = true));
    const type = close === 'complete' ? 'llm.call_completed' : 'llm.call_failed';
    // the trace has the event, and everything its commit wakes has run
    while (!s.committed.includes(type)) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.equal(committed, false, `${close}: committed before the hold was written`);
    write();
    await published.committed;
  }
});

test('gateway order: llm.call_completed is committed before message.complete is yielded', async () => {
  const s = setup([{ status: 200, body: sse(ANTHROPIC_TOOL_STREAM) }]);
  const routed = route(s, 'gateway');
  const running = await s.runner.start({
    routed,
    call,
    stream: true,
    scope: scope('gateway'),
    requestedModel: 'fast',
    signal: new AbortController().signal,
    hold: s.hold,
  });
  let committedAtComplete = false;
  for await (const e of s.runner.streamEvents(running, new AbortController().signal)) {
    if (e.type === 'message.complete') committedAtComplete = s.committed.includes('llm.call_completed');
  }
  assert.equal(committedAtComplete, true, 'durable before the final event goes to the client');
  assert.equal(s.holds.length, 1);
  assert.match(s.holds[0], /^settle /);
});

test('agent order: message.complete is yielded first, the call closes when the next event is asked for', async () => {
  const s = setup([{ status: 200, body: sse(ANTHROPIC_TOOL_STREAM) }]);
  const routed = route(s, 'agent');
  const running = await s.runner.start({
    routed,
    call,
    stream: true,
    scope: scope('agent'),
    requestedModel: null,
    signal: new AbortController().signal,
  });
  const seen: string[] = [];
  for await (const e of s.runner.streamEvents(running, new AbortController().signal, {
    completeAfterYield: true,
  })) {
    seen.push(`${e.type}:${s.ofType('llm.call_completed').length}`);
  }
  assert.equal(seen.at(-1), 'message.complete:0', 'not even published when message.complete is handed out');
  assert.ok(s.committed.includes('llm.call_completed'), 'committed before the stream ends');
  assert.equal(s.ofType('llm.call_completed').length, 1);
  assert.equal(s.ofType('llm.call_completed')[0].actor, 'agent');
  assert.equal(s.ofType('llm.call_completed')[0].session_id, 'sess_1');
});

test('a stream that ends without its terminal event fails as server_error, after the failure is committed', async () => {
  const cut = ANTHROPIC_TOOL_STREAM.slice(0, 12);
  const s = setup([{ status: 200, body: sse(cut) }]);
  const routed = route(s, 'gateway');
  const running = await s.runner.start({
    routed,
    call,
    stream: true,
    scope: scope('gateway'),
    requestedModel: 'fast',
    signal: new AbortController().signal,
    hold: s.hold,
  });
  await assert.rejects(
    async () => {
      for await (const _ of s.runner.streamEvents(running, new AbortController().signal)) void _;
    },
    (err: { code: string; details: { error_class: string } }) =>
      err.code === 'upstream_error' && err.details.error_class === 'server_error',
  );
  const [failed] = s.ofType('llm.call_failed');
  assert.equal(s.ofType('llm.call_failed').length, 1);
  // message_start had reported the input, which the provider bills: priced on the event, and the hold
  // keeps that cost instead of being released
  assert.equal(failed.payload.input_tokens, 40);
  assert.equal(s.holds.length, 1);
  assert.equal(s.holds[0], `settle ${Number(failed.payload.cost_usd)}`);
  assert.ok(Number(failed.payload.cost_usd) > 0);
});

test('an abort: the gateway call closes itself as cancelled; the agent call waits for the caller', async () => {
  for (const actor of ['gateway', 'agent'] as const) {
    const s = setup([{ status: 200, body: sse(ANTHROPIC_TOOL_STREAM, 14) }]);
    const routed = route(s, actor);
    const ac = new AbortController();
    const running = await s.runner.start({
      routed,
      call,
      stream: true,
      scope: scope(actor),
      requestedModel: null,
      signal: ac.signal,
      hold: s.hold,
    });
    const events = s.runner.streamEvents(running, ac.signal, { completeAfterYield: actor === 'agent' });
    const got: CanonicalStreamEvent[] = [];
    try {
      for await (const e of events) {
        got.push(e);
        if (e.type === 'text.delta') ac.abort();
      }
    } catch {}
    if (actor === 'gateway') {
      const [done] = s.ofType('llm.call_completed');
      assert.equal(done.payload.error_class, 'cancelled');
      assert.equal(done.payload.input_tokens, 40);
    } else {
      assert.equal(running.closed, false, 'the agent loop publishes its cancellation events first');
      running.cancel(events.usage(), null);
      const [failed] = s.ofType('llm.call_failed');
      assert.equal(failed.payload.error_class, 'cancelled');
      assert.equal(failed.payload.input_tokens, 40);
      assert.ok(Number(failed.payload.cost_usd) > 0, 'the partial usage is priced');
    }
    assert.equal(s.holds.length, 1);
    assert.match(s.holds[0], /^settle /);
  }
});

/**
 * Upstream faults through the real gateway and the official SDKs (DECISIONS §4): retries before the first
 * byte, the error table's status and code in each path's own error body, mid-stream failures as an error
 * frame in the client's shape, and a client that leaves mid-stream closing the upstream connection. Every
 * request closes its call with exactly one llm.call_failed (or a cancelled llm.call_completed) and one
 * turn.completed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { billedInputTokens } from '../fake-provider/billing.ts';
import { type EventRow, readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';

const MAX_RETRIES = 2;
const OPENAI_MODEL = 'openai:gpt-5-mini';
const ANTHROPIC_MODEL = 'anthropic:claude-haiku-4-5';

type Shape = 'anthropic' | 'openai' | 'responses';

interface Outcome {
  status: number | undefined;
  /** The `error` object of the body in the path's shape. */
  error: Record<string, unknown> | undefined;
  headers: Headers | undefined;
  turnId: string | null;
}

/** One call through the official SDK of `shape`; the error normalised to its `error` object. */
async function call(
  stack: GatewayStack,
  shape: Shape,
  model: string,
  stream = false,
  text = 'hi',
): Promise<Outcome> {
  const messages = [{ role: 'user' as const, content: text }];
  try {
    const { response } =
      shape === 'anthropic'
        ? await stack.anthropic.messages.create({ model, max_tokens: 64, messages, stream }).withResponse()
        : shape === 'responses'
          ? await stack.openai.responses.create({ model, input: text, stream }).withResponse()
          : await stack.openai.chat.completions.create({ model, messages, stream }).withResponse();
    return {
      status: response.status,
      error: undefined,
      headers: response.headers,
      turnId: response.headers.get('svc-request-id'),
    };
  } catch (err) {
    return apiErrorOutcome(shape, err);
  }
}

function apiErrorOutcome(shape: Shape, err: unknown): Outcome {
  if (shape === 'anthropic') {
    assert.ok(err instanceof Anthropic.APIError, `not an Anthropic APIError: ${err}`);
    const body = err.error as { type?: string; error?: Record<string, unknown> } | undefined;
    assert.equal(body?.type, 'error', 'the messages path answers with the Anthropic error body');
    return {
      status: err.status,
      error: body?.error,
      headers: err.headers,
      turnId: err.headers?.get('svc-request-id') ?? null,
    };
  }
  assert.ok(err instanceof OpenAI.APIError, `not an OpenAI APIError: ${err}`);
  assert.equal(err.code, (err.error as { code?: string } | undefined)?.code);
  return {
    status: err.status,
    error: err.error as Record<string, unknown> | undefined,
    headers: err.headers,
    turnId: err.headers?.get('svc-request-id') ?? null,
  };
}

/** The events of one turn, by type. */
function turnEvents(stack: GatewayStack, turnId: string): Map<string, EventRow[]> {
  const byType = new Map<string, EventRow[]>();
  for (const e of readEvents(stack.files.db)) {
    if (e.turn_id !== turnId) continue;
    byType.set(e.type, [...(byType.get(e.type) ?? []), e]);
  }
  return byType;
}

/** Exactly one llm.call_failed and one turn.completed, and no completed call. */
function assertOneFailure(stack: GatewayStack, turnId: string, errorClass: string): EventRow {
  const events = turnEvents(stack, turnId);
  const failed = events.get('llm.call_failed') ?? [];
  assert.equal(failed.length, 1, 'one llm.call_failed');
  assert.equal(failed[0].payload.error_class, errorClass);
  assert.equal(events.get('llm.call_completed'), undefined, 'no llm.call_completed');
  assert.equal(events.get('turn.completed')?.length, 1, 'one turn.completed');
  return failed[0];
}

/** A streamed Responses call of `model` with plain fetch: the answer (200 checked) and its events' data. */
async function streamResponses(stack: GatewayStack, model: string, input = 'hi') {
  const res = await fetch(`${stack.gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, input }),
  });
  assert.equal(res.status, 200);
  const events = (await res.text())
    .trim()
    .split('\n\n')
    .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as Record<string, any>);
  return { res, events };
}

/** An SDK stream's event types up to its end, and the error it threw instead of ending, if any. */
async function readUntilError(stream: AsyncIterable<{ type: string }>) {
  const seen: string[] = [];
  try {
    for await (const e of stream) seen.push(e.type);
  } catch (err) {
    return { seen, err };
  }
  return { seen, err: undefined as unknown };
}

/**
 * A request text that asks the fake for `fault` and names the case, so that cases run at once (each waiting
 * out a backoff or a timeout) neither share a script queue nor count each other's upstream requests.
 */
function faultText(marker: string, fault: string): string {
  return `${marker} [[fake:${fault}]]`;
}

/** The upstream requests the fake received for the case `marker` (each attempt of its call). */
function attemptsOf(stack: GatewayStack, marker: string): number {
  return stack.fake.requests.filter((r) => JSON.stringify(r.body).includes(marker)).length;
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('upstream faults reach the SDKs in their own error shapes, retried only before the first byte', {
  timeout: 60_000,
  concurrency: true,
}, async (t) => {
  const stack = await startGatewayStack({
    env: {
      SVC_GATEWAY_MAX_RETRIES: String(MAX_RETRIES),
      // a call's total time: a hanging upstream costs this once (backoff of three attempts fits in it)
      SVC_GATEWAY_UPSTREAM_TIMEOUT_MS: '2000',
      SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS: '2000',
    },
  });
  t.after(() => stack.stop());
  const { fake } = stack;
  // while cases run at once (see `together`), none may clear what the fake recorded for the others
  let atOnce = false;
  t.beforeEach(() => {
    if (!atOnce) fake.reset();
  });
  /** Runs the cases at once: each waits out a backoff or a timeout, so together they take the longest. */
  const together = async (cases: [string, () => Promise<void>][]) => {
    fake.reset();
    atOnce = true;
    try {
      await Promise.all(cases.map(([name, fn]) => t.test(name, fn)));
    } finally {
      atOnce = false;
    }
  };

  await t.test(
    'a 200 that opens with overloaded_error once is retried, and the retry streams the answer',
    async () => {
      fake.script(['stream-error=529;stream-error-after=0']);
      const stream = await stack.anthropic.messages.create({
        model: ANTHROPIC_MODEL,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      const types: string[] = [];
      for await (const e of stream) types.push(e.type);
      assert.equal(types[0], 'message_start');
      assert.equal(types.at(-1), 'message_stop');
      assert.equal(fake.requests.length, 2, 'the first attempt and the retry');
    },
  );

  await t.test(
    'a non-streaming answer cut while its body arrives is retried: nothing reached the client yet',
    async () => {
      for (const shape of ['anthropic', 'openai'] as const) {
        fake.reset();
        fake.script(['reset-after=3']);
        const o = await call(stack, shape, shape === 'anthropic' ? ANTHROPIC_MODEL : OPENAI_MODEL);
        assert.equal(o.status, 200, shape);
        assert.equal(fake.requests.length, 2, `${shape}: the cut attempt and the retry`);
        const events = turnEvents(stack, o.turnId!);
        assert.equal(events.get('llm.call_completed')![0].payload.attempts, 2);
        assert.equal(events.get('llm.call_failed'), undefined);
      }
    },
  );

  await t.test('a 429 with retry-after is waited for and the retry answers once', async () => {
    fake.script(['error=429;retry-after=1']); // the retry repeats the request: only a script can answer it
    const o = await call(stack, 'openai', OPENAI_MODEL);
    assert.equal(o.status, 200);
    assert.equal(fake.requests.length, 2, 'the fake saw the first attempt and the retry');
    const events = turnEvents(stack, o.turnId!);
    assert.equal(events.get('llm.call_completed')?.length, 1);
    assert.equal(events.get('llm.call_completed')![0].payload.attempts, 2);
    assert.equal(events.get('llm.call_failed'), undefined);
    assert.equal(events.get('turn.completed')?.length, 1);
  });

  await t.test(
    'answers sent gzip-encoded (no Accept-Encoding asked otherwise) are decoded, streams too',
    async () => {
      for (const [shape, model] of [
        ['anthropic', ANTHROPIC_MODEL],
        ['openai', OPENAI_MODEL],
        ['responses', OPENAI_MODEL],
      ] as const) {
        for (const stream of [false, true]) {
          const text = `hi [[fake:gzip;text=unzipped ${shape}]]`;
          const got =
            shape === 'anthropic'
              ? await stack.anthropic.messages.create({
                  model,
                  max_tokens: 64,
                  messages: [{ role: 'user', content: text }],
                })
              : shape === 'openai'
                ? await stack.openai.chat.completions.create({
                    model,
                    messages: [{ role: 'user', content: text }],
                  })
                : await stack.openai.responses.create({ model, input: text });
          if (!stream) {
            assert.match(
              JSON.stringify(got),
              new RegExp(`unzipped ${shape}`),
              `${shape}: the decoded answer`,
            );
            continue;
          }
          const deltas: string[] = [];
          if (shape === 'anthropic') {
            const s = stack.anthropic.messages.stream({
              model,
              max_tokens: 64,
              messages: [{ role: 'user', content: text }],
            });
            s.on('text', (d) => deltas.push(d));
            await s.finalMessage();
          } else if (shape === 'openai') {
            const s = await stack.openai.chat.completions.create({
              model,
              messages: [{ role: 'user', content: text }],
              stream: true,
            });
            for await (const c of s) deltas.push(c.choices[0]?.delta?.content ?? '');
          } else {
            const s = await stack.openai.responses.create({ model, input: text, stream: true });
            for await (const e of s) if (e.type === 'response.output_text.delta') deltas.push(e.delta);
          }
          assert.equal(deltas.join(''), `unzipped ${shape}`, `${shape}: the decoded stream`);
        }
      }
      // an error answer is decoded too: its message reaches the client
      fake.script(['error=400;message=zipped refusal;gzip']);
      const o = await call(stack, 'openai', OPENAI_MODEL);
      assert.equal(o.status, 400);
      assert.match(String(o.error?.message), /zipped refusal/);
    },
  );

  const table: Array<{
    name: string;
    shape: Shape;
    model: string;
    fault: string;
    /** Asked as a stream: the failure still comes before the first byte, as an HTTP error. */
    stream?: boolean;
    status: number;
    code: string;
    errorClass: string;
    attempts: number;
  }> = [
    {
      name: 'a 529 storm is 503 upstream_overloaded after every retry',
      shape: 'anthropic',
      model: ANTHROPIC_MODEL,
      fault: 'error=529',
      stream: true,
      status: 503,
      code: 'upstream_overloaded',
      errorClass: 'overloaded',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: 'a 500 storm is 502 upstream_error after every retry',
      shape: 'openai',
      model: OPENAI_MODEL,
      fault: 'error=500',
      stream: true,
      status: 502,
      code: 'upstream_error',
      errorClass: 'server_error',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: 'a 500 storm from an OpenAI upstream reaches an Anthropic client as 502 upstream_error',
      shape: 'anthropic',
      model: OPENAI_MODEL,
      fault: 'error=500',
      status: 502,
      code: 'upstream_error',
      errorClass: 'server_error',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: 'an upstream 401 is 502 upstream_auth_failed, never retried',
      shape: 'openai',
      model: OPENAI_MODEL,
      fault: 'error=401',
      status: 502,
      code: 'upstream_auth_failed',
      errorClass: 'authentication',
      attempts: 1,
    },
    {
      name: 'an upstream 401 on the messages path is 502 upstream_auth_failed, never retried',
      shape: 'anthropic',
      model: ANTHROPIC_MODEL,
      fault: 'error=401',
      status: 502,
      code: 'upstream_auth_failed',
      errorClass: 'authentication',
      attempts: 1,
    },
    {
      name: 'an upstream 400 is 400 upstream_invalid_request keeping the upstream message',
      shape: 'anthropic',
      model: ANTHROPIC_MODEL,
      fault: 'error=400;message=max_tokens: 999999 is too large for this model',
      status: 400,
      code: 'upstream_invalid_request',
      errorClass: 'invalid_request',
      attempts: 1,
    },
    {
      name: 'an upstream 400 on the chat path keeps the upstream message',
      shape: 'openai',
      model: OPENAI_MODEL,
      fault: 'error=400;message=max_tokens: 999999 is too large for this model',
      status: 400,
      code: 'upstream_invalid_request',
      errorClass: 'invalid_request',
      attempts: 1,
    },
    {
      // a base URL that redirects (http:// for https://, a moved path): the gateway never follows it (the
      // provider key would go to a host the operator did not name), and the client's request is not at fault
      name: "an upstream redirect is 502 upstream_error, never the client's 400, and not retried",
      shape: 'anthropic',
      model: ANTHROPIC_MODEL,
      fault: 'redirect',
      status: 502,
      code: 'upstream_error',
      errorClass: 'server_error',
      attempts: 1,
    },
    {
      name: 'a retry-after above 30 s is not waited for: 429 upstream_rate_limited at once',
      shape: 'openai',
      model: OPENAI_MODEL,
      fault: 'error=429;retry-after=60',
      status: 429,
      code: 'upstream_rate_limited',
      errorClass: 'rate_limit',
      attempts: 1,
    },
    {
      name: 'a 200 whose first event is overloaded_error is retried, then 503 upstream_overloaded, never a 200',
      shape: 'anthropic',
      model: ANTHROPIC_MODEL,
      fault: 'stream-error=529;stream-error-after=0',
      stream: true,
      status: 503,
      code: 'upstream_overloaded',
      errorClass: 'overloaded',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: 'an Anthropic 200 opening with overloaded_error reaches an OpenAI client as an HTTP 503 after the retries',
      shape: 'openai',
      model: ANTHROPIC_MODEL,
      fault: 'stream-error=529;stream-error-after=0',
      stream: true,
      status: 503,
      code: 'upstream_overloaded',
      errorClass: 'overloaded',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: 'an OpenAI 200 opening with an error chunk is retried like an HTTP error',
      shape: 'openai',
      model: OPENAI_MODEL,
      fault: 'stream-error=500;stream-error-after=0',
      stream: true,
      status: 502,
      code: 'upstream_error',
      errorClass: 'server_error',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: "a Responses stream whose first events are the API's overload error is retried, then 503 upstream_overloaded",
      shape: 'responses',
      model: OPENAI_MODEL,
      // as the API fails: response.created, response.in_progress, then error {type: service_unavailable_error,
      // code: server_is_overloaded} and response.failed, before any output
      fault: 'stream-error=529',
      stream: true,
      status: 503,
      code: 'upstream_overloaded',
      errorClass: 'overloaded',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: "a Responses stream whose first events are the API's rate-limit error is 429 upstream_rate_limited after the retries",
      shape: 'responses',
      model: OPENAI_MODEL,
      fault: 'stream-error=429',
      stream: true,
      status: 429,
      code: 'upstream_rate_limited',
      errorClass: 'rate_limit',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: "an upstream that never answers is 504 upstream_timeout once the call's total time is spent, with no retry after it",
      shape: 'anthropic',
      model: ANTHROPIC_MODEL,
      fault: 'hang',
      status: 504,
      code: 'upstream_timeout',
      errorClass: 'timeout',
      attempts: 1,
    },
  ];

  const rowCase = (row: (typeof table)[number], i: number): [string, () => Promise<void>] => [
    row.name,
    async () => {
      const marker = `<row ${i}>`;
      const authFailuresBefore = readEvents(stack.files.db, 'gateway.auth_failed').length;
      const o = await call(stack, row.shape, row.model, row.stream, faultText(marker, row.fault));
      assert.equal(o.status, row.status);
      assert.equal(o.error?.code, row.code);
      assert.equal(typeof o.error?.message, 'string');
      assert.ok(o.turnId, 'svc-request-id on the error answer');
      assert.equal(attemptsOf(stack, marker), row.attempts, 'upstream attempts');
      const failed = assertOneFailure(stack, o.turnId, row.errorClass);
      assert.equal(failed.payload.attempts, row.attempts);
      assert.equal(failed.payload.code, row.code);
      if (row.shape === 'responses' && row.stream) {
        // each attempt's response.failed, after its error event, stated the prompt it read: all billed
        const sent = stack.fake.requests.find((r) => JSON.stringify(r.body).includes(marker))!;
        const prompt = billedInputTokens('openai_responses', sent.body as Record<string, unknown>);
        assert.equal(failed.payload.input_tokens, row.attempts * prompt);
        assert.equal(failed.payload.usage_estimated, undefined, 'as stated, not estimated');
      }
      if (row.code === 'upstream_invalid_request') {
        assert.match(String(o.error?.message), /max_tokens: 999999 is too large for this model/);
      }
      if (row.code === 'upstream_rate_limited' || row.code === 'upstream_overloaded') {
        assert.equal(o.headers?.get('x-should-retry'), 'true', 'a wait can help');
        assert.match(o.headers?.get('retry-after') ?? '', /^\d+$/);
      }
      if (row.fault === 'redirect') {
        assert.equal(o.headers?.get('x-should-retry'), 'false', 'the same redirect comes again');
        assert.match(String(o.error?.message), /redirect \(HTTP 301\).*base URL/);
      }
      if (row.fault.includes('retry-after=60')) {
        assert.equal(o.headers?.get('retry-after'), '60', 'the hint is forwarded');
      }
      if (row.code === 'upstream_auth_failed') {
        assert.notEqual(o.error?.type, 'authentication_error', "not the client's auth failure");
        assert.equal(readEvents(stack.files.db, 'gateway.auth_failed').length, authFailuresBefore);
      }
    },
  ];

  // the faults that wait (a backoff, a timeout) run at once; every retry among them and the cases above
  // stays within the gateway's global retry budget (20 in 10 s)
  await together([
    ...table.map(rowCase),
    [
      'a stream that falls silent mid-answer ends at the idle timeout: upstream_timeout, then response.failed',
      async () => {
        // Anthropic upstream, Responses client: message_start, the text block, a ping and one delta, then nothing
        const { res, events } = await streamResponses(
          stack,
          ANTHROPIC_MODEL,
          faultText('<stall>', 'stall-after=4'),
        );
        assert.ok(
          events.some((e) => e.type === 'response.output_text.delta'),
          'the delta before the silence',
        );
        const [error, failed] = events.slice(-2);
        assert.equal(error.type, 'error');
        assert.equal(error.error.code, 'upstream_timeout');
        assert.equal(failed.type, 'response.failed');
        assert.equal(failed.response.error.code, 'server_error');
        assert.equal(attemptsOf(stack, '<stall>'), 1, 'no retry after the first byte');
        const call = assertOneFailure(stack, res.headers.get('svc-request-id')!, 'timeout');
        assert.equal(call.payload.code, 'upstream_timeout');
        // message_start stated the input: the broken call is billed for it and for the delta sent
        assert.ok(Number(call.payload.output_tokens) > 0, 'the delta sent is billed');
      },
    ],
  ]);

  await t.test(
    "a provider's x-should-retry: false is obeyed: no retry, and the client is told the same",
    async () => {
      for (const [shape, model, fault, status] of [
        ['anthropic', ANTHROPIC_MODEL, 'error=429;should-retry=false', 429],
        ['openai', OPENAI_MODEL, 'error=503;should-retry=false', 503],
        ['openai', ANTHROPIC_MODEL, 'error=529;should-retry=false', 503],
      ] as const) {
        fake.reset();
        fake.setDefault(fault);
        const o = await call(stack, shape, model);
        fake.setDefault(undefined);
        assert.equal(o.status, status, `${shape} → ${model}: ${fault}`);
        assert.equal(fake.requests.length, 1, 'the gateway does not retry what the provider says not to');
        // an SDK (and Claude Code) obeys x-should-retry before the status: true would retry what cannot help
        assert.equal(o.headers?.get('x-should-retry'), 'false', `${shape} → ${model}: ${fault}`);
        assert.equal(o.headers?.get('retry-after'), null, 'no invented wait for an answer not to retry');
        assertOneFailure(stack, o.turnId!, status === 429 ? 'rate_limit' : 'overloaded');
      }
    },
  );

  await t.test('a reset mid-stream ends the Anthropic stream with an error event', async () => {
    fake.script(['reset-after=3']);
    const { data: stream, response } = await stack.anthropic.messages
      .create({
        model: ANTHROPIC_MODEL,
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    const { seen, err } = await readUntilError(stream);
    assert.ok(seen.includes('message_start'), 'frames before the reset reached the client');
    const o = apiErrorOutcome('anthropic', err);
    assert.equal(o.error?.code, 'upstream_error');
    assert.equal(fake.requests.length, 1, 'no retry after the first byte');
    assertOneFailure(stack, response.headers.get('svc-request-id')!, 'connection_error');
  });

  await t.test('a reset mid-stream ends the raw Anthropic SSE with an `event: error` frame', async () => {
    fake.script(['reset-after=3']);
    const res = await fetch(`${stack.gw.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': stack.token,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: ANTHROPIC_MODEL,
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    const last = text.trim().split('\n\n').at(-1)!;
    assert.match(last, /^event: error\ndata: /);
    const body = JSON.parse(last.slice(last.indexOf('data: ') + 6));
    assert.equal(body.type, 'error');
    assert.equal(body.error.code, 'upstream_error');
    assertOneFailure(stack, res.headers.get('svc-request-id')!, 'connection_error');
  });

  await t.test(
    'a reset mid-stream ends a same-wire Responses stream as a translated one ends: error, then response.failed',
    async () => {
      fake.script(['reset-after=4']);
      const { res, events } = await streamResponses(stack, OPENAI_MODEL);
      const created = events[0];
      assert.equal(created.type, 'response.created');
      const [error, failed] = events.slice(-2);
      assert.equal(error.type, 'error');
      assert.equal(error.code, 'upstream_error');
      // Codex reads response.failed: its error code, the response it belongs to, the items done so far
      assert.equal(failed.type, 'response.failed');
      assert.equal(failed.response.id, created.response.id);
      assert.equal(failed.response.model, OPENAI_MODEL, 'the requested model, as in every frame');
      assert.equal(failed.response.status, 'failed');
      assert.equal(failed.response.error.code, 'server_error');
      assert.match(failed.response.error.message, /closed the connection/);
      assert.deepEqual(
        events.map((e) => e.sequence_number),
        events.map((_, i) => i),
        'sequence numbers go on from the upstream frames',
      );
      assertOneFailure(stack, res.headers.get('svc-request-id')!, 'connection_error');
    },
  );

  await t.test(
    "the Responses API's in-stream overload and rate limit reach the SDK as raised and the trace by their class",
    async () => {
      for (const [fault, code, errorClass] of [
        // after the first text delta: the answer had begun
        ['stream-error=529;stream-error-after=5', 'upstream_overloaded', 'overloaded'],
        ['stream-error=429;stream-error-after=5', 'upstream_rate_limited', 'rate_limit'],
      ] as const) {
        fake.reset();
        fake.script([fault]);
        const { data: stream, response } = await stack.openai.responses
          .create({ model: OPENAI_MODEL, input: 'hi', stream: true })
          .withResponse();
        const { seen, err } = await readUntilError(stream);
        assert.ok(seen.includes('response.output_text.delta'), `${fault}: the answer had begun`);
        // the provider's own error event passes through as it sent it: the SDK raises it
        assert.ok(err instanceof OpenAI.APIError, `${fault}: not an APIError: ${err}`);
        assert.equal(fake.requests.length, 1, 'no retry after the first byte');
        const turnId = response.headers.get('svc-request-id')!;
        const failed = assertOneFailure(stack, turnId, errorClass);
        assert.equal(failed.payload.code, code, fault);
        assert.equal(turnEvents(stack, turnId).get('turn.completed')![0].payload.error_code, code);
      }
    },
  );

  await t.test('a reset mid-stream ends the OpenAI stream with an error chunk', async () => {
    fake.script(['reset-after=3']);
    const { data: stream, response } = await stack.openai.chat.completions
      .create({ model: OPENAI_MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    let chunks = 0;
    const err = await (async () => {
      try {
        for await (const _ of stream) chunks++;
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(chunks > 0, 'chunks before the reset reached the client');
    const o = apiErrorOutcome('openai', err);
    assert.equal(o.error?.code, 'upstream_error');
    assert.equal(fake.requests.length, 1, 'no retry after the first byte');
    assertOneFailure(stack, response.headers.get('svc-request-id')!, 'connection_error');
  });

  await t.test(
    'a client that leaves while the upstream hangs closes it and the call as cancelled',
    async () => {
      fake.script(['slow-headers=5000']);
      // Opening events may wait for their closing event before they are committed, so the newest
      // llm.call_started can still be the previous subtest's: only a turn id not seen before is this call.
      const earlier = new Set(readEvents(stack.files.db, 'llm.call_started').map((e) => e.turn_id));
      const controller = new AbortController();
      const answer = stack.anthropic.messages.create(
        { model: ANTHROPIC_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] },
        { signal: controller.signal },
      );
      await waitFor('the upstream request', () => (fake.requests.length === 1 ? true : undefined));
      controller.abort();
      await assert.rejects(answer, Anthropic.APIUserAbortError);
      await waitFor('the fake to see the upstream connection close', () => fake.requests[0].closedEarlyAt);
      const events = await waitFor('turn.completed', () => {
        const turnId = readEvents(stack.files.db, 'llm.call_started').find(
          (e) => !earlier.has(e.turn_id),
        )?.turn_id;
        const byType = turnId ? turnEvents(stack, turnId) : undefined;
        return byType?.get('turn.completed') ? byType : undefined;
      });
      assert.equal(fake.requests.length, 1, 'not retried');
      assert.equal(events.get('llm.call_failed'), undefined);
      assert.equal(events.get('llm.call_completed')?.length, 1);
      assert.equal(events.get('llm.call_completed')![0].payload.error_class, 'cancelled');
      const turn = events.get('turn.completed')!;
      assert.equal(turn.length, 1);
      assert.equal(turn[0].payload.status, 499);
      assert.equal(turn[0].payload.error_code, 'cancelled');
    },
  );

  const longText = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
  for (const shape of ['anthropic', 'openai'] as const) {
    await t.test(
      `a client of the ${shape} shape that leaves mid-stream closes the upstream and the call as cancelled`,
      async () => {
        fake.script([`drip=50;text=${longText};usage=in:123,out:60`]);
        const controller = new AbortController();
        const messages = [{ role: 'user' as const, content: 'hi' }];
        const { data: stream, response } =
          shape === 'anthropic'
            ? await stack.anthropic.messages
                .create(
                  { model: ANTHROPIC_MODEL, max_tokens: 256, stream: true, messages },
                  { signal: controller.signal },
                )
                .withResponse()
            : await stack.openai.chat.completions
                .create(
                  {
                    model: OPENAI_MODEL,
                    stream: true,
                    stream_options: { include_usage: true },
                    messages,
                  },
                  { signal: controller.signal },
                )
                .withResponse();
        const turnId = response.headers.get('svc-request-id')!;
        let seen = 0;
        // the SDK ends its iterator quietly when its own signal aborts
        for await (const _ of stream as AsyncIterable<unknown>) {
          if (++seen === 4) controller.abort();
        }
        // events that arrived in the chunk of the fourth may still be handed out; the call is cut all the same
        assert.ok(seen >= 4 && seen < 10, `saw ${seen} events`);
        const upstream = await waitFor('the fake to see the upstream connection close', () =>
          fake.requests.length === 1 && fake.requests[0].closedEarlyAt !== undefined
            ? fake.requests[0]
            : undefined,
        );
        assert.ok(upstream.closedEarlyAt! >= upstream.time);
        const completed = await waitFor('the cancelled llm.call_completed', () => {
          const events = turnEvents(stack, turnId);
          return events.get('turn.completed') ? events : undefined;
        });
        const calls = completed.get('llm.call_completed') ?? [];
        assert.equal(calls.length, 1, 'one llm.call_completed');
        assert.equal(completed.get('llm.call_failed'), undefined);
        assert.equal(completed.get('turn.completed')?.length, 1);
        const p = calls[0].payload;
        assert.equal(p.error_class, 'cancelled');
        assert.ok(Number(p.output_tokens) < 60, 'only the usage seen before the client left');
        // the Anthropic stream states the input usage in message_start; an OpenAI stream only at its end
        if (shape === 'anthropic') assert.equal(p.input_tokens, 123);
        assert.equal(completed.get('turn.completed')![0].payload.error_code, 'cancelled');
        // the request log line, written when the stream ended: its 200 was sent, and it says how it ended
        const line = await waitFor('the request log line', () =>
          stack.gw
            .output()
            .stdout.split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .find((l) => l.msg === 'request' && l.request_id === turnId),
        );
        assert.equal(line.status, 200, JSON.stringify(line));
        assert.equal(line.error_code, 'cancelled', JSON.stringify(line));
      },
    );
  }
});

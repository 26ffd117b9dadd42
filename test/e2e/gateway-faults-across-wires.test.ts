/**
 * Upstream faults across wires, the slice the other fault tests leave out (DECISIONS §4, README Streaming
 * and Retries and timeouts): a stream translated from another provider's wire that breaks after its first
 * byte (a reset, a silence past the idle timeout, a frame that is not JSON, an end without its terminal
 * event) ends in the client's own form (Messages `event: error`; Chat Completions an `error` chunk and no
 * `[DONE]`; Responses `error`, then `response.failed`, numbered on), is never retried, and closes with one
 * llm.call_failed priced on the usage seen; the Responses path's failures before the first byte answer in
 * the OpenAI error shape with the table's status, code and retry headers; and /metrics counts each failure
 * once by its class, its billed cost included. All cases run at once against one gateway.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';
import { createScraper } from '../helpers/prometheus-exposition.ts';
import { parseSseText } from '../helpers/sse-fixtures.ts';

const ANTHROPIC = 'anthropic:claude-haiku-4-5';
const OPENAI = 'openai:gpt-5-mini';
const OPENROUTER = 'openrouter:google/gemini-2.5-flash';

type Shape = 'anthropic' | 'openai' | 'responses';

interface Row {
  shape: Shape;
  model: string;
  fault: string;
  stream: boolean;
  /** The HTTP status; 200 for a failure after the first byte (then an error frame ends the stream). */
  status: number;
  code: string;
  errorClass: string;
  attempts: number;
  /** A failure before the first byte that the provider bills all the same (it answered 200). */
  billed?: boolean;
}

const RETRIES = 1;
/** Replaced by an HTTP date two seconds after the request is sent. */
const IN_2_S = '<http date in 2 s>';

const ROWS: Row[] = [
  // after the first byte: the stream ends in the client's shape, no retry
  ...(
    [
      ['anthropic', OPENAI, 'reset-after=4', 'upstream_error', 'connection_error'],
      ['openai', ANTHROPIC, 'reset-after=4', 'upstream_error', 'connection_error'],
      ['responses', OPENROUTER, 'reset-after=4', 'upstream_error', 'connection_error'],
      ['anthropic', OPENROUTER, 'stall-after=4', 'upstream_timeout', 'timeout'],
      ['openai', ANTHROPIC, 'stall-after=4', 'upstream_timeout', 'timeout'],
      // OpenRouter's keep-alive comments and never an event: no idle stream, but the head went on before a
      // first event, which the call's total time bounds (before: a 200 that held its client for ever)
      ['openai', OPENROUTER, 'processing', 'upstream_timeout', 'timeout'],
      ['anthropic', OPENROUTER, 'processing', 'upstream_timeout', 'timeout'],
      ['responses', OPENROUTER, 'processing', 'upstream_timeout', 'timeout'],
      ['responses', ANTHROPIC, 'malformed=3', 'upstream_error', 'server_error'],
      ['responses', OPENAI, 'malformed=3', 'upstream_error', 'server_error'],
      ['responses', ANTHROPIC, 'no-terminal', 'upstream_error', 'server_error'],
      // a clean end in the middle of a frame (half its JSON): the half frame never reaches the client, whose
      // stream still ends in its own shape, on the same wire and across wires
      ['anthropic', ANTHROPIC, 'cut-short', 'upstream_error', 'server_error'],
      ['openai', OPENAI, 'cut-short', 'upstream_error', 'server_error'],
      ['openai', OPENROUTER, 'cut-short', 'upstream_error', 'server_error'],
      ['responses', OPENAI, 'cut-short', 'upstream_error', 'server_error'],
      ['anthropic', OPENAI, 'cut-short', 'upstream_error', 'server_error'],
    ] as const
  ).map(([shape, model, fault, code, errorClass]) => ({
    shape,
    model,
    fault,
    stream: true,
    status: 200,
    code,
    errorClass,
    attempts: 1,
  })),
  // a first frame that is not JSON (the Responses API's response.created included): nothing was sent yet,
  // so the status is still the gateway's to choose, as for a 200 body that is not JSON (not retried)
  ...(
    [
      ['anthropic', ANTHROPIC],
      ['openai', OPENROUTER],
      ['responses', OPENAI],
    ] as const
  ).map(([shape, model]) => ({
    shape,
    model,
    fault: 'malformed=0',
    stream: true,
    status: 502,
    code: 'upstream_error',
    errorClass: 'server_error',
    attempts: 1,
  })),
  // a non-streaming 200 body lost on the way, by a reset or cut short by a clean early end (a chunked body
  // closed halfway): the same failure, a connection error before the first byte (retried), its input billed
  // on every attempt (before: the cut-short body was 502 server_error, not retried, not billed)
  ...(['reset-after=1', 'cut-short'] as const).map((fault) => ({
    shape: 'openai' as const,
    model: ANTHROPIC,
    fault,
    stream: false,
    status: 502,
    code: 'upstream_error',
    errorClass: 'connection_error',
    attempts: 1 + RETRIES,
    billed: true,
  })),
  // before the first byte on the Responses path: the error table, in the OpenAI error shape
  ...(
    [
      [ANTHROPIC, 'error=529', false, 503, 'upstream_overloaded', 'overloaded', 1 + RETRIES],
      [OPENAI, 'error=429;retry-after=1', true, 429, 'upstream_rate_limited', 'rate_limit', 1 + RETRIES],
      // retry-after as an HTTP date (RFC 9110), a second or two ahead when sent: waited for, then whole seconds
      [
        ANTHROPIC,
        `error=429;retry-after=${IN_2_S}`,
        false,
        429,
        'upstream_rate_limited',
        'rate_limit',
        1 + RETRIES,
      ],
      [OPENROUTER, 'error=500', false, 502, 'upstream_error', 'server_error', 1 + RETRIES],
      [ANTHROPIC, 'hang', true, 504, 'upstream_timeout', 'timeout', 1],
    ] as const
  ).map(([model, fault, stream, status, code, errorClass, attempts]) => ({
    shape: 'responses' as const,
    model,
    fault,
    stream,
    status,
    code,
    errorClass,
    attempts,
  })),
];

function post(stack: GatewayStack, row: Row, text: string): Promise<Response> {
  const path = { anthropic: '/v1/messages', openai: '/v1/chat/completions', responses: '/v1/responses' }[
    row.shape
  ];
  const body =
    row.shape === 'responses'
      ? { model: row.model, input: text, stream: row.stream }
      : { model: row.model, max_tokens: 64, stream: row.stream, messages: [{ role: 'user', content: text }] };
  return fetch(`${stack.gw.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.token}`,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
}

/** The stream's frames end as the client's shape ends a failed stream, naming `code`. */
function assertEndsInClientShape(row: Row, text: string): void {
  const frames = parseSseText(text);
  const last = frames.at(-1)!;
  if (row.shape === 'openai') {
    // the SDK parses every data line: each is JSON, and the error chunk is the last (no [DONE] after it)
    for (const f of frames) assert.doesNotThrow(() => JSON.parse(f.data), `unreadable frame ${f.data}`);
    assert.equal(JSON.parse(last.data).error.code, row.code, last.data);
    return;
  }
  const events = frames.map((f) => ({ event: f.event, data: JSON.parse(f.data) as Record<string, any> }));
  if (row.shape === 'anthropic') {
    assert.equal(last.event, 'error');
    assert.equal(events.at(-1)!.data.type, 'error');
    assert.equal(events.at(-1)!.data.error.code, row.code);
    assert.ok(!events.some((e) => e.event === 'message_stop'), 'no message_stop: never a truncated success');
    return;
  }
  const [error, failed] = events.slice(-2).map((e) => e.data);
  assert.equal(error.type, 'error');
  assert.equal(error.code, row.code);
  assert.equal(failed.type, 'response.failed');
  assert.equal(failed.response.status, 'failed');
  assert.equal(failed.response.id, events[0].data.response.id, 'the response the stream opened');
  assert.ok(!events.some((e) => e.data.type === 'response.completed'));
  assert.deepEqual(
    events.map((e) => e.data.sequence_number),
    events.map((_, i) => i),
    'sequence numbers go on without a gap',
  );
}

test('upstream faults across wires end in the client shape and count once in the trace and metrics', {
  timeout: 60_000,
  concurrency: true,
}, async (t) => {
  const stack = await startGatewayStack({
    env: {
      SVC_GATEWAY_MAX_RETRIES: String(RETRIES),
      // the hang row costs the call's total time once; the stalls cost the idle timeout. The total leaves the
      // retry-after=1 row room for its wait after a first attempt slowed by a busy machine (a retry whose wait
      // would end past the deadline is not made)
      SVC_GATEWAY_UPSTREAM_TIMEOUT_MS: '4000',
      SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS: '1000',
    },
  });
  t.after(() => stack.stop());
  const turns: string[] = [];

  const moved = await createScraper(stack.gw.url).movedBy(async () => {
    await Promise.all(
      ROWS.map((row, i) =>
        t.test(
          `${row.shape} client, ${row.model}, ${row.fault}${row.stream ? ', streaming' : ''}`,
          async () => {
            const marker = `<row ${i}>`;
            const fault = row.fault.replace(IN_2_S, new Date(Date.now() + 2000).toUTCString());
            const res = await post(stack, row, `${marker} [[fake:${fault}]]`);
            const text = await res.text();
            assert.equal(res.status, row.status, text);
            const turnId = res.headers.get('svc-request-id');
            assert.ok(turnId);
            turns.push(turnId);
            const attempts = stack.fake.requests.filter((r) =>
              JSON.stringify(r.body).includes(marker),
            ).length;
            assert.equal(attempts, row.attempts, 'upstream attempts');

            if (row.status === 200) assertEndsInClientShape(row, text);
            else {
              const body = JSON.parse(text) as { type?: string; error: Record<string, unknown> };
              assert.equal(body.error.code, row.code);
              if (row.shape === 'anthropic') assert.equal(body.type, 'error', 'the Anthropic error shape');
              else assert.equal(body.error.param, null, 'the OpenAI error shape');
              assert.equal(typeof body.error.type, 'string');
              const retry = row.status === 429 || row.status === 503;
              assert.equal(res.headers.get('x-should-retry'), String(retry));
              if (retry) assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
              if (row.fault.includes('retry-after=1')) assert.equal(res.headers.get('retry-after'), '1');
            }

            const events = readEvents(stack.files.db).filter((e) => e.turn_id === turnId);
            const failed = events.filter((e) => e.type === 'llm.call_failed');
            assert.equal(failed.length, 1, 'one llm.call_failed');
            assert.equal(failed[0].payload.error_class, row.errorClass);
            assert.equal(failed[0].payload.code, row.code);
            assert.equal(failed[0].payload.attempts, row.attempts);
            assert.equal(events.filter((e) => e.type === 'llm.call_completed').length, 0);
            assert.deepEqual(
              events
                .filter((e) => e.type === 'turn.completed')
                .map((e) => [e.payload.status, e.payload.error_code]),
              [[row.status, row.code]],
            );
            // a stream broken after its head was read by the provider: its input (and any output seen) is
            // billed, stated or estimated, never "0"
            if (row.status === 200 || row.fault.startsWith('malformed') || row.billed)
              assert.ok(Number(failed[0].payload.cost_usd) > 0, 'the broken call is priced');
            if (row.billed) assert.equal(failed[0].payload.usage_estimated, true);
          },
        ),
      ),
    );
  });

  // every failure moves its class's series once, and the cost counters by what the trace billed
  const failures = readEvents(stack.files.db, 'llm.call_failed').filter((e) => turns.includes(e.turn_id!));
  assert.equal(failures.length, ROWS.length);
  const expected = new Map<string, number>();
  const add = (key: string, by: number) => expected.set(key, (expected.get(key) ?? 0) + by);
  for (const { payload: p } of failures) {
    const labels = `model=${p.model},provider=${p.provider}`;
    add(`svc_llm_calls_total{${labels},status=${p.error_class}}`, 1);
    add(`svc_llm_call_errors_total{error_class=${p.error_class},${labels}}`, 1);
    if (Number(p.cost_usd) > 0) {
      add(`svc_llm_cost_usd_total{${labels}}`, Number(p.cost_usd));
      add(`svc_gateway_key_cost_usd_total{gateway_key_id=${stack.keyId}}`, Number(p.cost_usd));
    }
  }
  for (const [series, value] of expected) {
    const got = moved.get(series);
    assert.ok(
      got !== undefined && Math.abs(got - value) < 1e-12,
      `${series}: moved by ${got}, trace says ${value}`,
    );
  }
  for (const series of moved.keys()) {
    if (/^svc_llm_(calls|call_errors)_total\{/.test(series))
      assert.ok(expected.has(series), `unexpected ${series}`);
  }
});

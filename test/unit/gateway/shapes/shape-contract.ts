/**
 * Contract every inbound shape satisfies: 400s naming the field, unknown fields kept for a same-wire
 * upstream, `model` echoing the requested name, well-formed streams with a terminal frame, an error frame
 * for failures after the first frame (and for a cut stream), error bodies per DECISIONS §4.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CanonicalResponse } from '#src/canonical/response.ts';
import { type CanonicalStreamEvent, StreamBuilder } from '#src/canonical/stream.ts';
import type { InboundShape } from '#src/gateway/shapes/shape.ts';
import { type ErrorCode, SvcError } from '#src/lib/errors.ts';
import { collect, items, parseSseText } from '../../../helpers/sse-fixtures.ts';

export interface ShapeCase {
  shape: InboundShape;
  validBody: Record<string, unknown>;
  /** Bodies that must fail, with the field the message must name. */
  invalid: Array<[Record<string, unknown>, string]>;
  isTerminal(frame: { event?: string; data: string }): boolean;
  isError(frame: { event?: string; data: string }): boolean;
  /** Frames a shape sends after its error frame to close a failed stream (Responses: response.failed). */
  isFailedEnd?(frame: { event?: string; data: string }): boolean;
  errorType(body: Record<string, unknown>): string;
  /** Expected error `type` strings per gateway code. */
  errorTypes: Record<string, string>;
}

/** A canonical stream with thinking, text and two parallel tool calls. */
export function sampleEvents(): CanonicalStreamEvent[] {
  const b = new StreamBuilder();
  const out: CanonicalStreamEvent[] = [b.start('msg_1', 'claude-x')];
  const th = b.openThinking();
  out.push(b.thinking(th, 'hmm'), b.thinking(th, '', 'sig'));
  out.push(...[b.close(th)].filter((e) => e !== undefined));
  const t = b.openText();
  out.push(b.text(t, 'Checking'));
  b.close(t);
  const a = b.openToolUse('toolu_1', 'get_weather');
  out.push(a, b.toolInput(a.content_block_index, '{"city":'), b.toolInput(a.content_block_index, '"Oslo"}'));
  out.push(b.close(a.content_block_index)!);
  const c = b.openToolUse('toolu_2', 'get_time');
  out.push(c, b.close(c.content_block_index)!);
  b.mergeUsage({
    input_tokens: 10,
    output_tokens: 20,
    cached_input_tokens: 100,
    cache_creation_input_tokens: 5,
  });
  b.setStop('tool_use');
  out.push(...b.finish());
  return out;
}

export const SAMPLE_RESPONSE: CanonicalResponse = {
  id: 'msg_1',
  model: 'claude-upstream',
  content: [
    { type: 'text', text: 'Checking' },
    { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 20, cached_input_tokens: 100, cache_creation_input_tokens: 5 },
};

export async function* failAfter(
  events: CanonicalStreamEvent[],
  err: unknown,
): AsyncGenerator<CanonicalStreamEvent> {
  yield* events;
  throw err;
}

export function runShapeContract(c: ShapeCase): void {
  const { shape } = c;

  test(`${shape.name}: a valid body validates and decodes`, () => {
    assert.equal(shape.validate(c.validBody).model, c.validBody.model);
    assert.equal(shape.decode(c.validBody).model, c.validBody.model);
  });

  for (const [body, field] of c.invalid) {
    test(`${shape.name}: an invalid ${field} is a 400 invalid_request naming the field`, () => {
      for (const fn of [shape.validate, shape.decode]) {
        assert.throws(
          () => fn(body),
          (err: unknown) =>
            err instanceof SvcError && err.code === 'invalid_request' && err.message.startsWith(field),
        );
      }
    });
  }

  test(`${shape.name}: unknown top-level fields are kept as passthrough for the same wire`, () => {
    const req = shape.decode({ ...c.validBody, future_field: { a: 1 } });
    assert.equal(req.passthrough?.wire, shape.name);
    assert.deepEqual(req.passthrough?.fields, { future_field: { a: 1 } });
  });

  test(`${shape.name}: responses echo the requested model`, () => {
    const body = shape.encode(SAMPLE_RESPONSE, { model: 'my-alias', created: 1 });
    assert.equal(body.model, 'my-alias');
    assert.ok(!JSON.stringify(body).includes('claude-upstream'));
  });

  test(`${shape.name}: a stream is well-formed, echoes the model and ends with the terminal frame`, async () => {
    const text = (
      await collect(shape.encodeStream(items(sampleEvents()), { model: 'my-alias', created: 1 }))
    ).join('');
    const frames = parseSseText(text);
    assert.ok(c.isTerminal(frames.at(-1)!));
    assert.ok(!frames.some(c.isError));
    for (const f of frames) if (f.data !== '[DONE]') JSON.parse(f.data);
    assert.ok(text.includes('"model":"my-alias"'));
    assert.ok(!text.includes('claude-x'));
  });

  test(`${shape.name}: a failure after the first frame becomes this shape's error frame, not a success`, async () => {
    const events = sampleEvents().slice(0, 5);
    const err = new SvcError('upstream_overloaded', { message: 'Overloaded' });
    const frames = parseSseText(
      (await collect(shape.encodeStream(failAfter(events, err), { model: 'm' }))).join(''),
    );
    assert.ok(frames.length > 1);
    const error = errorTail(c, frames);
    assert.ok(!frames.some(c.isTerminal));
    assert.equal(c.errorType(JSON.parse(error.data)), c.errorTypes.upstream_overloaded);
  });

  test(`${shape.name}: a canonical stream that ends without message.complete ends in an error frame`, async () => {
    const frames = parseSseText(
      (await collect(shape.encodeStream(items(sampleEvents().slice(0, 4)), { model: 'm' }))).join(''),
    );
    errorTail(c, frames);
  });

  test(`${shape.name}: error bodies carry status, shape type, code and the extra fields inside error`, () => {
    for (const [code, type] of Object.entries(c.errorTypes)) {
      const err = new SvcError(code as any, {
        message: 'm',
        details: { key_id: 'gk_1', revoked_at: 't', cap: 5, retry_after_ms: 2500 },
      });
      const r = shape.encodeError(err);
      assert.equal(r.status, err.status);
      assert.equal(c.errorType(r.body), type, code);
      const e = r.body.error as Record<string, unknown>;
      assert.equal(e.code, code);
      assert.equal(e.message, 'm');
      assert.equal(e.key_id, 'gk_1');
      assert.equal(e.revoked_at, 't');
      assert.deepEqual(e.details, { cap: 5 });
      assert.equal(r.headers['retry-after'], '3');
    }
    const shouldRetry = (code: ErrorCode) => shape.encodeError(new SvcError(code)).headers['x-should-retry'];
    // no SDK retry on top of the gateway's own, nor where no wait helps (wire-formats §4)
    for (const code of [
      'quota_exceeded',
      'upstream_error',
      'upstream_auth_failed',
      'upstream_timeout',
    ] as const)
      assert.equal(shouldRetry(code), 'false', code);
    for (const code of ['upstream_rate_limited', 'upstream_overloaded'] as const)
      assert.equal(shouldRetry(code), 'true', code);
    // issue 13: a wrong key, a bad body or an unknown path is never retried (Claude Code retried a 401 for
    // minutes); the gateway's own 429/503 are, and say when
    for (const code of [
      'missing_token',
      'invalid_token',
      'key_revoked',
      'invalid_request',
      'model_not_allowed',
      'not_found',
      'method_not_allowed',
      'request_too_large',
      'upstream_invalid_request',
    ] as const)
      assert.equal(shouldRetry(code), 'false', code);
    for (const code of ['routing_failed', 'upstream_overloaded', 'upstream_rate_limited'] as const) {
      const r = shape.encodeError(new SvcError(code));
      assert.equal(r.headers['x-should-retry'], 'true', code);
      assert.match(r.headers['retry-after'] ?? '', /^\d+$/, `${code} says when to retry`);
    }
    const internal = shape.encodeError(new Error('secret detail'));
    assert.equal(internal.status, 500);
    assert.ok(!JSON.stringify(internal.body).includes('secret'));
    // the gateway's own fault: the same body meets it again, and after an upstream answer a retry would
    // multiply upstream calls (README: every error answer on the provider paths says x-should-retry)
    assert.equal(internal.headers['x-should-retry'], 'false');
    assert.equal(shouldRetry('not_implemented'), 'false');
  });
}

/** The error frame that ends a failed stream: the last frame, or followed only by the shape's failed end. */
function errorTail(c: ShapeCase, frames: Array<{ event?: string; data: string }>): { data: string } {
  const at = frames.findLastIndex((f) => c.isError(f));
  assert.ok(at > 0, 'an error frame after the first frame');
  for (const f of frames.slice(at + 1)) assert.ok(c.isFailedEnd?.(f), `${f.event} after the error frame`);
  return frames[at]!;
}

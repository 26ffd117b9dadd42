/**
 * @module Errors on POST /v1/responses: the OpenAI error body (the same as Chat Completions, DECISIONS §4)
 * for an HTTP answer, and the Responses stream's `error` event for a failure after the first event.
 */
import { isSvcError } from '../../../lib/errors.ts';
import { isSpendLimit } from '../../../lib/spend-limit.ts';
import { encodeOpenAIError } from '../openai/errors.ts';
import type { PassthroughEnd, ShapeErrorResponse } from '../shape.ts';

export function encodeResponsesError(value: unknown): ShapeErrorResponse {
  return encodeOpenAIError(value);
}

/**
 * `error` event fields: the nested form `{error:{type, code, message, param}}` the OpenAI SDK throws on,
 * plus `code`, `message` and `param` at the top level, where openai-node's ResponseErrorEvent type and
 * newer Codex releases read them.
 */
export function responsesErrorFields(value: unknown): Record<string, unknown> {
  const { error } = encodeOpenAIError(value).body as { error: Record<string, unknown> };
  return {
    code: error.code,
    message: error.message,
    param: null,
    error: { type: error.type, code: error.code, message: error.message, param: null },
  };
}

/**
 * `response.error.code` of a failed response for a gateway error code: the Responses API's own codes
 * where one means the same (Codex waits and retries on `rate_limit_exceeded` and
 * `server_is_overloaded`, and stops on `insufficient_quota`: the svc key's budget or the provider account's
 * spent credit), `server_error` otherwise.
 */
export function responsesFailureCode(code: string, err?: unknown): string {
  if (code === 'upstream_rate_limited') return 'rate_limit_exceeded';
  if (code === 'upstream_overloaded') return 'server_is_overloaded';
  if (code === 'quota_exceeded') return 'insufficient_quota';
  // the provider's account out of credit or over its spend limit (a 402 in a stream's error event): no wait
  // fixes it, and Codex stops on insufficient_quota where it retries a server_error
  if (code === 'upstream_auth_failed' && isSvcError(err) && err.details) {
    const { upstream_status, upstream_type } = err.details;
    const type = typeof upstream_type === 'string' ? upstream_type : undefined;
    // OpenRouter's in-stream error states the HTTP status it stands for as its code, kept as the type ('402')
    if (isSpendLimit(Number(upstream_status ?? type), type)) return 'insufficient_quota';
  }
  return 'server_error';
}

/** A standalone `error` event (where the stream's sequence is unknown). */
export function encodeResponsesStreamError(value: unknown): string {
  const data = JSON.stringify({ type: 'error', sequence_number: 0, ...responsesErrorFields(value) });
  return `event: error\ndata: ${data}\n\n`;
}

/**
 * The end of a same-wire stream the gateway cuts (a reset, a timeout, an unreadable frame), as a translated
 * stream ends: an `error` event, then `response.failed` (the response of `response.created`, status failed,
 * `error.code` in the API's terms, the items done so far), numbered on from the upstream's frames. It also
 * holds the terminal frame of a stream that ended well. Frames are kept as the upstream's text and parsed
 * only for that failed end: a stream that ends well parses none of them here.
 */
export function createResponsesPassthroughEnd(requestedModel: string): PassthroughEnd {
  let seq = -1;
  /** The data of each `response.created` / `response.in_progress`: the latest holding a response is the one. */
  const started: string[] = [];
  /** The data of `response.completed` / `response.incomplete`. */
  let terminal: string | undefined;
  /** The data of each `response.output_item.done`. */
  const done: string[] = [];
  const frame = (type: string, fields: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: ++seq, ...fields })}\n\n`;
  return {
    observe(e) {
      const n = SEQUENCE.exec(e.data);
      if (n) seq = Math.max(seq, Number(n[1]));
      if (e.event === 'response.created' || e.event === 'response.in_progress') started.push(e.data);
      else if (e.event === 'response.output_item.done') done.push(e.data);
      else if (e.event === 'response.completed' || e.event === 'response.incomplete') terminal = e.data;
    },
    completed() {
      return terminal;
    },
    encodeError(err) {
      const fields = responsesErrorFields(err);
      const { code, message } = fields.error as { code: string; message: string };
      const out = frame('error', fields);
      const response = latestResponse(started);
      if (!response) return out;
      const failed = {
        ...response,
        model: requestedModel,
        status: 'failed',
        error: { code: responsesFailureCode(code, err), message },
        output: done.map((data) => (JSON.parse(data) as { item?: unknown }).item),
        usage: null,
      };
      return out + frame('response.failed', { response: failed });
    },
  };
}

/** The response the latest of these frames' data that carries one carries. */
function latestResponse(frames: readonly string[]): Record<string, unknown> | undefined {
  for (let i = frames.length - 1; i >= 0; i--) {
    const { response } = JSON.parse(frames[i]!) as { response?: Record<string, unknown> };
    if (response) return response;
  }
  return undefined;
}

/** A frame's own `sequence_number` (the top-level field; a quote inside a string value is escaped). */
const SEQUENCE = /"sequence_number":\s*(\d+)/;

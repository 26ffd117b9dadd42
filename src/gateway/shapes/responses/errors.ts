/**
 * @module Errors on POST /v1/responses: the OpenAI error body (the same as Chat Completions, DECISIONS §4)
 * for an HTTP answer, and the Responses stream's `error` event for a failure after the first event.
 */
import { encodeOpenAIError } from '../openai/errors.ts';
import type { ShapeErrorResponse } from '../shape.ts';

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
 * `server_is_overloaded`), `server_error` otherwise.
 */
export function responsesFailureCode(code: string): string {
  if (code === 'upstream_rate_limited') return 'rate_limit_exceeded';
  if (code === 'upstream_overloaded') return 'server_is_overloaded';
  if (code === 'quota_exceeded') return 'insufficient_quota';
  return 'server_error';
}

/** A standalone `error` event (the same-wire path, which does not know the stream's sequence). */
export function encodeResponsesStreamError(value: unknown): string {
  const data = JSON.stringify({ type: 'error', sequence_number: 0, ...responsesErrorFields(value) });
  return `event: error\ndata: ${data}\n\n`;
}

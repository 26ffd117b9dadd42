/**
 * @module Errors on POST /v1/responses: the OpenAI error body (the same as Chat Completions, DECISIONS §4)
 * for an HTTP answer, and the Responses stream's `error` event for a failure after the first event.
 */
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
 * `server_is_overloaded`), `server_error` otherwise.
 */
export function responsesFailureCode(code: string): string {
  if (code === 'upstream_rate_limited') return 'rate_limit_exceeded';
  if (code === 'upstream_overloaded') return 'server_is_overloaded';
  if (code === 'quota_exceeded') return 'insufficient_quota';
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
 * holds the response a stream that ended well completed with.
 */
export function createResponsesPassthroughEnd(requestedModel: string): PassthroughEnd {
  let seq = -1;
  let response: Record<string, unknown> | undefined;
  /** The data of `response.completed` / `response.incomplete`, read only when asked for. */
  let terminal: string | undefined;
  const done: unknown[] = [];
  const frame = (type: string, fields: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: ++seq, ...fields })}\n\n`;
  return {
    observe(e) {
      const n = SEQUENCE.exec(e.data);
      if (n) seq = Math.max(seq, Number(n[1]));
      if (e.event === 'response.created' || e.event === 'response.in_progress')
        response = (JSON.parse(e.data) as { response?: Record<string, unknown> }).response ?? response;
      else if (e.event === 'response.output_item.done')
        done.push((JSON.parse(e.data) as { item?: unknown }).item);
      else if (e.event === 'response.completed' || e.event === 'response.incomplete') terminal = e.data;
    },
    completed() {
      return terminal === undefined
        ? undefined
        : (JSON.parse(terminal) as { response?: Record<string, unknown> }).response;
    },
    encodeError(err) {
      const fields = responsesErrorFields(err);
      const { code, message } = fields.error as { code: string; message: string };
      const out = frame('error', fields);
      if (!response) return out;
      const failed = {
        ...response,
        model: requestedModel,
        status: 'failed',
        error: { code: responsesFailureCode(code), message },
        output: done,
        usage: null,
      };
      return out + frame('response.failed', { response: failed });
    },
  };
}

/** A frame's own `sequence_number` (the top-level field; a quote inside a string value is escaped). */
const SEQUENCE = /"sequence_number":\s*(\d+)/;

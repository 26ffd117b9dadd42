/**
 * @module OpenAI-wire failures → UpstreamFailure: HTTP errors `{"error":{"message","type","code"}}`
 * (wire-formats §2.8; OpenRouter's numeric `code` too, §3) and in-stream `{"error":…}` chunks.
 */
import type { SseEvent } from '../../lib/sse-decode.ts';
import type { HeaderGetter } from '../adapter.ts';
import {
  classifyErrorType,
  classifyHttpFailure,
  classifyStatus,
  classifyTransportError,
  failure,
  readErrorBody,
  type UpstreamFailure,
} from '../upstream-error.ts';

export function classifyOpenAIResponse(
  status: number,
  header: HeaderGetter,
  bodyText: string,
): UpstreamFailure {
  const { message, raw } = readErrorBody(bodyText);
  const e = raw as { type?: unknown; code?: unknown } | undefined;
  // `code` is more specific than `type` (insufficient_quota vs rate_limit_exceeded under 429)
  const type = typeof e?.code === 'string' ? e.code : typeof e?.type === 'string' ? e.type : undefined;
  return classifyHttpFailure(status, header, message, type);
}

/** The `error` object of an in-stream chunk (OpenAI) or of OpenRouter's `finish_reason:"error"` chunk. */
export function classifyOpenAIStreamError(error: any): UpstreamFailure {
  const code = error?.code;
  const type = typeof code === 'string' ? code : typeof error?.type === 'string' ? error.type : undefined;
  const cls = typeof code === 'number' ? classifyStatus(code) : (classifyErrorType(type) ?? 'server_error');
  return failure(cls, typeof error?.message === 'string' ? error.message : 'upstream stream error', {
    upstream_type: type ?? (typeof code === 'number' ? String(code) : undefined),
  });
}

/**
 * An error as the first event of a 200 stream: a chat chunk `{"error":…}` (OpenAI, OpenRouter), or on the
 * Responses wire an `error` event or `response.failed`.
 */
export function classifyOpenAIStreamStart(first: SseEvent): UpstreamFailure | null {
  // Responses events are named (and response.created carries "error":null, so it is not even parsed);
  // chat chunks are not, and only one holding an "error" member is read
  if (
    first.event !== undefined
      ? first.event !== 'error' && first.event !== 'response.failed'
      : !first.data.includes('"error"')
  )
    return null;
  let data: any;
  try {
    data = JSON.parse(first.data);
  } catch {
    return null; // the stream decoder reports a malformed frame in its place
  }
  if (data?.type === 'response.failed') return classifyOpenAIStreamError(data.response?.error);
  if (first.event === 'error' || data?.type === 'error')
    return classifyOpenAIStreamError(data?.error ?? data);
  return data?.error && typeof data.error === 'object' ? classifyOpenAIStreamError(data.error) : null;
}

/**
 * The Responses API's lifecycle events before any output: an overload or rate limit arrives after them, as
 * `error` then `response.failed` (sequence 2), still before anything was generated.
 */
export function isOpenAIStreamPreamble(e: SseEvent): boolean {
  return (
    e.event === 'response.created' || e.event === 'response.in_progress' || e.event === 'response.queued'
  );
}

export const classifyOpenAINetworkError = classifyTransportError;

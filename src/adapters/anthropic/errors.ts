/**
 * @module Anthropic failures → UpstreamFailure: HTTP errors (`{"type":"error","error":{"type","message"}}`,
 * wire-formats §1.11), the in-stream `event: error` (e.g. `overloaded_error` after a 200) and the same error
 * object as a 200 body.
 */
import type { SseEvent } from '../../lib/sse-decode.ts';
import type { EmbeddedError, HeaderGetter } from '../adapter.ts';
import {
  classifyErrorType,
  classifyHttpFailure,
  classifyTransportError,
  failure,
  readErrorBody,
  readErrorObject,
  type UpstreamFailure,
} from '../upstream-error.ts';

export function classifyAnthropicResponse(
  status: number,
  header: HeaderGetter,
  bodyText: string,
): UpstreamFailure {
  const { message, type, raw } = readErrorBody(bodyText);
  // newer refusals add error.details with a stable error_code (wire-formats §1.11)
  const details = (raw as { details?: unknown } | undefined)?.details;
  const known = typeof details === 'object' && details !== null && !Array.isArray(details);
  return classifyHttpFailure(
    status,
    header,
    message,
    type,
    known ? (details as Record<string, unknown>) : undefined,
  );
}

/** The data of an `event: error` frame. */
export function classifyAnthropicStreamError(data: string): UpstreamFailure {
  return classifyAnthropicError(readErrorBody(data));
}

/** An Anthropic error object read (readErrorBody, readErrorObject) → its failure, classed by its type. */
function classifyAnthropicError({ message, type }: { message: string; type?: string }): UpstreamFailure {
  return failure(classifyErrorType(type) ?? 'server_error', message || 'upstream stream error', {
    upstream_type: type,
  });
}

/**
 * A 200 body (parsed) that is an Anthropic error object (`{"type":"error","error":{"type","message"}}`, which a proxy
 * relaying the provider's error under its own 200 sends) → that error, classed by its type as the same
 * object in an `event: error` is; null for any other body (decodeAnthropicResponse reads or refuses it).
 */
export function classifyAnthropicResponseBody(parsed: unknown): EmbeddedError | null {
  const body = parsed as { type?: unknown; error?: unknown } | null;
  if (body?.type !== 'error' || typeof body.error !== 'object' || body.error === null) return null;
  return { failure: classifyAnthropicError(readErrorObject(body)) };
}

/** An `event: error` as the first event of a 200 stream (overloaded_error before message_start). */
export function classifyAnthropicStreamStart(first: SseEvent): UpstreamFailure | null {
  return first.event === 'error' ? classifyAnthropicStreamError(first.data) : null;
}

export const classifyAnthropicNetworkError = classifyTransportError;

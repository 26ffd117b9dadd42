/**
 * @module Anthropic failures → UpstreamFailure: HTTP errors (`{"type":"error","error":{"type","message"}}`,
 * wire-formats §1.11) and the in-stream `event: error` (e.g. `overloaded_error` after a 200).
 */
import type { SseEvent } from '../../lib/sse-decode.ts';
import type { HeaderGetter } from '../adapter.ts';
import {
  classifyErrorType,
  classifyHttpFailure,
  classifyTransportError,
  failure,
  readErrorBody,
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
  const { message, type } = readErrorBody(data);
  return failure(classifyErrorType(type) ?? 'server_error', message || 'upstream stream error', {
    upstream_type: type,
  });
}

/** An `event: error` as the first event of a 200 stream (overloaded_error before message_start). */
export function classifyAnthropicStreamStart(first: SseEvent): UpstreamFailure | null {
  return first.event === 'error' ? classifyAnthropicStreamError(first.data) : null;
}

export const classifyAnthropicNetworkError = classifyTransportError;

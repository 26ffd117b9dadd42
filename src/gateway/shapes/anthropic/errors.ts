/**
 * @module SvcError → Anthropic error body `{"type":"error","error":{"type","message","code",…}}`
 * (DECISIONS §4) with the `error.type` strings of wire-formats §1.11, and the in-stream `event: error` frame.
 */
import type { ErrorCode } from '../../../lib/errors.ts';
import { errorParts, type ShapeErrorResponse } from '../shape.ts';

/**
 * Codes whose `error.type` is not their status's: the gateway's own 503 `routing_failed` is no overload
 * (no wait changes which models the chain can use), and Claude Code retries every `overloaded_error` for
 * minutes whatever `x-should-retry` says, so it is the generic server error `api_error`.
 */
const TYPE_BY_CODE: Partial<Record<ErrorCode, string>> = { routing_failed: 'api_error' };

/** Anthropic `error.type` for an HTTP status (wire-formats §1.11, §5.5). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 409:
      return 'conflict_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/**
 * The error body, with the API's top-level `request_id` when the request has one (wire-formats §1.11): the
 * gateway's request id, the one its `request-id` header carries and the trace records.
 */
export function encodeAnthropicError(value: unknown, requestId?: string): ShapeErrorResponse {
  const { err, status, extra, headers } = errorParts(value);
  return {
    status,
    headers,
    body: {
      type: 'error',
      error: {
        type: TYPE_BY_CODE[err.code] ?? anthropicErrorType(status),
        message: err.message,
        code: err.code,
        ...extra,
      },
      ...(requestId === undefined ? {} : { request_id: requestId }),
    },
  };
}

/** `event: error` frame for a failure after the 200 headers (wire-formats §1.10). */
export function encodeAnthropicStreamError(value: unknown): string {
  return `event: error\ndata: ${JSON.stringify(encodeAnthropicError(value).body)}\n\n`;
}

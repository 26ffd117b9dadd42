/**
 * @module SvcError → Anthropic error body `{"type":"error","error":{"type","message","code",…}}`
 * (DECISIONS §4) with the `error.type` strings of wire-formats §1.11, and the in-stream `event: error` frame.
 */
import { errorParts, type ShapeErrorResponse } from '../shape.ts';

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

export function encodeAnthropicError(value: unknown): ShapeErrorResponse {
  const { err, status, extra, headers } = errorParts(value);
  return {
    status,
    headers,
    body: {
      type: 'error',
      error: { type: anthropicErrorType(status), message: err.message, code: err.code, ...extra },
    },
  };
}

/** `event: error` frame for a failure after the 200 headers (wire-formats §1.10). */
export function encodeAnthropicStreamError(value: unknown): string {
  return `event: error\ndata: ${JSON.stringify(encodeAnthropicError(value).body)}\n\n`;
}

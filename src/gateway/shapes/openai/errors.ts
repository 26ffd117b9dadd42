/**
 * @module SvcError → OpenAI error body `{"error":{"message","type","param":null,"code",…}}` (DECISIONS §4,
 * wire-formats §2.8) and the in-stream `data: {"error":…}` frame the OpenAI SDK throws on (§2.7).
 */
import type { ErrorCode } from '../../../lib/errors.ts';
import { errorParts, type ShapeErrorResponse } from '../shape.ts';

/** OpenAI `error.type` for a gateway error code and status. */
export function openaiErrorType(code: string, status: number): string {
  if (code === 'quota_exceeded') return 'insufficient_quota'; // not transient (wire-formats §2.8)
  if (code === 'model_not_found') return 'invalid_request_error'; // as OpenAI's own 404 for a model
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  return status < 500 ? 'invalid_request_error' : 'server_error';
}

/** Codes whose OpenAI body names the parameter at fault, as OpenAI's own answer does. */
const PARAM_BY_CODE: Partial<Record<ErrorCode, string>> = { model_not_found: 'model' };

export function encodeOpenAIError(value: unknown): ShapeErrorResponse {
  const { err, status, extra, headers } = errorParts(value);
  return {
    status,
    headers,
    body: {
      error: {
        message: err.message,
        type: openaiErrorType(err.code, status),
        param: PARAM_BY_CODE[err.code] ?? null,
        code: err.code,
        ...extra,
      },
    },
  };
}

/** `data: {"error":…}` frame; the stream then closes without `[DONE]` (wire-formats §5.3). */
export function encodeOpenAIStreamError(value: unknown): string {
  return `data: ${JSON.stringify(encodeOpenAIError(value).body)}\n\n`;
}

/**
 * @module Error bodies of the gateway (DECISIONS §4): each provider-shape path answers in that provider's
 * own error shape so the official SDKs surface it; `key_id` and `revoked_at` sit inside `error`, other
 * details under `error.details`. Other paths get the service body `{"error":{"code","message"}}`.
 * Interim: switch to shapes/<s>/errors.ts and http/service-errors.ts once those land.
 */
import type { InboundShape } from '../events/catalog.ts';
import type { SvcError } from '../lib/errors.ts';

export interface EncodedError {
  status: number;
  body: Record<string, unknown>;
}

/** The response for `err` on a path of `shape` (undefined: a service-owned or unknown path). */
export function encodeGatewayError(shape: InboundShape | undefined, err: SvcError): EncodedError {
  const status = err.status;
  const { key_id, revoked_at, ...rest } = err.details ?? {};
  const extra = {
    ...(key_id !== undefined ? { key_id } : {}),
    ...(revoked_at !== undefined ? { revoked_at } : {}),
    ...(Object.keys(rest).length ? { details: rest } : {}),
  };
  if (shape === 'anthropic') {
    return {
      status,
      body: {
        type: 'error',
        error: { type: anthropicType(status), message: err.message, code: err.code, ...extra },
      },
    };
  }
  if (shape === 'openai') {
    return {
      status,
      body: {
        error: { message: err.message, type: openaiType(status), param: null, code: err.code, ...extra },
      },
    };
  }
  return { status, body: { error: { code: err.code, message: err.message, ...extra } } };
}

// --- internal ---

function anthropicType(status: number): string {
  if (status === 400) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 503) return 'overloaded_error';
  return status < 500 ? 'invalid_request_error' : 'api_error';
}

function openaiType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  return status < 500 ? 'invalid_request_error' : 'server_error';
}

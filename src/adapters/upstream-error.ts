/**
 * @module Classification of upstream failures (DECISIONS §3 error classes, §4 gateway codes), shared by
 * the adapters: status first, then the provider's error type, then transport errors. Carries the
 * `retry-after-ms` / `retry-after` hint for the retry policy.
 */

import type { ErrorClass } from '../events/catalog.ts';
import { type ErrorCode, SvcError } from '../lib/errors.ts';
import { isSpendLimit } from '../lib/spend-limit.ts';

export interface UpstreamFailure {
  error_class: ErrorClass;
  code: ErrorCode;
  /** Upstream HTTP status; null for transport and in-stream errors. */
  status: number | null;
  message: string;
  /** Worth another attempt (before the first byte only; DECISIONS §4). */
  retryable: boolean;
  retry_after_ms?: number;
  /** The provider's own error type/code string, when it sent one. */
  upstream_type?: string;
  /**
   * The provider's `error.details` (Anthropic's stable `error_code` and its fields, wire-formats §1.11),
   * when it sent them.
   */
  upstream_details?: Record<string, unknown>;
}

const CLASS_CODE: Record<ErrorClass, ErrorCode> = {
  rate_limit: 'upstream_rate_limited',
  overloaded: 'upstream_overloaded',
  server_error: 'upstream_error',
  timeout: 'upstream_timeout',
  connection_error: 'upstream_error',
  authentication: 'upstream_auth_failed',
  invalid_request: 'upstream_invalid_request',
  cancelled: 'upstream_error',
};

const RETRYABLE: ReadonlySet<ErrorClass> = new Set([
  'rate_limit',
  'overloaded',
  'server_error',
  'timeout',
  'connection_error',
]);

/** Transport codes of a connection that was never made (DNS, refused, unreachable). */
const CONNECT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/** Class of an upstream HTTP status (wire-formats §1.11, §2.8, §3). */
export function classifyStatus(status: number): ErrorClass {
  if (status < 400) return 'server_error'; // a redirect: the provider's base URL, not the client's request
  if (status === 401 || status === 403 || status === 402) return 'authentication'; // 402: credits, not transient
  if (status === 408 || status === 504) return 'timeout';
  if (status === 429) return 'rate_limit';
  if (status === 503 || status === 529) return 'overloaded';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

/** Class of a provider error type string (Anthropic `error.type`, OpenAI `error.type`/`code`), if known. */
export function classifyErrorType(type: string | undefined): ErrorClass | undefined {
  switch (type) {
    case 'overloaded_error':
    case 'slow_down':
    // the Responses API's in-stream overload (`error.type` / `error.code`, then response.failed's code)
    case 'server_is_overloaded':
    case 'service_unavailable_error':
      return 'overloaded';
    case 'rate_limit_error':
    case 'rate_limit_exceeded':
    case 'too_many_requests':
    case 'tokens':
    case 'requests':
      return 'rate_limit';
    case 'api_error':
    case 'server_error':
      return 'server_error';
    case 'timeout_error':
      return 'timeout';
    case 'authentication_error':
    case 'permission_error':
    case 'invalid_api_key':
    case 'billing_error':
    case 'insufficient_quota':
      return 'authentication';
    case 'invalid_request_error':
    case 'not_found_error':
    case 'request_too_large':
      return 'invalid_request';
    default:
      return undefined;
  }
}

export function failure(
  error_class: ErrorClass,
  message: string,
  extra: {
    status?: number | null;
    retry_after_ms?: number;
    upstream_type?: string;
    upstream_details?: Record<string, unknown>;
    retryable?: boolean;
  } = {},
): UpstreamFailure {
  const f: UpstreamFailure = {
    error_class,
    code: CLASS_CODE[error_class],
    status: extra.status ?? null,
    // The provider's words about its own key or account (OpenAI quotes a masked fragment of the key) stay
    // out of client answers, events and logs, wherever they came: an HTTP status, an in-stream error event
    // or a 200 body holding the error. The client did nothing wrong and cannot fix it; the operator can.
    message:
      error_class === 'authentication' ? providerRefusalText(extra.status, extra.upstream_type) : message,
    retryable: extra.retryable ?? RETRYABLE.has(error_class),
  };
  if (extra.retry_after_ms !== undefined) f.retry_after_ms = extra.retry_after_ms;
  if (extra.upstream_type !== undefined) f.upstream_type = extra.upstream_type;
  if (extra.upstream_details !== undefined) f.upstream_details = extra.upstream_details;
  return f;
}

/** A non-2xx response: status decides, except a known provider type refines a generic status. */
export function classifyHttpFailure(
  status: number,
  header: (name: string) => string | undefined,
  message: string,
  upstreamType?: string,
  upstreamDetails?: Record<string, unknown>,
): UpstreamFailure {
  let cls = classifyStatus(status);
  const byType = classifyErrorType(upstreamType);
  if (byType === 'overloaded' && cls === 'server_error') cls = byType;
  // An exhausted credit or spend limit (OpenAI 429 insufficient_quota, Anthropic/OpenRouter 402) is the
  // operator's account, like a refused key: no wait fixes it (wire-formats §2.8, §4), so it is not a rate limit.
  const spendLimit = isSpendLimit(status, upstreamType);
  if (spendLimit) cls = 'authentication';
  // The gateway follows no redirect (the provider key would go to a host the operator did not name); the
  // same redirect answers every attempt, so none is retried.
  const redirect = status >= 300 && status < 400;
  const retryable = spendLimit || redirect || header('x-should-retry') === 'false' ? false : undefined;
  // an authentication class gets the gateway's own words in failure()
  const text = redirect
    ? `the provider answered with a redirect (HTTP ${status}), which the gateway does not follow; the gateway operator must check the provider's base URL`
    : message || `upstream returned HTTP ${status}`;
  const f = failure(cls, text, {
    status,
    retry_after_ms: parseRetryAfterMs(header) ?? (status === 429 ? parseRateLimitResetMs(header) : undefined),
    upstream_type: upstreamType,
    upstream_details: upstreamDetails,
    retryable,
  });
  // too large for the provider: the client's 413 (wire-formats §5.5), not a generic bad request
  if (status === 413 || upstreamType === 'request_too_large') f.code = 'request_too_large';
  return f;
}

/**
 * What a failure of the authentication class says: the provider refused the gateway's key, or its account is
 * out of credit (a status, or OpenRouter's numeric in-stream code, 402; a spend-limit type), never the
 * provider's own text.
 */
function providerRefusalText(status: number | null | undefined, upstreamType: string | undefined): string {
  const what = [status == null ? undefined : `HTTP ${status}`, upstreamType].filter(Boolean).join(', ');
  const said = what === '' ? '' : ` (${what})`;
  const code = status ?? (/^\d{3}$/.test(upstreamType ?? '') ? Number(upstreamType) : 0);
  return isSpendLimit(code, upstreamType)
    ? `the provider refused the call: the gateway's provider account is out of credit or over its spend limit${said}; the gateway operator must raise it`
    : `the provider refused the gateway's provider key${said}; the gateway operator must check it`;
}

/** Transport errors of undici/fetch and aborts. */
export function classifyTransportError(err: unknown): UpstreamFailure {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code ?? '';
  const message = e?.message ?? String(err);
  if (e?.name === 'AbortError' || code === 'ABORT_ERR' || code === 'UND_ERR_ABORTED')
    return failure('cancelled', message);
  // undici's own words ("Headers Timeout Error", "other side closed") say little, and a connect error names
  // the upstream's address (the operator's base URL or proxy): the client gets what happened and its code
  if (code === 'UND_ERR_HEADERS_TIMEOUT')
    return failure(
      'timeout',
      'the provider did not start its answer in time (SVC_GATEWAY_UPSTREAM_TIMEOUT_MS)',
    );
  if (code === 'UND_ERR_BODY_TIMEOUT')
    return failure(
      'timeout',
      'the provider sent nothing more for too long (SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS)',
    );
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT')
    return failure('timeout', `the gateway could not reach the provider in time (${code})`);
  if (e?.name === 'TimeoutError') return failure('timeout', message);
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE')
    return failure(
      'connection_error',
      `the provider closed the connection before its answer was complete (${code})`,
    );
  if (CONNECT_CODES.has(code))
    return failure('connection_error', `the gateway could not reach the provider (${code})`);
  if (code !== '') return failure('connection_error', `the connection to the provider failed (${code})`);
  return failure('connection_error', message);
}

/** The SvcError the gateway answers with for a failure (DECISIONS §4). */
export function toSvcError(f: UpstreamFailure): SvcError {
  const details: Record<string, unknown> = { error_class: f.error_class, upstream_status: f.status };
  if (f.retry_after_ms !== undefined) details.retry_after_ms = f.retry_after_ms;
  // a class that is retried by default but that the provider said not to retry (x-should-retry: false)
  if (!f.retryable && RETRYABLE.has(f.error_class)) details.should_retry = false;
  if (f.upstream_type !== undefined) details.upstream_type = f.upstream_type;
  // A refusal of the client's own request keeps the provider's details (its `error_code`): the SDKs act on
  // them, e.g. a message thread the provider no longer holds (`thread_not_found`) is replayed whole. The
  // gateway's own fields win. Other classes concern the gateway's account or a passing fault, not the request.
  if (f.error_class === 'invalid_request' && f.upstream_details !== undefined)
    return new SvcError(f.code, { message: f.message, details: { ...f.upstream_details, ...details } });
  return new SvcError(f.code, { message: f.message, details });
}

/** Milliseconds from `retry-after-ms` (preferred) or `retry-after` (seconds or HTTP date). */
export function parseRetryAfterMs(
  header: (name: string) => string | undefined,
  nowMs = Date.now(),
): number | undefined {
  const ms = Number(header('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const after = header('retry-after')?.trim();
  if (!after) return undefined;
  const secs = Number(after);
  if (Number.isFinite(secs)) return secs >= 0 ? Math.round(secs * 1000) : undefined;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/**
 * A 429 without `retry-after`: how long until the exhausted limit resets, from OpenAI's
 * `x-ratelimit-reset-requests` / `-tokens` (`1s`, `6m0s`, `20ms`) for the dimension whose
 * `x-ratelimit-remaining-*` is 0 (the later of the two when neither says), so the wait is honest
 * (wire-formats §4) rather than a guess.
 */
export function parseRateLimitResetMs(header: (name: string) => string | undefined): number | undefined {
  let longest: number | undefined;
  for (const dimension of ['requests', 'tokens']) {
    const reset = parseDurationMs(header(`x-ratelimit-reset-${dimension}`));
    if (reset === undefined) continue;
    const remaining = header(`x-ratelimit-remaining-${dimension}`);
    if (remaining !== undefined && Number(remaining) > 0) continue;
    longest = Math.max(longest ?? 0, reset);
  }
  return longest;
}

/** `6m0s`, `1.5s`, `20ms`, `1h2m` → milliseconds; undefined for anything else. */
export function parseDurationMs(text: string | undefined): number | undefined {
  const t = text?.trim();
  if (!t || !/^(\d+(\.\d+)?(h|ms|m|s))+$/.test(t)) return undefined;
  let ms = 0;
  for (const [, n, unit] of t.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g))
    ms += Number(n) * (unit === 'h' ? 3_600_000 : unit === 'm' ? 60_000 : unit === 's' ? 1000 : 1);
  return Math.round(ms);
}

/** `{error:{message,type|code}}` of a JSON error body, tolerant of non-JSON bodies. */
export function readErrorBody(bodyText: string): { message: string; type?: string; raw?: unknown } {
  let b: unknown;
  try {
    b = JSON.parse(bodyText);
  } catch {
    return { message: bodyText.slice(0, 500) };
  }
  return readErrorObject(b);
}

/** readErrorBody of a body already parsed. */
export function readErrorObject(b: any): { message: string; type?: string; raw?: unknown } {
  const err = b?.error ?? b;
  const type =
    typeof err?.type === 'string' ? err.type : typeof err?.code === 'string' ? err.code : undefined;
  return { message: typeof err?.message === 'string' ? err.message : '', type, raw: err };
}

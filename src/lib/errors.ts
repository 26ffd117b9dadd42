/**
 * @module The one error type of svc and the closed catalog of error codes.
 * Every code maps to exactly one HTTP status (spec 1 §Errors, spec 2 §Errors, spec 3 §Errors,
 * DECISIONS §4/§5) and, for the command line, to an exit code (DECISIONS §2).
 */

export const ERROR_STATUS = {
  // gateway authentication and admission (DECISIONS §4)
  missing_token: 401,
  invalid_token: 401,
  key_revoked: 401,
  model_not_allowed: 403,
  host_not_allowed: 403,
  origin_not_allowed: 403,
  quota_exceeded: 429,
  invalid_request: 400,
  request_too_large: 413,
  // refused by the HTTP server before the app could read the request (listen.ts, `clientError`): too slow
  // to send it (SVC_GATEWAY_HEADERS_TIMEOUT_MS / SVC_GATEWAY_REQUEST_TIMEOUT_MS), or headers over Node's limit
  request_timeout: 408,
  request_headers_too_large: 431,
  routing_failed: 503,
  not_found: 404,
  // GET /v1/models/{model} naming no model the key may use (OpenAI's own code for it, wire-formats §2.8)
  model_not_found: 404,
  method_not_allowed: 405,
  // upstream failures (DECISIONS §4)
  upstream_invalid_request: 400,
  upstream_auth_failed: 502,
  upstream_rate_limited: 429,
  upstream_error: 502,
  upstream_overloaded: 503,
  upstream_timeout: 504,
  // versioning (spec 1 §Versioning)
  version_unsupported: 410,
  // agent server (spec 2 §Errors)
  session_not_found: 404,
  session_already_ended: 409,
  workspace_not_found: 400,
  model_not_configured: 400,
  turn_in_flight: 409,
  invalid_content: 400,
  turn_not_found: 404,
  turn_already_completed: 409,
  confirmation_not_found: 404,
  confirmation_already_resolved: 409,
  validation_error: 400,
  unsupported_media_type: 415,
  internal_error: 500,
  service_shutting_down: 503,
  // the shared budget store (PostgreSQL) cannot be reached, so a capped key's spend cannot be checked
  budget_store_unavailable: 503,
  // the agent server's store (PostgreSQL) cannot be reached: nothing was done, the same request may be sent
  // again once it is back (retry-after, x-should-retry: true)
  store_unavailable: 503,
  // WebSocket handshake (spec 2 §WebSocket stream): refused before the upgrade, with this body
  invalid_attach_token: 401,
  attach_token_wrong_session: 403,
  upgrade_required: 426,
  // the client closed the connection before the answer (nginx's 499); nobody reads the body, but the
  // request log and turn.completed record this one status
  cancelled: 499,
  // analytics (spec 3 §Errors, DECISIONS §5)
  invalid_group_by: 400,
  invalid_order: 400,
  invalid_gateway_key: 400,
  invalid_user: 400,
  invalid_team: 400,
  invalid_user_id: 400,
  unknown_baseline_model: 400,
  invalid_window: 400,
  invalid_limit: 400,
  // command line and local files (exit codes only; the status is nominal)
  usage_error: 400,
  confirmation_required: 400,
  key_not_found: 404,
  keystore_invalid: 500,
  config_invalid: 500,
  store_error: 500,
  io_error: 500,
  startup_refused: 500,
  restore_refused: 409,
  backup_refused: 409,
  not_implemented: 501,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * `x-should-retry` of a gateway answer, which both official SDKs obey before the status (wire-formats §4).
 * false: no retry can help (a spent cap, the operator's provider account) or the gateway already spent its
 * own retries (its 502/504), so an SDK retry would multiply upstream calls. true: a wait can help, and the
 * answer carries `retry-after`; issue 13 asks it of every 503, the gateway's own `routing_failed` included
 * (a provider whose circuit is open comes back). Codes not listed follow their status (`shouldRetryFor`).
 */
export const SHOULD_RETRY: Partial<Record<ErrorCode, boolean>> = {
  quota_exceeded: false,
  upstream_auth_failed: false,
  upstream_error: false,
  upstream_timeout: false,
  upstream_rate_limited: true,
  upstream_overloaded: true,
  // the gateway's own fault: a repeat of the same body meets it again, and one after the upstream answered
  // would multiply upstream calls
  internal_error: false,
  not_implemented: false,
  // a client too slow to send its request: nothing went upstream, so sending it again at once is safe
  request_timeout: true,
};

/**
 * Statuses a retry of the same request cannot fix (issue 13: Claude Code retried a 401 for minutes); 415: the
 * same compressed body is refused again.
 */
const NEVER_RETRIED: ReadonlySet<number> = new Set([400, 401, 403, 404, 405, 413, 415, 422, 431]);

/**
 * `x-should-retry` for `code`: the table above, else false on 400/401/403/404/405/413/415/422/431 and true on
 * 429/503 (those answers carry `retry-after`); undefined leaves the SDK's own status rule.
 */
export function shouldRetryFor(code: ErrorCode): boolean | undefined {
  const listed = SHOULD_RETRY[code];
  if (listed !== undefined) return listed;
  const status = ERROR_STATUS[code];
  if (NEVER_RETRIED.has(status)) return false;
  if (status === 429 || status === 503) return true;
  return undefined;
}

/** Codes that are usage errors on the command line (exit 2, DECISIONS §2). */
const USAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'usage_error',
  'confirmation_required',
  'invalid_user_id',
  'invalid_window',
  // the analytics report commands' flags (spec 3 §Errors), --include-workers among them
  'validation_error',
  'invalid_group_by',
  'invalid_order',
  'invalid_gateway_key',
  'invalid_user',
  'invalid_team',
  'invalid_limit',
  'unknown_baseline_model',
]);

export interface SvcErrorOptions {
  message?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** The only error type thrown by svc code; turned into output only at the edges. */
export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, options: SvcErrorOptions = {}) {
    super(options.message ?? code.replaceAll('_', ' '), { cause: options.cause });
    this.name = 'SvcError';
    this.code = code;
    this.details = options.details;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  /** Exit code of a command that failed with this error (DECISIONS §2). */
  get exitCode(): 1 | 2 {
    return USAGE_CODES.has(this.code) ? 2 : 1;
  }
}

export function isSvcError(value: unknown): value is SvcError {
  return value instanceof SvcError;
}

/** Message of any thrown value, without a stack. */
export function errorMessage(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}

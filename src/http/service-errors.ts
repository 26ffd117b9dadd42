/**
 * @module The error body of service-owned endpoints (spec 2 §Errors, spec 3 §Errors):
 * `{"error":{"code","message","details"?}}`, status from the code. Provider-shape paths use
 * their provider's own body instead (gateway/shapes).
 */
import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { errorMessage, isSvcError, SvcError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { isStoreUnreachable } from '../store/dialect.ts';
import { isSqliteLocked, isSqliteWriteRefused } from '../store/sqlite-errors.ts';
import { loggedPath } from './request-log.ts';

export interface ServiceErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** The body for one SvcError; `details` only when there are any (`should_retry` is a gateway header's, not one). */
export function encodeServiceError(err: SvcError): ServiceErrorBody {
  const { should_retry: _, ...rest } = err.details ?? {};
  const details = Object.keys(rest).length > 0 ? rest : undefined;
  return { error: { code: err.code, message: err.message, ...(details ? { details } : {}) } };
}

/** Seconds a client waits before sending again a request refused with 503 store_unavailable. */
export const STORE_RETRY_AFTER_S = 1;

/** Writes `err` as the service error response; store_unavailable says when and that a retry may help. */
export function serviceErrorResponse(c: Context, err: SvcError): Response {
  if (err.code === 'store_unavailable') {
    c.header('retry-after', String(STORE_RETRY_AFTER_S));
    c.header('x-should-retry', 'true');
  }
  return c.json(encodeServiceError(err), err.status as 400);
}

/**
 * 503 store_unavailable for a request that met a store it could not reach (PostgreSQL restarting or
 * away): each write of the agent server is one statement or transaction, so the same request may be sent again.
 */
export function storeUnavailable(cause?: unknown): SvcError {
  return new SvcError('store_unavailable', {
    message:
      'The trace store cannot be reached (PostgreSQL is restarting or away); send the request again shortly.',
    cause,
  });
}

/**
 * 503 store_unavailable for a request whose write the SQLite store refused (a full disk, a read-only mount, a
 * lock another process held past the busy timeout).
 */
function storeUnwritable(cause: unknown): SvcError {
  const message = isSqliteLocked(cause)
    ? `The trace store cannot be written (${errorMessage(cause)}: another process holds its write lock); send the request again shortly.`
    : `The trace store cannot be written (${errorMessage(cause)}); free some disk space or make its folder writable, then send the request again.`;
  return new SvcError('store_unavailable', {
    message,
    cause,
  });
}

/**
 * `app.onError` for service apps: SvcError → its status and body; anything else → 500
 * internal_error with a generic message (the cause goes to the log, never to the client). The path is
 * logged as the request log writes it, so a failed export or forget does not name the user (request-log.ts).
 */
export function createServiceErrorHandler(deps: { log: Logger }): ErrorHandler {
  return function serviceErrorHandler(err, c) {
    if (isSvcError(err)) return serviceErrorResponse(c, err);
    if (isStoreUnreachable(err)) {
      deps.log.warn('request refused: the trace store cannot be reached', {
        method: c.req.method,
        path: loggedPath(c.req.path),
        message: errorMessage(err),
      });
      return serviceErrorResponse(c, storeUnavailable(err));
    }
    if (isSqliteWriteRefused(err)) {
      // a full disk, a read-only mount or a lock held elsewhere: SQLite rolled the write back, so the request
      // may be sent again
      deps.log.warn('request refused: the trace store cannot be written', {
        method: c.req.method,
        path: loggedPath(c.req.path),
        message: errorMessage(err),
      });
      return serviceErrorResponse(c, storeUnwritable(err));
    }
    deps.log.error('unhandled error', { method: c.req.method, path: loggedPath(c.req.path), error: err });
    return serviceErrorResponse(c, new SvcError('internal_error', { message: 'Internal error.' }));
  };
}

/** `app.notFound` for service apps: 404 not_found naming the method and path. */
export const serviceNotFound: NotFoundHandler = (c) =>
  serviceErrorResponse(
    c,
    new SvcError('not_found', { message: `No route for ${c.req.method} ${c.req.path}.` }),
  );

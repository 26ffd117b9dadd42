/**
 * @module The error body of service-owned endpoints (spec 2 §Errors, spec 3 §Errors):
 * `{"error":{"code","message","details"?}}`, status from the code. Provider-shape paths use
 * their provider's own body instead (gateway/shapes).
 */
import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { isSvcError, SvcError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { loggedPath } from './request-log.ts';

export interface ServiceErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** The body for one SvcError; `details` only when there are any. */
export function encodeServiceError(err: SvcError): ServiceErrorBody {
  const details = err.details && Object.keys(err.details).length > 0 ? err.details : undefined;
  return { error: { code: err.code, message: err.message, ...(details ? { details } : {}) } };
}

/** Writes `err` as the service error response. */
export function serviceErrorResponse(c: Context, err: SvcError): Response {
  return c.json(encodeServiceError(err), err.status as 400);
}

/**
 * `app.onError` for service apps: SvcError → its status and body; anything else → 500
 * internal_error with a generic message (the cause goes to the log, never to the client). The path is
 * logged as the request log writes it, so a failed export or forget does not name the user (request-log.ts).
 */
export function createServiceErrorHandler(deps: { log: Logger }): ErrorHandler {
  return function serviceErrorHandler(err, c) {
    if (isSvcError(err)) return serviceErrorResponse(c, err);
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

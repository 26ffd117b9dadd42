/**
 * @module The identity id shape guard of spec 3 (filters and path ids). Ids that pass it contain no
 * SQL, LIKE or JSON-path metacharacters, and are only ever compared with `=` as bound parameters.
 */
import { type ErrorCode, SvcError } from '../lib/errors.ts';

/** Spec 3 §Resources: "Identity id shape guard". */
export const IDENTITY_ID_RE = /^[A-Za-z0-9_-]{1,200}$/;

export function isIdentityId(value: unknown): value is string {
  return typeof value === 'string' && IDENTITY_ID_RE.test(value);
}

/** Returns the id, or throws `invalid_user_id` (HTTP 400, exit 2) with one sentence. */
export function assertUserId(value: unknown): string {
  return assertIdentityId(value, 'invalid_user_id', 'user id');
}

/** Returns the id, or throws `code` naming `what` and the accepted shape. */
export function assertIdentityId(value: unknown, code: ErrorCode, what: string): string {
  if (isIdentityId(value)) return value;
  const shown = typeof value === 'string' ? JSON.stringify(clip(value)) : String(value);
  throw new SvcError(code, {
    message: `The ${what} ${shown} is not valid: use 1 to 200 letters, digits, "_" or "-".`,
  });
}

// --- internal ---

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

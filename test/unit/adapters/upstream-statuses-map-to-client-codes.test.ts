/**
 * Upstream HTTP failures → the client's error code (DECISIONS §4 table, wire-formats §5.5): 400/404/422 are
 * upstream_invalid_request (400), a 413 stays a 413 request_too_large, 401/403 upstream_auth_failed, 429
 * upstream_rate_limited, 503/529 upstream_overloaded, other 5xx upstream_error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyHttpFailure } from '#src/adapters/upstream-error.ts';
import { ERROR_STATUS } from '#src/lib/errors.ts';

const code = (status: number, type?: string) => classifyHttpFailure(status, () => undefined, 'm', type).code;

test('each upstream status maps to its documented client code and status', () => {
  for (const [status, expected] of [
    [400, 'upstream_invalid_request'],
    [404, 'upstream_invalid_request'],
    [422, 'upstream_invalid_request'],
    [413, 'request_too_large'],
    [401, 'upstream_auth_failed'],
    [403, 'upstream_auth_failed'],
    [429, 'upstream_rate_limited'],
    [503, 'upstream_overloaded'],
    [529, 'upstream_overloaded'],
    [500, 'upstream_error'],
  ] as const)
    assert.equal(code(status), expected, String(status));
  assert.equal(code(400, 'request_too_large'), 'request_too_large');
  assert.equal(ERROR_STATUS.request_too_large, 413);
});

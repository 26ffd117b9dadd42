import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ERROR_STATUS, SvcError } from '#src/lib/errors.ts';
import { ROOT } from '../../helpers/svc.ts';

const SPEC = join(ROOT, '..', 'shared', 'spec');

/** Rows `| code | status |` or `| condition | status | code |` of the spec's error tables. */
function specCodes(): Map<string, number> {
  const codes = new Map<string, number>();
  for (const file of ['DECISIONS.md', '2-agent-server.md', '3-analytics-user-data.md']) {
    const text = readFileSync(join(SPEC, file), 'utf8');
    for (const line of text.split('\n')) {
      const cells = line.split('|').map((c) => c.trim());
      const code = cells.find((c) => /^`?[a-z]+(_[a-z]+)+`?$/.test(c))?.replaceAll('`', '');
      const status = cells.find((c) => /^\d{3}( \(\d{3}.*\))?$/.test(c));
      if (code && status) codes.set(code, Number(status.slice(0, 3)));
    }
  }
  return codes;
}

// The spec folder sits beside the repository on development machines, not in every CI checkout.
const specAvailable = existsSync(join(SPEC, 'DECISIONS.md'));

test('every error code named in the spec tables exists with the documented status', {
  skip: !specAvailable && 'spec folder not beside the repository',
}, () => {
  const codes = specCodes();
  assert.ok(codes.size >= 30, `only ${codes.size} codes parsed from the spec`);
  for (const [code, status] of codes) {
    assert.ok(code in ERROR_STATUS, `missing error code ${code}`);
    if (code === 'upstream_error') continue; // 502, or 503 when the provider is overloaded (upstream_overloaded)
    assert.equal(ERROR_STATUS[code as keyof typeof ERROR_STATUS], status, code);
  }
});

test('codes are lowercase snake_case and statuses are HTTP error statuses', () => {
  for (const [code, status] of Object.entries(ERROR_STATUS)) {
    assert.match(code, /^[a-z]+(_[a-z]+)*$/);
    assert.ok(status >= 400 && status <= 599, code);
  }
});

test('usage errors exit 2 and everything else exits 1', () => {
  assert.equal(new SvcError('usage_error').exitCode, 2);
  assert.equal(new SvcError('confirmation_required').exitCode, 2);
  assert.equal(new SvcError('key_not_found').exitCode, 1);
  assert.equal(new SvcError('restore_refused').exitCode, 1);
});

/**
 * The identity shape guard and time windows of spec 3: what passes, and the one-sentence usage errors
 * (exit 2) for everything else.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertUserId,
  formatWindow,
  IDENTITY_ID_RE,
  isIdentityId,
  parseWindow,
  resolveWindow,
} from '#src/analytics/index.ts';
import { isSvcError } from '#src/lib/errors.ts';

test('the guard accepts 1 to 200 letters, digits, _ and -, and nothing else', () => {
  assert.equal(IDENTITY_ID_RE.source, '^[A-Za-z0-9_-]{1,200}$');
  for (const ok of ['u1', 'U-1_x', 'a'.repeat(200), '0', '-', '_']) assert.equal(isIdentityId(ok), true, ok);
  for (const bad of [
    '',
    'a'.repeat(201),
    'u1%',
    "u1'",
    'u1"',
    '$.user_id',
    'a.b',
    'a b',
    'é',
    'u1\n',
    'u1;',
    'a*',
    7,
    null,
  ]) {
    assert.equal(isIdentityId(bad), false, String(bad));
  }
});

test('a bad user id is invalid_user_id, exit 2, one sentence quoting a clipped id', () => {
  assert.equal(assertUserId('usr_alice'), 'usr_alice');
  assert.throws(
    () => assertUserId(`x'${'y'.repeat(300)}`),
    (err) =>
      isSvcError(err) &&
      err.code === 'invalid_user_id' &&
      err.status === 400 &&
      err.exitCode === 2 &&
      !err.message.includes('\n') &&
      err.message.length < 200 &&
      /use 1 to 200 letters, digits, "_" or "-"\.$/.test(err.message),
  );
});

test('from includes, to excludes, open ends are null, and defaults fill absent bounds', () => {
  assert.deepEqual(resolveWindow({}), { startUs: null, endUs: null });
  const w = resolveWindow({ from: '2026-11-22T06:01:02.123456Z', to: '2026-11-22T09:01:02+02:00' });
  assert.deepEqual(formatWindow(w), {
    start: '2026-11-22T06:01:02.123456Z',
    end: '2026-11-22T07:01:02.000000Z',
  });
  assert.deepEqual(
    resolveWindow({ from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }).startUs,
    1_767_225_600_000_000,
  );
  const d = resolveWindow({ to: '2026-01-02T00:00:00Z' }, { defaults: { startUs: 5, endUs: 9 } });
  assert.deepEqual(d, { startUs: 5, endUs: 1_767_312_000_000_000 });
  assert.deepEqual(formatWindow({ startUs: null, endUs: null }), { start: null, end: null });
});

test('a malformed bound or from after to is invalid_window (exit 2) naming the parameter', () => {
  const names = { from: '--from', to: '--to' };
  const bad = (input: { from?: string; to?: string }, pattern: RegExp) =>
    assert.throws(
      () => resolveWindow(input, { names }),
      (err) =>
        isSvcError(err) && err.code === 'invalid_window' && err.exitCode === 2 && pattern.test(err.message),
    );
  bad({ from: 'yesterday' }, /^--from "yesterday" is not an ISO 8601 timestamp/);
  bad({ to: '2026-11-31' }, /^--to "2026-11-31" is not an ISO 8601/);
  bad({ to: '2026-11-22T25:01:02' }, /^--to .* is not an ISO 8601/);
  // the parameters are UTC: a timestamp without a zone is UTC, a date alone its midnight, seconds optional
  const utc = (input: { from?: string; to?: string }) => resolveWindow(input, { names });
  assert.equal(utc({ from: '2026-11-22', to: '2026-11-23' }).startUs, Date.UTC(2026, 10, 22) * 1000);
  assert.equal(
    utc({ from: '2026-11-22T06:01:02', to: '2026-11-23' }).startUs,
    Date.UTC(2026, 10, 22, 6, 1, 2) * 1000,
  );
  assert.equal(
    utc({ from: '2026-11-22T08:01+0200', to: '2026-11-23' }).startUs,
    Date.UTC(2026, 10, 22, 6, 1) * 1000,
  );
  bad(
    { from: '2026-11-22T06:01:02Z', to: '2026-11-21T06:01:02Z' },
    /start --from 2026-11-22T06:01:02\.000000Z is after its end --to/,
  );
  assert.throws(() => resolveWindow({ from: 'x' }), /SvcError: from "x"/);
});

test('a bound outside the years 0000 to 9999 in UTC is invalid_window, so the echoed window stays ISO 8601', () => {
  const refused = (input: { from?: string; to?: string }) =>
    assert.throws(
      () => resolveWindow(input),
      (err) =>
        isSvcError(err) &&
        err.code === 'invalid_window' &&
        err.exitCode === 2 &&
        /falls outside the years 0000 to 9999 in UTC; pass a bound within them\.$/.test(err.message),
    );
  refused({ to: '9999-12-31T23:00:00-05:00' }); // 10000-01-01T04:00Z
  refused({ from: '0000-01-01T00:00:00+05:00' }); // the last day of year -1
  const edges = resolveWindow({ from: '0000-01-01T00:00:00Z', to: '9999-12-31T23:59:59Z' });
  assert.deepEqual(formatWindow(edges), {
    start: '0000-01-01T00:00:00.000000Z',
    end: '9999-12-31T23:59:59.000000Z',
  });
  // the years' last and first microseconds, which a double cannot hold (before: 400 'falls outside' for
  // the last, rounded onto 10000-01-01; the first echoed as 0000-01-01T00:00:00.000000Z)
  const utmost = resolveWindow({ from: '0000-01-01T00:00:00.000001Z', to: '9999-12-31T23:59:59.999999Z' });
  assert.deepEqual(formatWindow(utmost), {
    start: '0000-01-01T00:00:00.000001Z',
    end: '9999-12-31T23:59:59.999999Z',
  });
  assert.deepEqual(formatWindow(parseWindow({ to: '9999-12-31T23:59:59.999999Z' }, 0)), {
    start: '9999-12-24T23:59:59.999999Z',
    end: '9999-12-31T23:59:59.999999Z',
  });
  assert.deepEqual(
    formatWindow(resolveWindow({ to: '9999-12-31T23:59:59.9999981Z' })).end,
    '9999-12-31T23:59:59.999999Z',
  );
  refused({ to: '9999-12-31T23:59:59.9999991Z' }); // rounds up onto 10000-01-01
  assert.throws(
    () => resolveWindow({ from: '9999-12-31T23:59:59.999998Z', to: '9999-12-31T23:59:59.999997Z' }),
    /start from 9999-12-31T23:59:59\.999998Z is after its end to 9999-12-31T23:59:59\.999997Z/,
  );
  // the default start (7 days before `to`) never falls before year 0000 either
  const early = parseWindow({ to: '0000-01-03T00:00:00Z' }, 0);
  assert.deepEqual(formatWindow(early), {
    start: '0000-01-01T00:00:00.000000Z',
    end: '0000-01-03T00:00:00.000000Z',
  });
});

test('a bound between two microseconds moves up to the next one: from keeps including, to keeps excluding', () => {
  const w = resolveWindow({ from: '2026-11-22T06:01:02.1234561Z', to: '2026-11-22T06:01:02.123457001Z' });
  // an event at .123456 is before from, one at .123457 is before to
  assert.deepEqual(formatWindow(w), {
    start: '2026-11-22T06:01:02.123457Z',
    end: '2026-11-22T06:01:02.123458Z',
  });
  const exact = resolveWindow({ from: '2026-11-22T06:01:02.123456000Z', to: '2026-11-22T06:01:02.1234570Z' });
  assert.deepEqual(formatWindow(exact), {
    start: '2026-11-22T06:01:02.123456Z',
    end: '2026-11-22T06:01:02.123457Z',
  });
  // ISO 8601 sets no limit on the fraction's digits: past nine they round the same way
  const long = resolveWindow({
    from: '2026-11-22T06:01:02.1234560000001Z',
    to: `2026-11-22T06:01:02.12346${'0'.repeat(40)}Z`,
  });
  assert.deepEqual(formatWindow(long), {
    start: '2026-11-22T06:01:02.123457Z',
    end: '2026-11-22T06:01:02.123460Z',
  });
});

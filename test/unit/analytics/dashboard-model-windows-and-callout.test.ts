/**
 * The dashboard's DOM-free parts: window presets computed in the browser's time zone and sent as UTC
 * (checked under a zone with DST), the concentration callout strictly above 50 % only, signed money and
 * the savings warning.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

process.env.TZ = 'America/New_York'; // before any Date use: Node reads TZ lazily

const {
  bucketFor,
  concentrationCallouts,
  formatPercent,
  formatShare,
  formatUsd,
  formatUsdTick,
  localInputToUtc,
  resolvePreset,
  savingsView,
} = await import('#src/analytics/dashboard/model.ts');

test('presets start at local midnight and end now, as UTC', () => {
  const now = new Date('2026-03-09T15:30:00Z'); // 11:30 in New York, the day after DST began
  assert.deepEqual(resolvePreset('today', now), {
    from: '2026-03-09T04:00:00.000Z',
    to: '2026-03-09T15:30:00.000Z',
  });
  // six days before: before the DST change, so local midnight is 05:00 UTC
  assert.deepEqual(resolvePreset('7d', now), {
    from: '2026-03-03T05:00:00.000Z',
    to: '2026-03-09T15:30:00.000Z',
  });
  assert.equal(resolvePreset('30d', now).from, '2026-02-08T05:00:00.000Z');
  assert.deepEqual(resolvePreset('custom', now, { from: '2026-03-01T09:30', to: '2026-03-10T00:00' }), {
    from: '2026-03-01T14:30:00.000Z',
    to: '2026-03-10T04:00:00.000Z',
  });
  // a custom window that ends where or before it starts is refused in the page, before any request
  for (const to of ['2026-03-01T09:30', '2026-02-28T09:30'])
    assert.throws(
      () => resolvePreset('custom', now, { from: '2026-03-01T09:30', to }),
      /^Error: The custom window must end after it starts\.$/,
    );
  assert.throws(() => localInputToUtc('yesterday'));
  // a year below 100 is that year, not 19xx (Date's two-digit-year rule)
  assert.match(localInputToUtc('0050-06-01T00:00'), /^0050-06-01T0/);
  assert.equal(bucketFor(resolvePreset('today', now)), 'hour');
  assert.equal(bucketFor(resolvePreset('7d', now)), 'day');
});

test('the callout appears only when one identity takes strictly more than half of the spend', () => {
  const team = (id: string | null, cost_usd: number) => ({
    kind: 'team' as const,
    id,
    cost_usd,
    call_count: 1,
  });
  const user = (id: string | null, cost_usd: number) => ({
    kind: 'user' as const,
    id,
    cost_usd,
    call_count: 1,
  });
  const key = (id: string | null, cost_usd: number) => ({
    kind: 'key' as const,
    id,
    cost_usd,
    call_count: 1,
  });
  assert.deepEqual(
    concentrationCallouts(10, [team('t1', 5), team('t2', 5)]),
    [],
    'exactly half is not above half',
  );
  assert.deepEqual(concentrationCallouts(10, [team('t1', 5.5), team('t2', 4.5)]), [
    { kind: 'team', id: 't1', share: 0.55 },
  ]);
  assert.deepEqual(
    concentrationCallouts(10, [team('t1', 5.000001), team('t2', 4.999999)]).map((c) => c.id),
    ['t1'],
    'just above half',
  );
  assert.deepEqual(
    concentrationCallouts(10, [team(null, 9), user(null, 9), key(null, 9)]),
    [],
    'untagged is nobody',
  );
  // each kind has its own callout: a top developer and a top key are both called out, teams first
  assert.deepEqual(
    concentrationCallouts(10, [team('t1', 4), user('alice', 6), key('gk_1', 8), key('gk_2', 2)]),
    [
      { kind: 'user', id: 'alice', share: 0.6 },
      { kind: 'key', id: 'gk_1', share: 0.8 },
    ],
  );
  assert.deepEqual(
    concentrationCallouts(10, [team('t1', 7), user('alice', 5), key('gk_1', 7)]).map((c) => c.kind),
    ['team', 'key'],
  );
  assert.deepEqual(concentrationCallouts(0, [team('t1', 0)]), []);
  // a share shows the side of half it is on: a called-out one never reads as 50.0%, exactly half does
  assert.deepEqual([0.500133, 0.49996, 0.5, 0.6, 0.5000000001].map(formatShare), [
    '50.01%',
    '49.996%',
    '50.0%',
    '60.0%',
    '50.00000001%',
  ]);
});

test('the chart axis gives each tick its own label: no two read the same', () => {
  // Chart.js steps of half a cent: cents alone would label 0.015 and 0.02 both $0.02
  assert.deepEqual([0, 0.005, 0.01, 0.015, 0.02, 0.025, 0.030000000000000002].map(formatUsdTick), [
    '$0.00',
    '$0.005',
    '$0.01',
    '$0.015',
    '$0.02',
    '$0.025',
    '$0.03',
  ]);
  assert.deepEqual([0.0000005, 1.5, 2500, -0.25].map(formatUsdTick), [
    '$0.0000005',
    '$1.50',
    '$2,500.00',
    '-$0.25',
  ]);
});

test('money keeps its sign; the savings tile warns when rows lack prices', () => {
  assert.equal(formatUsd(1234.5), '$1,234.50');
  assert.equal(formatUsd(-0.0042), '-$0.0042');
  assert.equal(formatUsd(0.000123), '$0.000123');
  // a call of a cheap model (gpt-5-nano: 2 input and 1 output token cost $0.0000005) is shown as spent, to
  // its own digits: never $0.00, and never rounded up to twice itself ($0.000001)
  assert.equal(formatUsd(0.0000005), '$0.0000005');
  assert.equal(formatUsd(0.00000005), '$0.00000005');
  assert.equal(formatUsd(-0.00000025), '-$0.00000025');
  assert.equal(formatUsd(0.0000305), '$0.0000305');
  assert.equal(formatUsd(0), '$0.00');
  assert.equal(formatPercent(-0.005008), '-0.5%');
  const v = savingsView({
    savings_usd: -3.45,
    savings_pct: -0.72,
    baseline_model: 'm',
    rows_missing_from_price_table: 2,
  });
  assert.deepEqual(v, {
    amount: '-$3.45',
    percent: '-72.0%',
    negative: true,
    baseline: 'm',
    warning: '2 calls used models missing from the price table: the percentage is overstated.',
  });
  assert.equal(
    savingsView({ savings_usd: 0, savings_pct: null, baseline_model: 'm', rows_missing_from_price_table: 0 })
      .warning,
    null,
  );
});

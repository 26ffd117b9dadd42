import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBus } from '#src/events/bus.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';
import { createQuotaManager, type QuotaSeed, windowEndUs, windowStartUs } from '#src/gateway/quota.ts';
import { formatDecimal, parseDecimal, ZERO } from '#src/lib/decimal.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0) * 1000;

function setup(seed: Partial<QuotaSeed> = {}) {
  let now = T0;
  const clock = { nowUs: () => now };
  const bus = createBus({ newId: createIdFactory(), clock, log: silentLogger });
  const events: EventEnvelope[] = [];
  bus.subscribe({ name: 'recorder', handle: (e) => void events.push(e) });
  const quota = createQuotaManager({
    bus,
    clock,
    seed: { spentSince: () => ZERO, alertedSince: () => false, ...seed },
  });
  return { quota, events, setNow: (us: number) => (now = us) };
}

const key = { key_id: 'gk_1', daily_cap_usd: '1.00', user_id: 'u1', team_id: null };

test('concurrent admissions reserve the worst case so the cap admits exactly what fits', () => {
  const { quota, events } = setup();
  const admitted = [];
  let refused = 0;
  for (let i = 0; i < 50; i++) {
    try {
      admitted.push(quota.admit(key, parseDecimal('0.1')));
    } catch (err) {
      assert.ok(isSvcError(err) && err.code === 'quota_exceeded');
      refused++;
    }
  }
  assert.equal(admitted.length, 10);
  assert.equal(refused, 40);
  assert.equal(events.filter((e) => e.type === 'gateway.quota_exceeded').length, 40);
});

test('settling to the real cost frees the unused part of the reservation', () => {
  const { quota } = setup();
  const r = quota.admit(key, parseDecimal('0.9'));
  assert.throws(() => quota.admit(key, parseDecimal('0.2')));
  r.settle(parseDecimal('0.1'));
  quota.admit(key, parseDecimal('0.9')).release();
});

test('a released reservation costs nothing', () => {
  const { quota } = setup();
  quota.admit(key, parseDecimal('1.0')).release();
  quota.admit(key, parseDecimal('1.0')).settle(parseDecimal('0.5'));
});

test('the 80 % alert fires once per key, cap kind and window', () => {
  const { quota, events, setNow } = setup();
  for (let i = 0; i < 9; i++) quota.admit(key, parseDecimal('0.1')).settle(parseDecimal('0.1'));
  const alerts = events.filter((e) => e.type === 'quota.alert');
  assert.equal(alerts.length, 1);
  const p = alerts[0].payload as Record<string, unknown>;
  assert.equal(p.cap_kind, 'daily');
  assert.equal(p.identity_kind, 'key');
  assert.equal(p.identity_id, 'gk_1');
  assert.equal(p.spent_usd, '0.800000');
  // next UTC day: a fresh window, spend reset, a new alert possible
  setNow(windowEndUs('daily', windowStartUs('daily', T0)) + 1);
  for (let i = 0; i < 8; i++) quota.admit(key, parseDecimal('0.1')).settle(parseDecimal('0.1'));
  assert.equal(events.filter((e) => e.type === 'quota.alert').length, 2);
});

test('the refusal names the cap kind, cap, spend and the UTC reset time', () => {
  const { quota } = setup({ spentSince: () => parseDecimal('0.95') });
  try {
    quota.admit(key, parseDecimal('0.1'));
    assert.fail('should refuse');
  } catch (err) {
    assert.ok(isSvcError(err));
    assert.equal(err.status, 429);
    assert.deepEqual(
      { ...err.details },
      {
        cap_kind: 'daily',
        cap_usd: '1.000000',
        spent_usd: '0.950000',
        reserved_usd: '0.000000',
        requested_usd: '0.100000',
        resets_at: '2026-11-23T00:00:00.000000Z',
      },
    );
  }
});

test('monthly caps use the UTC calendar month', () => {
  assert.equal(windowStartUs('monthly', T0), Date.UTC(2026, 10, 1) * 1000);
  assert.equal(windowEndUs('monthly', windowStartUs('monthly', T0)), Date.UTC(2026, 11, 1) * 1000);
  assert.equal(windowEndUs('monthly', Date.UTC(2026, 11, 1) * 1000), Date.UTC(2027, 0, 1) * 1000);
  const { quota } = setup();
  const monthly = { key_id: 'gk_2', monthly_cap_usd: '5' };
  quota.admit(monthly, parseDecimal('5')).settle(parseDecimal('5'));
  assert.throws(() => quota.admit(monthly, parseDecimal('0.000001')));
});

test('keys without caps are never refused', () => {
  const { quota } = setup();
  for (let i = 0; i < 100; i++)
    quota.admit({ key_id: 'gk_3' }, parseDecimal('1000')).settle(parseDecimal('1000'));
  assert.equal(formatDecimal(ZERO), '0.000000');
});

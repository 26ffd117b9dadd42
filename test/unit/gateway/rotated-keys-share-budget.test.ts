/**
 * A rotation's keys share one budget. The keystore names it on the successor (budget_key_id: the chain's
 * first key, so a chain of rotations shares one); on both engines the quota manager counts the keys'
 * spend, holds and alert together, seeded at start from the spend of every key of the budget (SQLite:
 * the keystore at start; PostgreSQL: gateway_keys), and spend today (cost_today_above) follows it.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import { createBus } from '#src/events/bus.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';
import {
  budgetKeyIdOf,
  decodeKeystore,
  issueKey,
  type KeyRecord,
  type Keystore,
  resolveBudgetOf,
  rotateKey,
} from '#src/gateway/keystore/keystore.ts';
import { updateKeyTable } from '#src/gateway/keystore/table.ts';
import { createQuotaManager, type QuotaManager } from '#src/gateway/quota.ts';
import { loadQuotaSeed } from '#src/gateway/quota-seed.ts';
import { createTableQuotaManager } from '#src/gateway/quota-table.ts';
import { loadSpendToday } from '#src/gateway/spend-today.ts';
import { formatDecimal, parseDecimal } from '#src/lib/decimal.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { formatUs } from '#src/lib/time.ts';
import { openStore, type PostgresStore, type Store } from '#src/store/open.ts';
import { describeEachEngine, type EngineUnderTest } from '../../helpers/engines.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0) * 1000;
const HOUR = 3_600_000_000;
const d = parseDecimal;
const deps = () => ({ newId: createIdFactory(), nowUs: T0 });
const input = { name: 'ci', workspace_path: '/w', daily_cap_usd: '1', monthly_cap_usd: '30' };

/** A key, its successor and the successor's successor. */
function chain(): { store: Keystore; keys: [KeyRecord, KeyRecord, KeyRecord] } {
  const first = issueKey({ keys: [] }, input, deps());
  const second = rotateKey(first.store, first.record.key_id, HOUR, deps());
  const third = rotateKey(second.store, second.successor.key_id, HOUR, deps());
  return { store: third.store, keys: [first.record, second.successor, third.successor] };
}

test('a successor names the first key of its rotation chain as its budget', () => {
  const { store, keys } = chain();
  const [first, second, third] = keys;
  assert.equal(first.budget_key_id, undefined, 'an issued key is its own budget');
  assert.equal(second.budget_key_id, first.key_id);
  assert.equal(third.budget_key_id, first.key_id, 'not the predecessor: the chain shares one budget');
  assert.deepEqual(keys.map(budgetKeyIdOf), [first.key_id, first.key_id, first.key_id]);
  const budgetOf = resolveBudgetOf(store.keys);
  assert.equal(budgetOf(third.key_id), first.key_id);
  assert.equal(budgetOf('gk_unknown'), 'gk_unknown', 'a key the keystore does not hold is its own');
  assert.ok(decodeKeystore(JSON.parse(JSON.stringify(store))).ok, 'the field survives a write and a read');
});

test('a keystore without budget_key_id stays valid; a malformed one is refused naming the field', () => {
  const { store, keys } = chain();
  const old = { keys: store.keys.map(({ budget_key_id: _b, ...rest }) => rest) };
  assert.ok(decodeKeystore(old).ok);
  const bad = { keys: [{ ...keys[0] }, { ...keys[1], budget_key_id: 'first' }] };
  const r = decodeKeystore(bad);
  assert.ok(!r.ok);
  assert.match(r.reason, /^keys\[1\]\.budget_key_id: must have the form gk_<ulid>/);
});

describeEachEngine('rotated keys share one budget', postgres, (engine) => {
  engine.test('a successor is admitted only for what its predecessors left, alert once', async (t) => {
    const { store, keys } = chain();
    const r = await managers(engine, t, store, []);
    const [first, second, third] = keys;
    await settled(r.manager, async () => (await r.manager.admit(first, d('0.5'))).settle(d('0.5')));
    await settled(r.manager, async () => (await r.manager.admit(second, d('0.4'))).settle(d('0.3')));
    const held = await r.manager.admit(third, d('0.15'));
    await assert.rejects(
      async () => r.manager.admit(first, d('0.1')),
      (err: unknown) =>
        isSvcError(err) &&
        err.code === 'quota_exceeded' &&
        err.details?.spent_usd === '0.800000' &&
        err.details?.reserved_usd === '0.150000',
    );
    await settled(r.manager, () => held.release());
    await r.manager.admit(second, d('0.2'));
    const alerts = r.events.filter((e) => e.type === 'quota.alert');
    assert.equal(alerts.length, 1, 'one alert for the budget');
    assert.equal(keyOf(alerts[0]), second.key_id, 'named after the key whose call crossed');
    const refused = r.events.filter((e) => e.type === 'gateway.quota_exceeded');
    assert.deepEqual(refused.map(keyOf), [first.key_id]);
  });

  engine.test('at start the spend of every key of the budget is seeded, and its alert', async (t) => {
    const { store, keys } = chain();
    const [first, second, third] = keys;
    const other = issueKey(store, input, deps());
    const events = [
      spend(1, first.key_id, '0.4'),
      spend(2, second.key_id, '0.45'),
      spend(3, other.record.key_id, '0.5'), // another budget
      alert(4, second.key_id),
    ];
    const r = await managers(engine, t, other.store, events);
    await assert.rejects(
      async () => r.manager.admit(third, d('0.2')),
      (err: unknown) => isSvcError(err) && err.details?.spent_usd === '0.850000',
    );
    await settled(r.manager, async () => (await r.manager.admit(third, d('0.1'))).settle(d('0.1')));
    assert.equal(r.events.filter((e) => e.type === 'quota.alert').length, 0, 'the alert already went out');
    await r.manager.admit(other.record, d('0.5'));
  });

  engine.test('spend today is counted per budget', async (t) => {
    const { store, keys } = chain();
    const db = await openStore(await engine.target());
    t.after(() => db.close());
    await db.appendEvents([spend(1, keys[0].key_id, '0.25'), spend(2, keys[1].key_id, '0.5')]);
    const today = await loadSpendToday(db, { nowUs: () => T0 }, resolveBudgetOf(store.keys));
    assert.equal(formatDecimal(today.of(budgetKeyIdOf(keys[2])), 2), '0.75');
    today.add(budgetKeyIdOf(keys[2]), d('0.1'));
    assert.equal(formatDecimal(today.of(keys[0].key_id), 2), '0.85');
  });
});

// --- internal ---

const keyOf = (e: EventEnvelope) => (e.payload as { gateway_key_id?: string }).gateway_key_id;

type Row = Parameters<Store['appendEvents']>[0][number];

function event(n: number, type: string, payload: Record<string, unknown>): Row {
  return {
    id: `01JZ00000000000000000000${String(n).padStart(2, '0')}`,
    timestamp: formatUs(T0 - 1000 + n),
    timestamp_us: T0 - 1000 + n,
    session_id: null,
    turn_id: `t${n}`,
    type,
    actor: 'gateway',
    payload: JSON.stringify(payload),
    parent_event_id: null,
    sensitivity: 'pseudonymous',
  };
}

const spend = (n: number, keyId: string, cost: string) =>
  event(n, 'llm.call_completed', { gateway_key_id: keyId, cost_usd: cost });
const alert = (n: number, keyId: string) =>
  event(n, 'quota.alert', { gateway_key_id: keyId, cap_kind: 'daily', identity_kind: 'key' });

/** The engine's manager over a store holding `events`, and the keys where that engine keeps them. */
async function managers(
  engine: EngineUnderTest,
  t: TestContext,
  keystore: Keystore,
  events: Row[],
): Promise<{ manager: QuotaManager; events: EventEnvelope[] }> {
  const target = await engine.target();
  const store = await openStore(target);
  let manager: QuotaManager & { close?(): Promise<void> };
  t.after(async () => {
    await manager?.close?.();
    await store.close();
  });
  if (events.length) await store.appendEvents(events);
  const published: EventEnvelope[] = [];
  const clock = { nowUs: () => T0 };
  const bus = createBus({ newId: createIdFactory(), clock, log: silentLogger });
  bus.subscribe({ name: 'recorder', handle: (e) => void published.push(e) });
  if (store.engine === 'sqlite') {
    const seed = await loadQuotaSeed(store, T0, resolveBudgetOf(keystore.keys));
    manager = createQuotaManager({ bus, clock, seed });
    return { manager, events: published };
  }
  const pg = store as PostgresStore;
  await updateKeyTable(pg, () => ({ next: keystore, result: undefined }));
  manager = createTableQuotaManager({ store: pg, bus, clock, newId: createIdFactory(), log: silentLogger });
  return { manager, events: published };
}

/** Runs a settle or release and waits until the manager has written it (PostgreSQL writes it later). */
async function settled(m: QuotaManager, fn: () => unknown): Promise<void> {
  await fn();
  await (m as { flush?: () => Promise<void> }).flush?.();
}

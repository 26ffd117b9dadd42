/**
 * Spend caps on both engines: the in-memory manager of a SQLite gateway, and on PostgreSQL the table
 * manager of three "replicas" (separate pools, as separate processes have). Concurrent admissions never
 * pass a cap, settling frees the unused reservation, the 80 % alert goes out once whichever replica
 * crosses it, spend already in the trace counts, and (PostgreSQL) the holds of a replica that died stop
 * counting once another one sweeps.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import pg from 'pg';
import { createBus } from '#src/events/bus.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { createQuotaManager, type QuotaManager, type Reservation } from '#src/gateway/quota.ts';
import { loadQuotaSeed } from '#src/gateway/quota-seed.ts';
import { createTableQuotaManager } from '#src/gateway/quota-table.ts';
import { parseDecimal } from '#src/lib/decimal.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { formatUs } from '#src/lib/time.ts';
import { openStore, type PostgresStore, type Store } from '#src/store/open.ts';
import { describeEachEngine, type EngineUnderTest } from '../../helpers/engines.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0) * 1000;
const key = { key_id: 'gk_1', daily_cap_usd: '1.00', monthly_cap_usd: '30', user_id: 'u1', team_id: null };
const d = parseDecimal;

interface Replicas {
  /** The managers (one for SQLite, three for PostgreSQL). */
  managers: QuotaManager[];
  events: EventEnvelope[];
  store: Store;
}

describeEachEngine('budget caps', postgres, (engine) => {
  const { test } = engine;

  if (engine.name === 'postgres')
    test('a capped key is refused with 503 budget_store_unavailable while the store is unreachable', async () => {
      const target = await engine.target();
      const replica = await tableReplica(String((target as { url: string }).url), []);
      await replica.manager.close();
      await replica.store.close(); // what a lost database looks like to the manager: every query fails
      await assert.rejects(
        async () => replica.manager.admit(key, d('0.1')),
        (err: unknown) =>
          isSvcError(err) &&
          err.code === 'budget_store_unavailable' &&
          err.status === 503 &&
          err.details?.retry_after_ms === 1000,
      );
    });

  test('50 concurrent admissions against a cap that fits 10 admit exactly 10', async (t) => {
    const r = await replicas(engine, t);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, async (_, i) => r.managers[i % r.managers.length].admit(key, d('0.1'))),
    );
    const admitted = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o) => o.status === 'rejected');
    assert.equal(admitted.length, 10);
    for (const o of refused) assert.ok(isSvcError(o.reason) && o.reason.code === 'quota_exceeded');
    assert.equal(r.events.filter((e) => e.type === 'gateway.quota_exceeded').length, 40);
  });

  test('settling frees the unused reservation; a release costs nothing', async (t) => {
    const r = await replicas(engine, t);
    const [a, b = a] = r.managers;
    const big = await a.admit(key, d('0.9'));
    // not reached yet: the refusal says what is spent, what is held and what this request could cost
    await assert.rejects(
      async () => b.admit(key, d('0.2'), { turn_id: 'turn_1' }),
      /daily spend cap of 1\.000000 USD for this key could be passed by this request: spent 0\.000000 USD, 0\.900000 USD held for calls in flight, and this request can cost up to 0\.200000 USD/,
    );
    // the refusal is filed under the request's turn, like every other event of a gateway call
    assert.equal(r.events.filter((e) => e.type === 'gateway.quota_exceeded').at(-1)?.turn_id, 'turn_1');
    await settled(a, () => big.settle(d('0.1')));
    const again = await b.admit(key, d('0.9'));
    await settled(b, () => again.release());
    await settled(a, async () => (await a.admit(key, d('0.9'))).settle(d('0.85')));
    await assert.rejects(
      async () => b.admit(key, d('0.1')),
      (err: unknown) => {
        assert.ok(isSvcError(err));
        assert.equal(err.details?.spent_usd, '0.950000');
        assert.match(err.message, /could be passed/);
        assert.equal(err.details?.resets_at, '2026-11-23T00:00:00.000000Z');
        return true;
      },
    );
  });

  test('the 80 % alert is published once, whichever replica crosses it', async (t) => {
    const r = await replicas(engine, t);
    for (let i = 0; i < 9; i++) {
      const m = r.managers[i % r.managers.length];
      const hold: Reservation = await m.admit(key, d('0.1'));
      await settled(m, () => hold.settle(d('0.1')));
    }
    const alerts = r.events.filter((e) => e.type === 'quota.alert');
    assert.equal(alerts.length, 1);
    assert.equal((alerts[0].payload as { spent_usd: string }).spent_usd, '0.800000');
  });

  test('spend already in the trace counts against the cap', async (t) => {
    const target = await engine.target();
    const seedStore = await openStore(target);
    await seedStore.appendEvents([
      {
        id: '01JZ0000000000000000000001',
        timestamp: formatUs(T0 - 1000),
        timestamp_us: T0 - 1000,
        session_id: null,
        turn_id: 't',
        type: 'llm.call_completed',
        actor: 'gateway',
        payload: JSON.stringify({ gateway_key_id: 'gk_1', cost_usd: '0.95' }),
        parent_event_id: null,
        sensitivity: 'pseudonymous',
      },
    ]);
    await seedStore.close();
    const r = await replicas(engine, t, target);
    await assert.rejects(async () => r.managers[0].admit(key, d('0.1')), /spent 0\.950000 USD/);
    await r.managers[0].admit(key, d('0.05'));
  });

  test('a call admitted before UTC midnight and settled after it counts once in the new day', async (t) => {
    // the gateway publishes llm.call_completed, then settles; the trace may commit the event first, so the
    // new day's spend, first needed by this very settlement, must not count it from the trace and again
    const beforeMidnight = Date.UTC(2026, 10, 22, 23, 59, 59) * 1000;
    const afterMidnight = Date.UTC(2026, 10, 23, 0, 0, 1) * 1000;
    let now = beforeMidnight;
    const r = await replicas(engine, t, undefined, { nowUs: () => now });
    const [a, b = a] = r.managers;
    const hold = await a.admit(key, d('0.5'), { turn_id: 'turn_midnight' });
    now = afterMidnight;
    await r.store.appendEvents([
      {
        id: '01JZ0000000000000000000009',
        timestamp: formatUs(afterMidnight - 10),
        timestamp_us: afterMidnight - 10,
        session_id: null,
        turn_id: 'turn_midnight',
        type: 'llm.call_completed',
        actor: 'gateway',
        payload: JSON.stringify({ gateway_key_id: 'gk_1', cost_usd: '0.3' }),
        parent_event_id: null,
        sensitivity: 'pseudonymous',
      },
    ]);
    await settled(a, () => hold.settle(d('0.3')));
    await assert.rejects(
      async () => b.admit(key, d('0.8')),
      (err: unknown) => isSvcError(err) && err.details?.spent_usd === '0.300000',
    );
  });

  test('the priced usage of a stream that broke counts after a restart as it did before', async (t) => {
    // a running gateway settles a broken stream's hold to the usage the provider reported (and billed),
    // stamped on llm.call_failed; the spend seeded at the next start must be the same
    const target = await engine.target();
    const seedStore = await openStore(target);
    const event = (n: number, type: string, payload: Record<string, unknown>) => ({
      id: `01JZ000000000000000000000${n}`,
      timestamp: formatUs(T0 - 1000 + n),
      timestamp_us: T0 - 1000 + n,
      session_id: null,
      turn_id: `t${n}`,
      type,
      actor: 'gateway',
      payload: JSON.stringify(payload),
      parent_event_id: null,
      sensitivity: 'pseudonymous',
    });
    await seedStore.appendEvents([
      event(1, 'llm.call_completed', { gateway_key_id: 'gk_1', cost_usd: '0.5' }),
      event(2, 'llm.call_failed', { gateway_key_id: 'gk_1', cost_usd: '0.45', error_class: 'server_error' }),
      event(3, 'llm.call_failed', { gateway_key_id: 'gk_1', error_class: 'overloaded' }),
    ]);
    await seedStore.close();
    const r = await replicas(engine, t, target);
    await assert.rejects(async () => r.managers[0].admit(key, d('0.1')), /spent 0\.950000 USD/);
    await r.managers[0].admit(key, d('0.05'));
  });
});

test('the holds of a replica that died stop counting once a live one sweeps', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const dying = await tableReplica(`${url}?application_name=dying`, []);
  const live = await tableReplica(`${url}?application_name=live`, []);
  t.after(() => live.close());
  await dying.store.announcePresence();
  await live.store.announcePresence();
  await dying.manager.admit(key, d('0.9'));
  assert.equal(await live.manager.sweep(), 0, 'a live replica keeps its holds');
  await assert.rejects(async () => live.manager.admit(key, d('0.2')));
  await dying.store.close(); // its presence lock ends with its connections, as with kill -9
  // dead at two sweeps in a row (SWEEP_MS apart), not one: see the reconnecting replica below
  assert.equal(await live.manager.sweep(), 0);
  assert.equal(await live.manager.sweep(), 1);
  await live.manager.admit(key, d('0.9'));
});

test('a replica whose presence lapses while it reconnects (a PostgreSQL restart) keeps its holds', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const reconnecting = await tableReplica(`${url}?application_name=reconnecting`, []);
  const other = await tableReplica(`${url}?application_name=other`, []);
  t.after(() => Promise.all([reconnecting.close(), other.close()]));
  await reconnecting.store.announcePresence();
  await other.store.announcePresence();
  await reconnecting.manager.admit(key, d('0.9'));
  // the server ends its session connection (the one holding the presence lock), as a restart does;
  // until it is back, its origin looks dead to a sweep
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  t.after(() => admin.end());
  const { rows } = await admin.query<{ pid: number }>(
    "SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory' AND a.application_name = 'reconnecting' AND a.datname = current_database()",
  );
  assert.equal(rows.length, 1);
  await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
  while ((await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0].pid])).rowCount) {}
  assert.equal(await other.manager.sweep(), 0, 'a live replica lost its hold');
  await assert.rejects(async () => other.manager.admit(key, d('0.2')), /0\.900000 USD held/);
});

// a settlement was written after the call's answer: a client calling again at once was checked (and told
// spent_usd) without the call it had just been answered, while the window row was still being waited for
test('a settlement resolves only once the window holds its cost', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const replica = await tableReplica(`${url}?application_name=settling`, []);
  t.after(() => replica.close());
  const hold = await replica.manager.admit(key, d('0.5'));
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  t.after(() => admin.end());
  await admin.query('BEGIN');
  await admin.query('SELECT * FROM budget_windows FOR UPDATE'); // the settlement queues behind this
  let written = false;
  const settling = Promise.resolve(hold.settle(d('0.3'))).then(() => (written = true));
  const waiting = () =>
    admin.query(
      "SELECT 1 FROM pg_stat_activity WHERE application_name = 'settling' AND wait_event_type = 'Lock' AND datname = current_database()",
    );
  while (!(await waiting()).rowCount) {}
  const early = written;
  await admin.query('COMMIT');
  assert.equal(early, false, 'resolved while its window row was still locked');
  await settling;
  // no flush: what the settlement resolved after is what the next admission reads
  await assert.rejects(
    async () => replica.manager.admit(key, d('0.8')),
    /spent 0\.300000 USD, 0\.000000 USD held/,
  );
});

// --- internal ---

async function replicas(
  engine: EngineUnderTest,
  t: TestContext,
  given?: Awaited<ReturnType<EngineUnderTest['target']>>,
  clock = { nowUs: () => T0 },
): Promise<Replicas> {
  const target = given ?? (await engine.target());
  const events: EventEnvelope[] = [];
  if (target.engine === 'sqlite') {
    const store = await openStore(target);
    t.after(() => store.close());
    const bus = createBus({ newId: createIdFactory(), clock, log: silentLogger });
    bus.subscribe({ name: 'recorder', handle: (e) => void events.push(e) });
    const manager = createQuotaManager({ bus, clock, seed: await loadQuotaSeed(store, clock.nowUs()) });
    return { managers: [manager], events, store };
  }
  const list = await Promise.all(
    [1, 2, 3].map((i) => tableReplica(`${target.url}?application_name=replica${i}`, events, clock)),
  );
  t.after(() => Promise.all(list.map((l) => l.close())));
  return { managers: list.map((l) => l.manager), events, store: list[0].store };
}

async function tableReplica(url: string, events: EventEnvelope[], clock = { nowUs: () => T0 }) {
  const store = (await openStore({ engine: 'postgres', url })) as PostgresStore;
  const bus = createBus({ newId: createIdFactory(), clock, log: silentLogger });
  bus.subscribe({ name: 'recorder', handle: (e) => void events.push(e) });
  const writer = createTraceWriter({ store, log: silentLogger });
  bus.subscribe(writer.subscriber);
  const manager = createTableQuotaManager({ store, bus, clock, newId: createIdFactory(), log: silentLogger });
  return {
    store,
    manager,
    async close() {
      await manager.close();
      await writer.stop();
      await store.close();
    },
  };
}

/** Runs a settle or release and waits until the manager has written it (PostgreSQL writes it later). */
async function settled(m: QuotaManager, fn: () => unknown): Promise<void> {
  await fn();
  await (m as { flush?: () => Promise<void> }).flush?.();
}

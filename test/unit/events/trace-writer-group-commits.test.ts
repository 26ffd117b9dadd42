import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { type Bus, createBus } from '#src/events/bus.ts';
import { createTraceWriter, type TraceWriter } from '#src/events/trace-writer.ts';
import { runGapDetection } from '#src/gateway/startup-gaps.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { createLogger, silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { openStore, type PostgresStore, type Store } from '#src/store/open.ts';
import type { EventRow } from '#src/store/schema.ts';
import { describeEachEngine } from '../../helpers/engines.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();

interface Rig {
  store: Store;
  bus: Bus;
  writer: TraceWriter;
  /** A second, independent connection to the same store. */
  other: Store;
  count(type?: string): Promise<number>;
  row(id: string): Promise<EventRow | undefined>;
}

describeEachEngine('trace writer', postgres, (engine) => {
  async function rig(t: { after: (fn: () => unknown) => void }, log = silentLogger): Promise<Rig> {
    const target = await engine.target();
    const store = await openStore(target);
    const bus = createBus({ newId: createIdFactory(), clock: systemClock, log });
    const writer = createTraceWriter({ store, log });
    bus.subscribe(writer.subscriber);
    await writer.flush();
    const other = await openStore(target, { readOnly: true });
    t.after(async () => {
      await other.close();
      await writer.stop();
      await store.close();
    });
    const count = async (type?: string) => {
      let q = other.kysely.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('c'));
      if (type) q = q.where('type', '=', type);
      return Number((await q.executeTakeFirstOrThrow()).c);
    };
    const row = (id: string) =>
      other.kysely.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst();
    return { store, bus, writer, other, count, row };
  }
  const { test } = engine;

  test('committed resolves only once the row is visible from a second connection', async (t) => {
    const r = await rig(t);
    const p = r.bus.publish({ type: 'turn.started', payload: { x: 1 } });
    assert.equal(r.writer.pending, 1); // queued, not yet committed
    let resolved = false;
    void p.committed.then(() => {
      resolved = true;
    });
    await Promise.resolve();
    assert.equal(resolved, false);
    await p.committed;
    assert.equal(await r.count('turn.started'), 1);
    const row = await r.row(p.event.id);
    assert.ok(row);
    assert.equal(row.timestamp, p.event.timestamp);
    assert.equal(row.timestamp_us, p.event.timestamp_us);
    assert.deepEqual(JSON.parse(String(row.payload)), { x: 1 });
    assert.equal(row.sensitivity, 'pseudonymous');
  });

  test('events published in one tick are committed in one transaction', async (t) => {
    const r = await rig(t);
    const before = r.writer.stats;
    const published = Array.from({ length: 500 }, (_, i) =>
      r.bus.publish({ type: 'llm.call_started', payload: { i } }),
    );
    // one promise per transaction, not one (or two) per event
    assert.equal(new Set(published.map((p) => p.committed)).size, 1);
    await Promise.all(published.map((p) => p.committed));
    const after = r.writer.stats;
    assert.equal(after.commits - before.commits, 1);
    assert.equal(after.rows - before.rows, 500);
    assert.equal(await r.count('llm.call_started'), 500);
  });

  test('events published in a later tick form the next group commit, all together', async (t) => {
    const r = await rig(t);
    const before = r.writer.stats.commits;
    const first = r.bus.publish({ type: 'turn.started', payload: {} });
    await new Promise((resolve) => setImmediate(resolve)); // the first group commit has run
    const rest = Array.from({ length: 50 }, () => r.bus.publish({ type: 'turn.completed', payload: {} }));
    await Promise.all([first.committed, ...rest.map((p) => p.committed)]);
    assert.ok(r.writer.stats.commits - before <= 2, `commits: ${r.writer.stats.commits - before}`);
    assert.equal(await r.count('turn.completed'), 50);
  });

  test('streaming-only events are delivered but never written', async (t) => {
    const r = await rig(t);
    const seen: string[] = [];
    r.bus.subscribe({ name: 'ws', handle: (e) => void seen.push(e.type) });
    const deltas = [
      'message.start',
      'text.delta',
      'thinking.delta',
      'tool.use_start',
      'tool.use_input_delta',
      'tool.use_end',
      'message.complete',
    ] as const;
    for (const type of deltas) await r.bus.publish({ type, payload: { text: 'secret' } }).committed;
    await r.writer.flush();
    assert.deepEqual(
      seen.filter((s) => !s.startsWith('bus.')),
      [...deltas],
    );
    const persisted = await r.other.kysely
      .selectFrom('events')
      .select('type')
      .where('type', 'not like', 'bus.%')
      .execute();
    assert.deepEqual(persisted, []);
  });

  test('stop flushes everything queued, then refuses further writes', async (t) => {
    const lines: string[] = [];
    const r = await rig(t, createLogger({ write: (l) => void lines.push(l) }));
    for (let i = 0; i < 100; i++)
      r.bus.publish({ type: 'tool.called', payload: { tool_use_id: `tu_${i}`, tool_name: 'read_file' } });
    assert.equal(r.writer.pending, 100);
    await r.writer.stop();
    assert.equal(await r.count('tool.called'), 100);
    assert.equal(
      await r.writer.write({ ...r.bus.publish({ type: 'turn.started', payload: {} }).event }),
      false,
    );
    assert.equal(await r.count('turn.started'), 0);
    assert.ok(lines.some((l) => l.includes('trace writer is stopped')));
  });

  test('a row the database refuses is dropped alone; the rest of its batch commits', async (t) => {
    const lines: string[] = [];
    const r = await rig(t, createLogger({ write: (l) => void lines.push(l) }));
    const good = r.bus.publish({ type: 'turn.started', payload: {} });
    // the same id twice: the second insert violates the primary key
    const dupe = r.writer.write(good.event);
    const other = r.bus.publish({ type: 'turn.completed', payload: {} });
    await Promise.all([good.committed, other.committed]);
    assert.equal(await dupe, false);
    assert.equal(await r.count('turn.started'), 1);
    assert.equal(await r.count('turn.completed'), 1);
    assert.equal(r.writer.stats.dropped, 1);
    assert.ok(lines.some((l) => JSON.parse(l).msg === 'trace writer dropped events'));
  });

  test('an append retried with ifAbsent skips the rows stored already: a batch is never refused or doubled for an unheard commit', async (t) => {
    const r = await rig(t);
    const rows = [1, 2].map((i) => {
      const e = r.bus.publish({ type: 'turn.completed', payload: { i } }).event;
      return { ...e, payload: JSON.stringify(e.payload) };
    });
    await r.writer.flush();
    assert.equal(await r.count('turn.completed'), 2);
    // a plain append of a stored id is refused: the primary key holds
    await assert.rejects(r.store.appendEvents(rows));
    const third = { ...rows[0], id: createIdFactory()(), payload: '{"i":3}' };
    await r.store.appendEvents([...rows, third], { ifAbsent: true });
    assert.equal(await r.count('turn.completed'), 3);
    assert.deepEqual(JSON.parse(String((await r.row(rows[0].id))?.payload)), { i: 1 });
  });

  test('a store that refuses every write (disk full) is one error line per 30 s with the count, not one per event', async (t) => {
    const lines: string[] = [];
    const r = await rig(t, createLogger({ write: (l) => void lines.push(l) }));
    const good = r.bus.publish({ type: 'turn.completed', payload: {} });
    await good.committed;
    // each duplicate is refused by the database, in a transaction of its own, as every event is on a full disk
    for (let i = 0; i < 50; i++) assert.equal(await r.writer.write(good.event), false);
    const dropLines = () =>
      lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'trace writer dropped events');
    assert.equal(dropLines().length, 1, 'the first drop is logged at once, the rest are counted');
    assert.equal(dropLines()[0].events, 1);
    await r.writer.stop();
    // the stop (or the end of the 30 s) reports what was counted meanwhile
    assert.equal(dropLines().length, 2);
    assert.equal(dropLines()[1].events, 49);
    assert.equal(r.writer.stats.dropped, 50);
  });

  test('a payload that cannot be serialised is reported by the bus, not thrown at the publisher', async (t) => {
    const r = await rig(t);
    const p = r.bus.publish({
      type: 'turn.started',
      payload: { big: 1n } as unknown as Record<string, unknown>,
    });
    await p.committed;
    await r.writer.flush();
    assert.equal(await r.count('turn.started'), 0);
    assert.equal(await r.count('bus.handler_warning'), 1);
  });

  test('opening events wait for their closing event: one gateway call is one transaction', async (t) => {
    const r = await rig(t);
    const before = r.writer.stats.commits;
    const decided = r.bus.publish({
      type: 'route.decided',
      payload: { chain: [], winner_index: -1, chosen_model: null, elapsed_ms: 0 },
    });
    r.bus.publish({ type: 'llm.call_started', payload: {} as never });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(r.writer.pending, 2, 'opening events are held');
    assert.equal(await r.count(), 1, 'only bus.subscriber_registered so far');
    const closing = r.bus.publish({ type: 'turn.completed', payload: {} });
    await Promise.all([decided.committed, closing.committed]);
    assert.equal(r.writer.stats.commits - before, 1);
    assert.equal(await r.count(), 4);
  });

  test('an opening event alone is still committed within LAZY_COMMIT_MS', async (t) => {
    const r = await rig(t);
    const started = Date.now();
    await r.bus.publish({ type: 'turn.started', payload: {} }).committed;
    assert.equal(await r.count('turn.started'), 1);
    assert.ok(Date.now() - started < 1000);
  });
});

test('gateway replicas starting together on PostgreSQL name each dead turn once', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  // a replica that died (kill -9) with five gateway turns open: its rows, its presence lock gone
  const dead = await openStore({ engine: 'postgres', url });
  const nowUs = systemClock.nowUs();
  const ts = new Date(nowUs / 1000).toISOString();
  const payload = JSON.stringify({ gateway_key_id: 'gk_1' });
  for (let i = 0; i < 5; i++)
    await dead.kysely
      .insertInto('events')
      .values(
        (['route.decided', 'llm.call_started'] as const).map((type, j) => ({
          id: `01DEAD${i}${j}`,
          timestamp: ts,
          timestamp_us: nowUs,
          turn_id: `turn_${i}`,
          type,
          actor: 'gateway',
          payload,
          sensitivity: 'pseudonymous',
        })),
      )
      .execute();
  await dead.close();
  const replicas = await Promise.all(
    [1, 2, 3].map(async () => {
      const store = (await openStore({ engine: 'postgres', url })) as PostgresStore;
      t.after(() => store.close());
      const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
      bus.subscribe(createTraceWriter({ store, log: silentLogger }).subscriber);
      await store.announcePresence();
      return { store, bus };
    }),
  );
  // the trace's inserts wait behind a lock while every replica scans: each has scanned before any commits
  const blocker = new pg.Client({ connectionString: url });
  await blocker.connect();
  t.after(() => blocker.end());
  await blocker.query('BEGIN');
  await blocker.query('LOCK TABLE events IN EXCLUSIVE MODE');
  let done = 0;
  const naming = replicas.map((r) =>
    runGapDetection({ ...r, clock: systemClock, log: silentLogger }).finally(() => done++),
  );
  // every replica is done scanning: it named nothing, or its gap events wait for the lock (one replica
  // scans at a time, and its trace writer may wait there with more than one append)
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await blocker.query(
      "SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'events'::regclass AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    if (Math.min(rows[0].n, 1) + done === replicas.length) break;
    if (Date.now() > deadline) {
      const waits = await blocker.query(
        'SELECT locktype, relation::regclass::text AS rel, mode, pid FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())',
      );
      assert.fail(`replicas done: ${done}; locks waited for: ${JSON.stringify(waits.rows)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await blocker.query('COMMIT');
  const named = await Promise.all(naming);
  assert.equal(
    named.reduce((a, b) => a + b, 0),
    5,
  );
  const gaps = await replicas[0].store.kysely
    .selectFrom('events')
    .select('turn_id')
    .where('type', '=', 'bus.gap_detected')
    .orderBy('turn_id')
    .execute();
  assert.deepEqual(
    gaps.map((g) => g.turn_id),
    ['turn_0', 'turn_1', 'turn_2', 'turn_3', 'turn_4'],
  );
});

// --- internal ---

/** `test` that skips (with the reason) where the engine cannot run. */

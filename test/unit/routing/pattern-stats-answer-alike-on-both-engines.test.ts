/**
 * Slot 4 learns the same table from a PostgreSQL store as from a SQLite one: the same rows (samples,
 * successes, median costs, keys in the same order) over one history holding every outcome, retries by key
 * and by session, the lookback's edge, near-duplicate prompts (hybrid), rows of another shape and a
 * payload carrying the escape \u0000. On PostgreSQL nothing was learned (slot 4 answered no_match).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { Client as PgClient } from 'pg';
import { fingerprintRequest } from '#src/routing/pattern/fingerprint.ts';
import { DAY_US } from '#src/routing/pattern/router.ts';
import { type PatternStatsParams, queryPatternStats } from '#src/routing/pattern/stats-query.ts';
import {
  createPostgresStatsReader,
  queryPatternStatsPostgres,
} from '#src/routing/pattern/stats-query-postgres.ts';
import type { PatternStatRow } from '#src/routing/pattern/table.ts';
import { openStore, type SqliteStore, type Store } from '#src/store/open.ts';
import { postgresEngine, sqliteEngine } from '../../helpers/engines.ts';
import { eventRowOf, type SeedEvent } from '../../helpers/event-rows.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';
import { HAIKU, MINI, NOW_US, requestEvents, type SeedRequest, SONNET, times } from './pattern-seed.ts';
import { facts } from './routing-fixture.ts';

const postgres = useTestPostgres();
const sqliteTargets = sqliteEngine();
const postgresTargets = postgresEngine(postgres);

const tools = facts({ workspacePath: '/srv/app', hasTools: true, toolNames: ['read_file'], messageCount: 1 });
const printA = fingerprintRequest(tools, 'fix the failing test in auth');
const printA2 = fingerprintRequest(tools, 'fix the failing tests in the auth module');
const printB = fingerprintRequest(
  facts({ workspacePath: '/srv/app', hasImages: true, estimatedInputTokens: 1600, messageCount: 1 }),
  'what is in this picture',
);
const printC = fingerprintRequest(
  facts({ workspacePath: '/srv/docs', messageCount: 3 }),
  'summarize the notes',
);

const printD = fingerprintRequest(facts({ workspacePath: '/srv/ops', messageCount: 2 }), 'rotate the logs');

const HISTORY: SeedRequest[] = [
  // costs written alike and differently (0.0010 is 0.001), an even count for two middles
  ...times(3, { print: printA, model: HAIKU, cost: '0.001000' }),
  { print: printA, model: HAIKU, cost: '0.0010' },
  { print: printA, model: HAIKU, cost: '0.002' },
  { print: printA, model: HAIKU, cost: '0.0005' },
  ...times(3, { print: printA, model: SONNET, cost: '0.012000', keyId: 'gk_other' }),
  ...times(3, { print: printA2, model: HAIKU, cost: '0.003' }),
  ...['0.010', '0.004', '0.008', '0.006'].map((cost) => ({ print: printD, model: SONNET, cost })),
  // every outcome
  ...(['ok', 'call_failed', 'call_cancelled', 'error_code', 'other_model', 'no_call', 'gap'] as const).map(
    (outcome) => ({ print: printB, model: HAIKU, outcome, keyId: 'gk_b' }),
  ),
  { print: printB, model: SONNET, outcome: 'turn_cancelled', sessionId: 'sess_1' },
  { print: printB, model: SONNET, outcome: 'in_flight', sessionId: 'sess_2' },
  // a retry on another model by the same key, and by the same session
  { print: printC, model: HAIKU, keyId: 'gk_retry' },
  { print: printC, model: SONNET, keyId: 'gk_retry' },
  { print: printC, model: HAIKU, sessionId: 'sess_3' },
  { print: printC, model: MINI, sessionId: 'sess_3' },
  // past the lookback, then rows of another shape than svc writes
  { print: printC, model: MINI, atUs: NOW_US - 40 * DAY_US },
  { print: { ...printA, sketch: 'h1:0:00000000' as unknown as string[] }, model: HAIKU },
  { print: { ...printA, sketch: [null, 7] as unknown as string[] }, model: HAIKU },
  { print: printC, model: HAIKU, cost: 'n/a' },
  { print: printC, model: HAIKU, cost: '1.' },
  { print: printC, model: HAIKU, cost: 'bad\u0000cost' },
];

/** node:sqlite's rows have no prototype; compared as plain objects. */
function statsOf(sqlite: SqliteStore, params: PatternStatsParams): PatternStatRow[] {
  return queryPatternStats(sqlite.db, params).map((r) => ({ ...r }));
}

async function seeded(store: Store, events: SeedEvent[]): Promise<void> {
  await store.appendEvents(events.map(eventRowOf));
}

test('slot 4 reads the same statistics from PostgreSQL as from SQLite', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const sqliteTarget = await sqliteTargets.target();
  if (sqliteTarget.engine !== 'sqlite') throw new Error('a SQLite target');
  const sqlite = await openStore(sqliteTarget);
  const pg = await openStore(await postgresTargets.target());
  t.after(async () => {
    await sqlite.close();
    await pg.close();
  });
  const { events } = requestEvents(HISTORY);
  await seeded(sqlite, events);
  await seeded(pg, events);
  const sinceUs = NOW_US - 30 * DAY_US;
  for (const version of ['structural', 'hybrid'] as const)
    for (const minSamples of [1, 3]) {
      const params = { sinceUs, version, minSamples };
      const expected = statsOf(sqlite, params);
      assert.deepEqual(
        await queryPatternStatsPostgres(pg.kysely, params),
        expected,
        `${version} ${minSamples}`,
      );
      // anchors, so equal answers cannot be equally empty
      assert.ok(expected.some((r) => r.successes > 0 && r.successes < r.samples));
      assert.ok(expected.some((r) => r.median_low !== null && r.median_low !== r.median_high));
      if (version === 'hybrid') assert.ok(expected.every((r) => r.key.includes('/')));
    }
  const params = { sinceUs, version: 'structural' as const, minSamples: 1 };
  const byKey = new Map(statsOf(sqlite, params).map((r) => [`${r.key} ${r.model}`, r]));
  assert.deepEqual(byKey.get(`${printA.structural} ${HAIKU}`), {
    key: printA.structural,
    model: HAIKU,
    samples: 11,
    successes: 11,
    median_low: '0.001000',
    median_high: '0.001000',
  });

  // the servers' reader: the same rows, and a stop is not held by the statement
  const read = createPostgresStatsReader(pg.kysely);
  assert.deepEqual(await read(params, new AbortController().signal), statsOf(sqlite, params));
  const stop = new AbortController();
  const pending = read(params, stop.signal);
  stop.abort();
  await assert.rejects(pending, /rebuild was stopped/);
});

test("a server's stop cancels the statistics statement, whose connection the pool's end waits for", async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const target = await postgresTargets.target();
  if (target.engine !== 'postgres') throw new Error('a PostgreSQL target');
  const store = await openStore(target);
  // the statement waits on a lock held elsewhere, as a long one on a large store runs on
  const locker = new PgClient({ connectionString: target.url });
  await locker.connect();
  t.after(async () => {
    await locker.end();
    await store.close();
  });
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
  const waiting = async () =>
    (
      await locker.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      )
    ).rows[0]!.n;
  const stop = new AbortController();
  const pending = createPostgresStatsReader(store.kysely)(
    { sinceUs: 0, version: 'structural', minSamples: 1 },
    stop.signal,
  );
  while ((await waiting()) === 0) await setTimeout(20);
  stop.abort();
  await assert.rejects(pending, /rebuild was stopped/);
  // cancelled on the server while the lock is still held (before: it waited there for the lock)
  for (let i = 0; i < 100 && (await waiting()) > 0; i++) await setTimeout(20);
  assert.equal(await waiting(), 0);
  await locker.query('ROLLBACK');
});

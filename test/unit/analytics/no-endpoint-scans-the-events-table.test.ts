/**
 * Query plans: every statement each analytics endpoint runs is captured (a logging Kysely over the same
 * connection) and explained with its bound parameters; none scans the events table (or a whole index of
 * it), each events read is an index range. The SQL expressions of read-paths.ts are the ones migration
 * 0004 indexed, word for word, since SQLite reads an indexed expression only when spelled the same.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CompiledQuery, Kysely } from 'kysely';
import {
  countUserEvents,
  GROUP_BY,
  queryByKey,
  queryByTeam,
  queryCacheEffectiveness,
  queryCost,
  queryReliability,
  queryRouting,
  querySavings,
  querySessions,
  queryTurn,
  readUserEventPages,
  runForgetUser,
} from '#src/analytics/index.ts';
import { EXPR, SPEND_COLUMNS } from '#src/analytics/read-paths.ts';
import { createBus } from '#src/events/bus.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { createNodeSqliteDialect } from '#src/store/node-sqlite-dialect.ts';
import type { SqliteStore as Store } from '#src/store/open.ts';
import type { Database } from '#src/store/schema.ts';
import { callEvent, DAY_US, routeEvent, seed, tempStore, windowOf } from '../../helpers/analytics-events.ts';

const WEEK = windowOf(0, 7 * DAY_US);
const FILTERED = { gatewayKey: 'gk_a', user: 'u1', team: 't1', includeWorkers: false };
const ALL = { gatewayKey: null, user: null, team: null, includeWorkers: true };

async function seeded(t: { after: (fn: () => unknown) => void }): Promise<Store> {
  const store = await tempStore(t);
  seed(store, [
    (id) => callEvent(id, { at: 1, user: 'u1', team: 't1', key: 'gk_a', turn: 'turn_x' }),
    (id) => callEvent(id, { at: 2, model: 'openai:gpt-5-mini', latency: 12.5 }),
    (id) => callEvent(id, { at: 3, type: 'llm.call_failed', cost: null, errorClass: 'overloaded' }),
    (id) =>
      routeEvent(id, {
        at: 4,
        chain: [
          {
            policy: 'rule',
            model: 'openai:x',
            verdict: 'rejected',
            validation_failure: 'model_not_configured',
          },
          { policy: 'global_default', model: 'anthropic:claude-sonnet-4-5', verdict: 'accepted' },
        ],
        winner: 1,
        chosen: 'anthropic:claude-sonnet-4-5',
      }),
  ]);
  return store;
}

/** Runs `fn` against a Kysely that records each compiled statement on the store's connection. */
async function capture(
  store: Store,
  fn: (db: Kysely<Database>) => Promise<unknown>,
): Promise<CompiledQuery[]> {
  const queries: CompiledQuery[] = [];
  const db = new Kysely<Database>({
    dialect: createNodeSqliteDialect(store.db),
    log: (e) => {
      if (e.level === 'query') queries.push(e.query);
    },
  });
  await fn(db);
  return queries;
}

function plan(store: Store, q: CompiledQuery): string[] {
  const rows = store.db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.parameters as never[])) as Array<{
    detail: string;
  }>;
  return rows.map((r) => r.detail);
}

const ENDPOINTS: Record<string, (db: Kysely<Database>, store: Store) => Promise<unknown>> = {
  ...Object.fromEntries(
    GROUP_BY.flatMap((groupBy) => [
      [`cost ${groupBy}`, (db: Kysely<Database>) => queryCost(db, { window: WEEK, groupBy, filters: ALL })],
      [
        `cost ${groupBy} filtered`,
        (db: Kysely<Database>) => queryCost(db, { window: WEEK, groupBy, filters: FILTERED }),
      ],
    ]),
  ),
  cache_effectiveness: (db) => queryCacheEffectiveness(db, WEEK),
  routing: (db) => queryRouting(db, WEEK),
  reliability: (db) => queryReliability(db, WEEK),
  savings: (db) => querySavings(db, loadModelRegistry(undefined), { window: WEEK, baseline: undefined }),
  by_key: (db) => queryByKey(db, { window: WEEK, gatewayKey: null }),
  'by_key filtered': (db) => queryByKey(db, { window: WEEK, gatewayKey: 'gk_a' }),
  by_team: (db) => queryByTeam(db, { window: WEEK, team: null }),
  'by_team filtered': (db) => queryByTeam(db, { window: WEEK, team: 't1' }),
  'sessions recency': (db) => querySessions(db, { order: 'recency', limit: 25 }),
  'sessions cost': (db) => querySessions(db, { order: 'cost', limit: 25 }),
  turn: (db) => queryTurn(db, 'turn_x', systemClock.nowUs()),
  export: async (db, store) => {
    const request = { userId: 'u1', window: WEEK };
    const viaDb = { ...store, kysely: db };
    await countUserEvents(viaDb, request);
    for await (const _page of readUserEventPages(viaDb, request)) {
      // drain
    }
  },
  forget: (db, store) =>
    runForgetUser(
      {
        store: { ...store, kysely: db },
        bus: createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger }),
        clock: systemClock,
        scrub: false,
      },
      'u1',
    ),
};

test('no statement of any analytics endpoint scans the events table', async (t) => {
  const store = await seeded(t);
  for (const [name, run] of Object.entries(ENDPOINTS)) {
    const queries = await capture(store, (db) => run(db, store));
    assert.ok(queries.length > 0, `${name} ran no query`);
    for (const q of queries) {
      const lines = plan(store, q);
      const shown = `${name}: ${q.sql.replace(/\s+/g, ' ').slice(0, 160)}\n  plan: ${lines.join(' | ')}`;
      assert.ok(!lines.some((l) => /\bSCAN events\b/.test(l)), shown);
      // a row appended with VALUES (forget's audit event) reads nothing
      if (/\bevents\b/.test(q.sql) && !/^insert into "events" \([^)]*\) values \(/i.test(q.sql))
        assert.ok(
          lines.some((l) => /^SEARCH events USING (COVERING )?INDEX /.test(l)),
          `${shown}\n  reads events through no index range`,
        );
    }
  }
});

test('the spend and route queries read their covering indexes', async (t) => {
  const store = await seeded(t);
  const expect: Array<[string, RegExp]> = [
    ['cost model', /SEARCH events USING INDEX events_spend/],
    ['cost day', /SEARCH events USING INDEX events_spend/],
    ['reliability', /SEARCH events USING INDEX events_spend/],
    ['routing', /SEARCH events USING INDEX events_route/],
  ];
  for (const [name, re] of expect) {
    const queries = await capture(store, (db) => ENDPOINTS[name](db, store));
    assert.ok(
      queries.some((q) => plan(store, q).some((l) => re.test(l))),
      name,
    );
  }
});

test('the read-path expressions are spelled exactly as migration 0004 indexed them', async (t) => {
  const store = await tempStore(t);
  const indexSql = (name: string) =>
    normalise(
      (store.db.prepare('SELECT sql FROM sqlite_schema WHERE name = ?').get(name) as { sql: string }).sql,
    );
  const spend = indexSql('events_spend');
  const route = indexSql('events_route');
  for (const text of Object.values(SPEND_COLUMNS)) assert.ok(spend.includes(normalise(text)), text);
  for (const name of [
    'winnerIndex',
    'chainLength',
    'winnerPolicy',
    'chosenModel',
    'mayHoldRejection',
  ] as const)
    assert.ok(route.includes(normalise(EXPR[name])), name);
  assert.match(
    spend,
    /WHERE type IN \('llm\.call_completed', 'llm\.call_failed'\) AND cost_usd IS NOT NULL$/,
  );
  assert.match(route, /WHERE type = 'route\.decided'$/);
});

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();
}

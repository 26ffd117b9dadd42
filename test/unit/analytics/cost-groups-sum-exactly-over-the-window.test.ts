/**
 * GET /analytics/cost's query over a real store: every group_by's key columns and order, exact money
 * (nano-dollar sums, the decimal path for longer fractions and JSON numbers, 1e6 × 0.000001 = 1), the
 * window's bounds (from inclusive, to exclusive), AND-combined filters, include_workers, and the spend
 * rule: spend is the stamped cost of llm.call_completed (spec 3), so the cost an agent call cancelled
 * mid-stream stamps on its llm.call_failed is not in it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { queryCost, type SpendFilters } from '#src/analytics/index.ts';
import { EXPR, spendRows } from '#src/analytics/read-paths.ts';
import { decodeSpend, runSpendQuery, type SpendColumns, spendAggregates } from '#src/analytics/spend.ts';
import { formatDecimal } from '#src/lib/decimal.ts';
import { callEvent, DAY_US, HOUR_US, seed, tempStore, windowOf } from '../../helpers/analytics-events.ts';

const ALL: SpendFilters = { gatewayKey: null, user: null, team: null, includeWorkers: true };
const WEEK = windowOf(0, 7 * DAY_US);
const SONNET = 'anthropic:claude-sonnet-4-5';
const MINI = 'openai:gpt-5-mini';
const HAIKU = 'anthropic:claude-haiku-4-5';

/** Gateway traffic of two keys, users and teams over two days, agent planner/worker calls, edge rows. */
async function seeded(t: { after: (fn: () => unknown) => void }) {
  const store = await tempStore(t);
  seed(store, [
    (id) =>
      callEvent(id, {
        at: 0,
        cost: '0.1',
        input: 100,
        output: 10,
        cached: 50,
        creation: 5,
        latency: 100,
        key: 'gk_a',
        user: 'u1',
        team: 't1',
      }),
    (id) =>
      callEvent(id, {
        at: HOUR_US / 2,
        model: MINI,
        cost: '0.2',
        input: 200,
        output: 20,
        latency: 300,
        key: 'gk_a',
        user: 'u2',
        team: 't1',
        shape: 'openai',
      }),
    (id) => callEvent(id, { at: DAY_US + 1, cost: '0.000000001', key: 'gk_b', latency: null }),
    (id) => callEvent(id, { at: DAY_US + 2, cost: '0.0000000001', key: 'gk_b', user: 'u1', team: 't2' }),
    (id) => callEvent(id, { at: DAY_US + 3, cost: 0.3, key: 'gk_b', user: 'u1', team: 't2' }),
    (id) =>
      callEvent(id, {
        at: 2 * HOUR_US,
        model: HAIKU,
        cost: '1.5',
        key: null,
        shape: null,
        session: 'sess_p',
      }),
    (id) =>
      callEvent(id, {
        at: 2 * HOUR_US + 1,
        model: HAIKU,
        cost: '0.25',
        key: null,
        shape: null,
        session: 'sess_w',
        parent: 'sess_p',
      }),
    // an agent call cancelled mid-stream: its usage priced on llm.call_failed, which spend does not read
    (id) =>
      callEvent(id, {
        at: 2 * HOUR_US + 2,
        type: 'llm.call_failed',
        model: HAIKU,
        cost: '0.05',
        key: null,
        shape: null,
        session: 'sess_p',
        errorClass: 'cancelled',
      }),
    // a failure without usage, and events outside the window: none of them is spend
    (id) => callEvent(id, { at: 3 * HOUR_US, type: 'llm.call_failed', cost: null, errorClass: 'rate_limit' }),
    (id) => callEvent(id, { at: -1, cost: '100', key: 'gk_a' }),
    (id) => callEvent(id, { at: 7 * DAY_US, cost: '100', key: 'gk_a' }),
  ]);
  return store;
}

test('group_by none sums every stamped cost of llm.call_completed in [from, to) exactly (not the cancelled agent call)', async (t) => {
  const store = await seeded(t);
  const all = (await queryCost(store.kysely, { window: WEEK, groupBy: 'none', filters: ALL })) as Record<
    string,
    unknown
  >;
  // 0.1 + 0.2 + 0.000000001 + 0.0000000001 + 0.3 + 1.5 + 0.25 (a float sum would not give this)
  assert.equal(all.cost_usd, 2.3500000011);
  assert.equal(all.call_count, 7);
  assert.equal(all.input_tokens, 100 + 200 + 5 * 10);
  assert.equal(all.cached_input_tokens, 50);
  assert.equal(all.cache_creation_input_tokens, 5);
  // mean over the rows that carry a latency (one has none)
  assert.equal(all.avg_latency_ms, 133.333); // 800 / 6, to the microsecond
  const none = await queryCost(store.kysely, {
    window: windowOf(10 * DAY_US, 11 * DAY_US),
    groupBy: 'none',
    filters: ALL,
  });
  assert.deepEqual(none, {
    cost_usd: 0,
    input_tokens: 0,
    output_tokens: 0,
    cached_input_tokens: 0,
    cache_creation_input_tokens: 0,
    avg_latency_ms: null,
    call_count: 0,
  });
});

test('each group_by has its key columns, cost descending (day and hour: bucket ascending)', async (t) => {
  const store = await seeded(t);
  const rows = async (groupBy: Parameters<typeof queryCost>[1]['groupBy']) =>
    (await queryCost(store.kysely, { window: WEEK, groupBy, filters: ALL })) as Array<
      Record<string, unknown>
    >;
  const keys = (r: Array<Record<string, unknown>>, ...names: string[]) =>
    r.map((x) => `${names.map((n) => x[n]).join('|')}=${x.cost_usd}`);

  assert.deepEqual(keys(await rows('model'), 'model', 'provider'), [
    `${HAIKU}|anthropic=1.75`,
    `${SONNET}|anthropic=0.4000000011`,
    `${MINI}|openai=0.2`,
  ]);
  assert.deepEqual(keys(await rows('provider'), 'provider'), ['anthropic=2.1500000011', 'openai=0.2']);
  assert.deepEqual(keys(await rows('session'), 'session_id'), ['sess_p=1.5', '=0.6000000011', 'sess_w=0.25']);
  assert.deepEqual(keys(await rows('gateway_key'), 'gateway_key_id'), [
    '=1.75',
    'gk_b=0.3000000011',
    'gk_a=0.3',
  ]);
  assert.deepEqual(keys(await rows('user'), 'user_id'), ['=1.750000001', 'u1=0.4000000001', 'u2=0.2']);
  assert.deepEqual(keys(await rows('team'), 'team_id'), ['=1.750000001', 't2=0.3000000001', 't1=0.3']);
  // the worker's call rolls up under its planner
  assert.deepEqual(keys(await rows('parent_session'), 'parent_session_id'), ['sess_p=1.75', '=0.6000000011']);
  assert.deepEqual(keys(await rows('is_worker'), 'is_worker'), ['planner=2.1000000011', 'worker=0.25']);
  assert.deepEqual(keys(await rows('day'), 'bucket'), ['2026-01-01=2.05', '2026-01-02=0.3000000011']);
  assert.deepEqual(keys(await rows('hour'), 'bucket'), [
    '2026-01-01T00=0.3',
    '2026-01-01T02=1.75',
    '2026-01-02T00=0.3000000011',
  ]);
  for (const r of await rows('day'))
    assert.deepEqual(Object.keys(r), [
      'bucket',
      'cost_usd',
      'input_tokens',
      'output_tokens',
      'cached_input_tokens',
      'cache_creation_input_tokens',
      'avg_latency_ms',
      'call_count',
    ]);
});

test('filters combine with AND and include_workers=false drops calls with a parent session', async (t) => {
  const store = await seeded(t);
  const cost = async (filters: Partial<SpendFilters>) =>
    (await queryCost(store.kysely, { window: WEEK, groupBy: 'none', filters: { ...ALL, ...filters } })) as {
      cost_usd: number;
      call_count: number;
    };
  assert.equal((await cost({ user: 'u1' })).cost_usd, 0.4000000001);
  assert.equal((await cost({ user: 'u1', team: 't2' })).cost_usd, 0.3000000001);
  assert.equal((await cost({ user: 'u1', team: 't2', gatewayKey: 'gk_a' })).call_count, 0);
  assert.equal((await cost({ gatewayKey: 'gk_a' })).cost_usd, 0.3);
  assert.equal((await cost({ includeWorkers: false })).cost_usd, 2.1000000011);
  // ids are bound values: a prefix or a pattern never matches
  assert.equal((await cost({ user: 'u' })).call_count, 0);
  assert.equal((await cost({ user: 'u%' })).call_count, 0);
});

test('from is inclusive and to exclusive, to the microsecond', async (t) => {
  const store = await seeded(t);
  const count = async (from: number, to: number) =>
    (
      (await queryCost(store.kysely, { window: windowOf(from, to), groupBy: 'none', filters: ALL })) as {
        call_count: number;
      }
    ).call_count;
  assert.equal(await count(-1, 0), 1); // the row at -1 µs
  assert.equal(await count(0, 1), 1); // the row at 0, not the one at -1
  assert.equal(await count(7 * DAY_US, 7 * DAY_US + 1), 1);
  assert.equal(await count(DAY_US + 2, DAY_US + 3), 1);
});

test('the nano-dollar index expression sums a million 0.000001 to exactly 1', async (t) => {
  const store = await tempStore(t);
  const r = await sql<{ nano: string; n: number }>`
    WITH RECURSIVE n(i, cost_usd) AS (SELECT 1, '0.000001' UNION ALL SELECT i + 1, cost_usd FROM n WHERE i < 1000000)
    SELECT CAST(sum(${sql.raw(EXPR.costNano)}) AS TEXT) AS nano, count(*) AS n FROM n`.execute(store.kysely);
  assert.equal(r.rows[0].n, 1_000_000);
  assert.equal(formatDecimal({ units: BigInt(r.rows[0].nano), scale: 9 }), '1.000000');
});

test('costs the nano form cannot hold go through decimal_sum, and an integer overflow falls back to it', async (t) => {
  const store = await tempStore(t);
  const forms: Array<[string | number, string | null]> = [
    ['0.000001', '1000'],
    ['12', '12000000000'],
    ['123456789.123456789', '123456789123456789'],
    ['1234567890', null], // 10 integer digits
    ['0.0000000001', null], // 10 fraction digits
    [0.1, '100000000'], // a JSON number reads as its shortest text
    [1e-7, null], // whose text is 1.0e-07
    ['-1', null],
    ['1.2.3', null],
    ['', null],
  ];
  for (const [cost, nano] of forms) {
    const r = await sql<{ nano: string | null }>`
      SELECT CAST(${sql.raw(EXPR.costNano)} AS TEXT) AS nano
      FROM (SELECT json_extract(${JSON.stringify({ c: cost })}, '$.c') AS cost_usd)`.execute(store.kysely);
    assert.equal(r.rows[0].nano, nano, JSON.stringify(cost));
  }
  // ten calls of $999,999,999 overflow a 64-bit sum of nano-dollars; the answer stays exact
  seed(
    store,
    Array.from(
      { length: 10 },
      (_, i) => (id: string) => callEvent(id, { at: i, cost: '999999999.999999999' }),
    ),
  );
  const rows = await runSpendQuery(
    store.kysely,
    (mode) => sql<SpendColumns>`SELECT ${spendAggregates(mode)} FROM ${spendRows(WEEK)}`,
  );
  assert.equal(rows[0].cost_nano, null, 'answered by the decimal_sum query');
  assert.equal(formatDecimal(decodeSpend(rows[0]).cost), '9999999999.99999999');
});

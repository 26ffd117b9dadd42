import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { spendRows } from '#src/analytics/read-paths.ts';
import { openStore, type Store } from '#src/store/open.ts';
import { windowOf } from '../../helpers/analytics-events.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-schema-'));
let store: Store;
test.before(async () => {
  store = await openStore(join(tmp, 'svc.db'));
});
test.after(async () => {
  await store.close();
  rmSync(tmp, { recursive: true, force: true });
});

const row = (i: number, payload: Record<string, unknown>, type = 'llm.call_completed') => ({
  id: `01TEST${String(i).padStart(20, '0')}`,
  timestamp: '2026-11-22T06:01:02.123456Z',
  timestamp_us: 1_795_327_262_123_456 + i,
  session_id: null,
  turn_id: `turn-${i % 7}`,
  type,
  actor: 'gateway',
  payload: JSON.stringify(payload),
  parent_event_id: null,
  sensitivity: 'pseudonymous',
});

/** A query over `source` as SQL text with its parameters inlined (they are numbers and fixed words here). */
function compileSql(source: ReturnType<typeof sql>): string {
  const q = sql`SELECT count(*) FROM ${source}`.compile(store.kysely);
  let i = 0;
  return q.sql.replace(/\?/g, () => JSON.stringify(q.parameters[i++]));
}

async function plan(query: string): Promise<string> {
  const r = await sql<{ detail: string }>`EXPLAIN QUERY PLAN ${sql.raw(query)}`.execute(store.kysely);
  return r.rows.map((x) => x.detail).join(' | ');
}

test('the events table has every spec column plus timestamp_us', async () => {
  const r = await sql<{ name: string }>`SELECT name FROM pragma_table_xinfo('events')`.execute(store.kysely);
  const names = r.rows.map((x) => x.name);
  for (const c of [
    'id',
    'timestamp',
    'timestamp_us',
    'session_id',
    'turn_id',
    'type',
    'actor',
    'payload',
    'parent_event_id',
    'sensitivity',
    'payload_json',
  ]) {
    assert.ok(names.includes(c), c);
  }
});

test('sessions, messages and tool_calls hold the stored fields of spec 2 "Resources"', async () => {
  // attach_token and ws_url are not stored: the token is single use for 60 s and the URL is derived.
  const expected: Record<string, string[]> = {
    sessions: [
      'id',
      'workspace_path',
      'active_model',
      'created_at',
      'updated_at',
      'routing_policy_version',
      'turn_count',
      'cost_so_far_usd',
      'current_turn_id',
      'current_turn_status',
      'is_worker',
      'parent_session_id',
    ],
    messages: ['id', 'session_id', 'turn_id', 'role', 'content', 'metadata', 'status', 'created_at'],
    tool_calls: ['id', 'session_id', 'turn_id', 'tool_use_id', 'tool_name', 'input', 'status', 'error_class'],
  };
  for (const [table, columns] of Object.entries(expected)) {
    const r = await sql<{ name: string }>`SELECT name FROM pragma_table_xinfo(${table})`.execute(
      store.kysely,
    );
    const names = r.rows.map((x) => x.name);
    for (const c of columns) assert.ok(names.includes(c), `${table}.${c}`);
  }
});

test('payload_json is an alias of payload in raw operator SQL, and generated columns read the payload', async () => {
  await store.kysely
    .insertInto('events')
    .values(
      row(1, {
        model: 'anthropic:claude-sonnet-4-5',
        provider: 'anthropic',
        gateway_key_id: 'gk_1',
        user_id: 'usr_1',
        team_id: 'team_1',
        cost_usd: '0.000123',
      }),
    )
    .execute();
  const r = await sql<Record<string, string>>`
    SELECT payload_json, json_extract(payload_json, '$.cost_usd') AS via_alias,
           model, provider, gateway_key_id, user_id, team_id, cost_usd
    FROM events WHERE id = ${row(1, {}).id}`.execute(store.kysely);
  const got = r.rows[0];
  assert.equal(
    got.payload_json,
    row(1, {
      model: 'anthropic:claude-sonnet-4-5',
      provider: 'anthropic',
      gateway_key_id: 'gk_1',
      user_id: 'usr_1',
      team_id: 'team_1',
      cost_usd: '0.000123',
    }).payload,
  );
  assert.equal(got.via_alias, '0.000123');
  assert.deepEqual(
    [got.model, got.provider, got.gateway_key_id, got.user_id, got.team_id, got.cost_usd],
    ['anthropic:claude-sonnet-4-5', 'anthropic', 'gk_1', 'usr_1', 'team_1', '0.000123'],
  );
  await assert.rejects(
    store.kysely
      .insertInto('events')
      .values({ ...row(2, {}), payload: 'not json' })
      .execute(),
    /malformed JSON|CHECK constraint/,
  );
});

test('the analytics read paths use the indexes (EXPLAIN QUERY PLAN)', async () => {
  const cases: Array<[string, RegExp]> = [
    ["SELECT id FROM events WHERE user_id = 'usr_1' ORDER BY id", /USING (COVERING )?INDEX events_user/],
    ["SELECT id FROM events WHERE turn_id = 'turn-1' ORDER BY id", /USING (COVERING )?INDEX events_turn/],
    [
      "SELECT id FROM events WHERE session_id = 'sess_1' ORDER BY id",
      /USING (COVERING )?INDEX events_session/,
    ],
    // type + time: time first since migration 0006, so every new event lands on the index's last page
    [
      "SELECT payload FROM events WHERE type = 'quota.alert' AND timestamp_us >= 1 AND timestamp_us < 2",
      /USING (COVERING )?INDEX events_time_type \(timestamp_us>\? AND timestamp_us<\?\)/,
    ],
    // the reads by type without a time bound have partial indexes no gateway call writes
    [
      "SELECT session_id, turn_id FROM events WHERE type = 'turn.started' AND session_id IS NOT NULL AND turn_id IS NOT NULL",
      /USING COVERING INDEX events_turn_started/,
    ],
    [
      "SELECT count(*) FROM events INDEXED BY events_failed_call WHERE type = 'llm.call_failed' AND timestamp_us >= 1 AND timestamp_us < 2",
      /USING COVERING INDEX events_failed_call \(timestamp_us>\? AND timestamp_us<\?\)/,
    ],
    // model, provider, gateway key and team within a window: the covering spend index (migration 0005
    // dropped their single-column indexes, which no read path used)
    ...(['model', 'provider', 'gateway_key_id', 'team_id'] as const).map((column): [string, RegExp] => [
      compileSql(spendRows(windowOf(0, 7 * 24 * 3600 * 1e6), sql`${sql.ref(column)} = 'x'`, ['cost_usd'])),
      /USING (COVERING )?INDEX events_spend/,
    ]),
  ];
  for (const [query, expected] of cases) {
    const p = await plan(query);
    assert.match(p, expected, `${query}\n  plan: ${p}`);
    assert.doesNotMatch(p, /^SCAN events$|SCAN events(?! USING)/, `${query}\n  plan: ${p}`);
  }
});

test('decimal_sum in SQL sums a million 0.000001 to exactly 1.000000', async () => {
  // the aggregate over a generated million-row relation: what the analytics queries run over cost_usd
  const r = await sql<{ exact: string; n: number }>`
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
    SELECT decimal_sum('0.000001') AS exact, count(*) AS n FROM n`.execute(store.kysely);
  assert.equal(r.rows[0].n, 1_000_000);
  assert.equal(r.rows[0].exact, '1.000000');
});

test('decimal_sum skips nulls, reads JSON numbers by their shortest text, and is 0 over no rows', async () => {
  await store.kysely
    .insertInto('events')
    .values([
      row(10, { gateway_key_id: 'gk_mix', cost_usd: '0.25' }),
      row(11, { gateway_key_id: 'gk_mix', cost_usd: 1e-7 }),
      row(12, { gateway_key_id: 'gk_mix' }),
      row(13, { gateway_key_id: 'gk_mix', cost_usd: 0.1 }),
    ])
    .execute();
  const r = await sql<{
    s: string;
  }>`SELECT decimal_sum(cost_usd) AS s FROM events WHERE gateway_key_id = 'gk_mix'`.execute(store.kysely);
  assert.equal(r.rows[0].s, '0.3500001');
  const none = await sql<{ s: string }>`SELECT decimal_sum(cost_usd) AS s FROM events WHERE 0`.execute(
    store.kysely,
  );
  assert.equal(none.rows[0].s, '0.000000');
});

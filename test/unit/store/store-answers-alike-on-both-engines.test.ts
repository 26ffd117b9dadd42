/**
 * The store on SQLite and PostgreSQL: migrated on open, generated read-path columns, exact money sums,
 * JSON access and rewrite through the dialect, byte order of ids, and the schema both engines carry.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { sql } from 'kysely';
import { formatDecimal, parseDecimal } from '#src/lib/decimal.ts';
import { POSTGRES_SCHEMA_VERSION, SCHEMA_VERSION } from '#src/store/migrate.ts';
import { openStore, type Store } from '#src/store/open.ts';
import type { NewEventRow } from '#src/store/schema.ts';
import { describeEachEngine } from '../../helpers/engines.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();

describeEachEngine('store', postgres, (engine) => {
  const { test } = engine;

  test('a new store is migrated to this binary schema version; opening it again changes nothing', async (t) => {
    const target = await engine.target();
    const first = await openStore(target);
    const expected = engine.name === 'sqlite' ? SCHEMA_VERSION : POSTGRES_SCHEMA_VERSION;
    assert.equal(first.schemaVersion, expected);
    assert.equal(first.engine, engine.name);
    await first.close();
    const again = await openStore(target);
    t.after(() => again.close());
    assert.equal(again.schemaVersion, expected);
    const salt = await again.kysely
      .selectFrom('store_meta')
      .select('value')
      .where('key', '=', 'forget_salt')
      .executeTakeFirst();
    assert.match(salt?.value ?? '', /^[0-9a-f]{64}$/);
  });

  test('generated columns read the payload and money sums are exact', async (t) => {
    const store = await open(t);
    const rows: NewEventRow[] = [];
    for (let i = 0; i < 10_000; i++) {
      rows.push(
        event(i, { model: 'openai:gpt-5-mini', gateway_key_id: 'gk_a', user_id: 'u1', cost_usd: '0.0001' }),
      );
    }
    // a JSON number, as an older writer may have stamped it
    rows.push({ ...event(10_000, {}), payload: '{"gateway_key_id":"gk_a","cost_usd":1e-7}' });
    // costs that are no number (another tool's rows, a hand edit) hold no money: left out, never an error
    for (const [i, cost] of ['n/a', 'NaN', 'Infinity', '1.2.3', '0x10', { usd: 1 }].entries())
      rows.push(event(10_001 + i, { gateway_key_id: 'gk_a', cost_usd: cost }));
    await store.appendEvents(rows);
    const sums = await store.kysely
      .selectFrom('events')
      .select(['gateway_key_id', store.dialect.decimalSum(sql.ref('cost_usd')).as('total')])
      .where('gateway_key_id', '=', 'gk_a')
      .groupBy('gateway_key_id')
      .execute();
    assert.equal(formatDecimal(parseDecimal(sums[0].total)), '1.0000001');
    const one = await store.kysely
      .selectFrom('events')
      .select(['model', 'user_id', 'cost_usd', 'timestamp_us'])
      .where('id', '=', id(7))
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      { ...one },
      {
        model: 'openai:gpt-5-mini',
        user_id: 'u1',
        cost_usd: '0.0001',
        timestamp_us: US + 7,
      },
    );
    const none = await store.kysely
      .selectFrom('events')
      .select(store.dialect.decimalSum(sql.ref('cost_usd')).as('total'))
      .where('gateway_key_id', '=', 'nobody')
      .executeTakeFirstOrThrow();
    assert.equal(formatDecimal(parseDecimal(none.total)), '0.000000');
  });

  test('JSON is read and rewritten through the dialect, other fields untouched', async (t) => {
    const store = await open(t);
    await store.appendEvents([
      event(1, { user_id: 'u_1', cap_kind: 'daily', chain: [{ policy: 'rule' }, { policy: 'pattern' }] }),
    ]);
    const payload = sql.ref('payload');
    const read = await store.kysely
      .selectFrom('events')
      .select([
        store.dialect.jsonText(payload, '$.cap_kind').as('kind'),
        store.dialect.jsonText(payload, '$.chain[1].policy').as('policy'),
        store.dialect.jsonText(payload, '$.missing').as('missing'),
      ])
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...read }, { kind: 'daily', policy: 'pattern', missing: null });
    await sql`UPDATE events SET payload = ${store.dialect.jsonSetString(payload, '$.user_id', 'redacted_x')}`.execute(
      store.kysely,
    );
    const after = await store.kysely
      .selectFrom('events')
      .select(['user_id', 'payload'])
      .executeTakeFirstOrThrow();
    assert.equal(after.user_id, 'redacted_x');
    assert.deepEqual(JSON.parse(after.payload), {
      user_id: 'redacted_x',
      cap_kind: 'daily',
      chain: [{ policy: 'rule' }, { policy: 'pattern' }],
    });
  });

  test('ids order by their bytes, as ULIDs and prefixed ids need', async (t) => {
    const store = await open(t);
    const ids = ['sess_01B', 'sess_01a', 'sess_01_', 'Sess_01A', 'sess-01A', 'sess_01A'];
    await store.appendEvents(ids.map((x, i) => ({ ...event(i, {}), id: x })));
    const got = await store.kysely.selectFrom('events').select('id').orderBy('id').execute();
    assert.deepEqual(
      got.map((r) => r.id),
      [...ids].sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1)),
    );
  });

  test('a payload that is not JSON is refused; one holding an escaped NUL is kept', async (t) => {
    const store = await open(t);
    await assert.rejects(store.appendEvents([{ ...event(1, {}), payload: 'not json' }]));
    // JSON.stringify writes U+0000 as an escape that PostgreSQL will not extract; the row is kept whole
    const nul = JSON.stringify({ model: 'm', text: 'a \u0000 in a string' });
    await store.appendEvents([{ ...event(2, {}), payload: nul }]);
    const row = await store.kysely
      .selectFrom('events')
      .select(['model', 'payload'])
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, { model: 'm', payload: nul });
  });

  async function open(t: TestContext): Promise<Store> {
    const store = await openStore(await engine.target());
    t.after(() => store.close());
    return store;
  }
});

// --- internal ---

const US = 1_767_225_600_000_000; // 2026-01-01T00:00:00Z

function id(i: number): string {
  return `01JZ${String(i).padStart(22, '0')}`;
}

function event(i: number, payload: Record<string, unknown>): NewEventRow {
  return {
    id: id(i),
    timestamp: new Date((US + i) / 1000).toISOString(),
    timestamp_us: US + i,
    session_id: null,
    turn_id: `turn_${i}`,
    type: 'llm.call_completed',
    actor: 'gateway',
    payload: JSON.stringify(payload),
    parent_event_id: null,
    sensitivity: 'pseudonymous',
  };
}

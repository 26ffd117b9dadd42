/**
 * Both engines carry every table and column the Database interface names, so a query that runs on one
 * runs on the other: a SQLite migration that adds a column needs its PostgreSQL counterpart. Tables that
 * exist on one engine only are listed here with the reason. Also: replicas racing to open one new
 * PostgreSQL database migrate it exactly once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { POSTGRES_SCHEMA_VERSION } from '#src/store/migrate.ts';
import { openStore } from '#src/store/open.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();

/** Tables or columns only PostgreSQL has, and why. */
const POSTGRES_ONLY: Record<string, string> = {
  gateway_keys: 'replicas share their keys; a SQLite deployment keeps them in keys.json',
  budget_windows: 'replicas share spend caps; a SQLite gateway keeps them in memory',
  budget_holds: 'replicas share spend caps; a SQLite gateway keeps them in memory',
  'events.origin':
    'the process that wrote the row: replicas share the database, so start-up gap detection must tell a dead replica from a live one',
};

test('SQLite and PostgreSQL stores have the same tables and columns', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const dir = mkdtempSync(join(tmpdir(), 'svc-tables-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lite = await openStore(join(dir, 'svc.db'));
  t.after(() => lite.close());
  const pg = await openStore({ engine: 'postgres', url: await postgres.createDatabase() });
  t.after(() => pg.close());

  const liteColumns = await sql<{ t: string; c: string }>`
    SELECT m.name AS t, c.name AS c FROM sqlite_schema m, pragma_table_xinfo(m.name) c
    WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`.execute(lite.kysely);
  const pgColumns = await sql<{ t: string; c: string }>`
    SELECT table_name AS t, column_name AS c FROM information_schema.columns
    WHERE table_schema = current_schema()`.execute(pg.kysely);
  const shape = (rows: Array<{ t: string; c: string }>, skip: Record<string, string>) => {
    const out: Record<string, string[]> = {};
    for (const r of rows) {
      if (skip[r.t] || skip[`${r.t}.${r.c}`]) continue;
      out[r.t] = [...(out[r.t] ?? []), r.c];
    }
    for (const cols of Object.values(out)) cols.sort();
    return out;
  };
  assert.deepEqual(shape(pgColumns.rows, POSTGRES_ONLY), shape(liteColumns.rows, {}));
});

test('replicas opening one new PostgreSQL database together migrate it once', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  // distinct URLs give each "replica" its own pool, as separate processes would have
  const stores = await Promise.all(
    [1, 2, 3, 4].map((i) => openStore({ engine: 'postgres', url: `${url}?application_name=replica${i}` })),
  );
  t.after(() => Promise.all(stores.map((s) => s.close())));
  for (const s of stores) assert.equal(s.schemaVersion, POSTGRES_SCHEMA_VERSION);
  const salts = await stores[0].kysely
    .selectFrom('store_meta')
    .select('value')
    .where('key', '=', 'forget_salt')
    .execute();
  assert.equal(salts.length, 1);
});

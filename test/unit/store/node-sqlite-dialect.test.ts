import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { type Generated, Kysely, sql } from 'kysely';
import { adaptDatabase, createNodeSqliteDialect } from '#src/store/node-sqlite-dialect.ts';

interface Db {
  items: { id: Generated<number>; name: string; done: number; note: string | null };
}

function setup(t: { after: (fn: () => unknown) => void }, path = ':memory:') {
  const raw = new DatabaseSync(path);
  raw.exec(
    'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, done INTEGER NOT NULL, note TEXT)',
  );
  const db = new Kysely<Db>({ dialect: createNodeSqliteDialect(raw) });
  t.after(async () => {
    await db.destroy();
    raw.close();
  });
  return { raw, db };
}

test('insert returns the new row id and select reads rows back', async (t) => {
  const { db } = setup(t);
  const r = await db.insertInto('items').values({ name: 'a', done: 0, note: null }).executeTakeFirstOrThrow();
  assert.equal(r.insertId, 1n);
  await db
    .insertInto('items')
    .values([
      { name: 'b', done: 1, note: 'x' },
      { name: 'c', done: 0, note: undefined as unknown as null },
    ])
    .execute();
  const rows = await db.selectFrom('items').selectAll().orderBy('id').execute();
  assert.deepEqual(
    rows.map((r) => ({ ...r })),
    [
      { id: 1, name: 'a', done: 0, note: null },
      { id: 2, name: 'b', done: 1, note: 'x' },
      { id: 3, name: 'c', done: 0, note: null },
    ],
  );
});

test('update and delete report the affected row count', async (t) => {
  const { db } = setup(t);
  await db
    .insertInto('items')
    .values([1, 2, 3].map((i) => ({ name: `n${i}`, done: 0, note: null })))
    .execute();
  const u = await db.updateTable('items').set({ done: 1 }).where('id', '>=', 2).executeTakeFirstOrThrow();
  assert.equal(u.numUpdatedRows, 2n);
  const d = await db.deleteFrom('items').where('done', '=', 0).executeTakeFirstOrThrow();
  assert.equal(d.numDeletedRows, 1n);
});

test('insert … returning is treated as a reader', async (t) => {
  const { db } = setup(t);
  const row = await db
    .insertInto('items')
    .values({ name: 'r', done: 0, note: null })
    .returning(['id', 'name'])
    .executeTakeFirstOrThrow();
  assert.deepEqual({ ...row }, { id: 1, name: 'r' });
});

test('booleans bind as 1 and 0, and Date as ISO text', async (t) => {
  const { db } = setup(t);
  await db
    .insertInto('items')
    .values({ name: 'bool', done: true as unknown as number, note: new Date(0) as unknown as string })
    .execute();
  await db
    .insertInto('items')
    .values({ name: 'bool2', done: false as unknown as number, note: null })
    .execute();
  const rows = await db.selectFrom('items').select(['done', 'note']).orderBy('id').execute();
  assert.deepEqual(
    rows.map((r) => ({ ...r })),
    [
      { done: 1, note: '1970-01-01T00:00:00.000Z' },
      { done: 0, note: null },
    ],
  );
  const found = await db
    .selectFrom('items')
    .select('name')
    .where('done', '=', true as unknown as number)
    .execute();
  assert.deepEqual(
    found.map((r) => r.name),
    ['bool'],
  );
});

test('.stream() yields rows one by one and can stop early', async (t) => {
  const { db } = setup(t);
  await db
    .insertInto('items')
    .values(Array.from({ length: 50 }, (_, i) => ({ name: `s${i}`, done: i % 2, note: null })))
    .execute();
  const seen: string[] = [];
  for await (const row of db.selectFrom('items').select('name').orderBy('id').stream()) seen.push(row.name);
  assert.equal(seen.length, 50);
  assert.equal(seen[49], 's49');
  let n = 0;
  for await (const _ of db.selectFrom('items').select('name').orderBy('id').stream()) {
    if (++n === 3) break;
  }
  assert.equal(n, 3);
  // the statement was reset: the same query streams again from the start, and others still run
  const again = [];
  for await (const row of db.selectFrom('items').select('name').orderBy('id').stream()) again.push(row.name);
  assert.equal(again[0], 's0');
  assert.equal(again.length, 50);
});

test('a failing transaction rolls back and a successful one commits', async (t) => {
  const { db } = setup(t);
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ name: 'gone', done: 0, note: null }).execute();
      throw new Error('boom');
    }),
    /boom/,
  );
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('items').values({ name: 'kept', done: 0, note: null }).execute();
  });
  const rows = await db.selectFrom('items').select('name').execute();
  assert.deepEqual(
    rows.map((r) => r.name),
    ['kept'],
  );
});

test('Kysely transactions take the write lock at BEGIN (BEGIN IMMEDIATE)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-dialect-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { db } = setup(t, `${dir}/x.db`);
  await sql`PRAGMA journal_mode = WAL`.execute(db);
  const other = new DatabaseSync(`${dir}/x.db`, { timeout: 0 });
  t.after(() => other.close());
  await db.transaction().execute(async (trx) => {
    await trx.selectFrom('items').selectAll().execute(); // a read only: a deferred BEGIN would hold no write lock
    assert.throws(() => other.exec('BEGIN IMMEDIATE'), /database is locked/);
  });
  other.exec('BEGIN IMMEDIATE');
  other.exec('COMMIT');
});

test('the adapter caches prepared statements and reports readers', () => {
  const raw = new DatabaseSync(':memory:');
  const adapted = adaptDatabase(raw);
  const a = adapted.prepare('SELECT 1 AS one');
  assert.equal(a, adapted.prepare('SELECT 1 AS one'));
  assert.equal(a.reader, true);
  assert.deepEqual({ ...(a.all([]) as object[])[0] }, { one: 1 });
  assert.equal(adapted.prepare('CREATE TABLE t (x)').reader, false);
  adapted.close();
  raw.close();
});

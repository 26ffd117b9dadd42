import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { sql } from 'kysely';
import { isSvcError } from '#src/lib/errors.ts';
import { readSchemaVersion, SCHEMA_VERSION } from '#src/store/migrate.ts';
import { MIGRATIONS } from '#src/store/migrations/index.ts';
import {
  assertSqliteVersion,
  assertWritable,
  BUSY_TIMEOUT_MS,
  MIN_SQLITE_VERSION,
  openStore,
  type SqliteStore,
  sqliteVersion,
} from '#src/store/open.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-open-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(tmp, `s${++n}`, 'svc.db');

const storeError = (pattern: RegExp) => (err: unknown) =>
  isSvcError(err) && err.code === 'store_error' && err.exitCode === 1 && pattern.test(err.message);

test('a new store is created with its parent folders, in WAL mode with the pragmas of DECISIONS §3', async (t) => {
  const store = await openStore(fresh());
  t.after(() => store.close());
  const pragma = async (name: string) => {
    const r = await sql<Record<string, unknown>>`PRAGMA ${sql.raw(name)}`.execute(store.kysely);
    return Object.values(r.rows[0])[0];
  };
  assert.equal(await pragma('journal_mode'), 'wal');
  assert.equal(await pragma('synchronous'), 1); // NORMAL
  assert.equal(await pragma('foreign_keys'), 1);
  assert.ok(Number(await pragma('busy_timeout')) >= 5000);
  assert.equal(await pragma('busy_timeout'), BUSY_TIMEOUT_MS);
  // SVC_SQLITE_BUSY_TIMEOUT_MS (the target's busyTimeoutMs) sets it instead
  const tuned = await openStore({ engine: 'sqlite', path: fresh(), busyTimeoutMs: 250 });
  t.after(() => tuned.close());
  assert.deepEqual({ ...(tuned as SqliteStore).db.prepare('PRAGMA busy_timeout').get() }, { timeout: 250 });
});

test('the linked SQLite is new enough, and an older one is refused with the reason', () => {
  const db = new DatabaseSync(':memory:');
  assert.doesNotThrow(() => assertSqliteVersion(sqliteVersion(db)));
  db.close();
  assert.equal(MIN_SQLITE_VERSION, '3.51.3');
  assert.throws(
    () => assertSqliteVersion('3.51.2'),
    storeError(/SQLite 3\.51\.2 is too old: svc needs 3\.51\.3 or newer.*WAL-reset bug/),
  );
  assert.throws(() => assertSqliteVersion('3.9.99'), storeError(/too old/));
  assert.doesNotThrow(() => assertSqliteVersion('3.51.3'));
  assert.doesNotThrow(() => assertSqliteVersion('3.100.0'));
  assert.doesNotThrow(() => assertSqliteVersion('4.0'));
});

test('migrations are listed in order, set user_version, and re-opening is idempotent', async () => {
  assert.deepEqual(
    MIGRATIONS.map((m) => m.version),
    MIGRATIONS.map((_, i) => i + 1),
  );
  assert.equal(SCHEMA_VERSION, MIGRATIONS.length);
  const path = fresh();
  const first = await openStore(path);
  assert.equal(first.schemaVersion, SCHEMA_VERSION);
  await first.kysely.insertInto('store_meta').values({ key: 'k', value: 'v' }).execute();
  await first.close();
  const second = await openStore(path);
  assert.equal(second.schemaVersion, SCHEMA_VERSION);
  assert.equal(await readSchemaVersion(second.kysely), SCHEMA_VERSION);
  const meta = await second.kysely.selectFrom('store_meta').select('key').orderBy('key').execute();
  assert.deepEqual(
    meta.map((r) => r.key),
    ['forget_salt', 'k'],
  );
  await second.close();
  await second.close(); // closing twice is harmless
});

test('opens of one file within a process share one connection (no self-deadlock on the write lock)', async () => {
  const path = fresh();
  const stores = await Promise.all([openStore(path), openStore(path)]);
  for (const s of stores) assert.equal(s.schemaVersion, SCHEMA_VERSION);
  assert.equal(stores[0].db, stores[1].db);
  await stores[0].close();
  // the other holder still works after the first closed
  await stores[1].kysely.insertInto('store_meta').values({ key: 'still', value: 'open' }).execute();
  await stores[1].close();
  const again = await openStore(path);
  assert.notEqual(again.db, stores[0].db);
  await again.close();
});

test('a store with a newer user_version is refused, naming both versions', async () => {
  const path = fresh();
  (await openStore(path)).close();
  const raw = new DatabaseSync(path);
  raw.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 5}`);
  raw.close();
  await assert.rejects(
    openStore(path),
    storeError(
      new RegExp(
        `schema version ${SCHEMA_VERSION + 5}, newer than this svc binary's ${SCHEMA_VERSION}; upgrade svc`,
      ),
    ),
  );
});

test('a file that is not SQLite gives a clear store_error', async () => {
  const path = join(tmp, 'not-a-db.db');
  writeFileSync(path, 'this is a text file, not a database\n'.repeat(200));
  await assert.rejects(openStore(path), storeError(/is not a SQLite database/));
  await assert.rejects(openStore(path, { readOnly: true }), storeError(/is not a SQLite database/));
});

test('a path that names something else is refused before anything changes it: its mode stays as it was', async () => {
  const path = join(tmp, 'readable-text.db');
  writeFileSync(path, 'root:x:0:0:root:/root:/bin/sh\n'.repeat(50));
  chmodSync(path, 0o644);
  await assert.rejects(openStore(path), storeError(/is not a SQLite database/));
  assert.equal(statSync(path).mode & 0o777, 0o644, 'a file that is not a store is never made private');
  const folder = join(tmp, 'a-folder');
  mkdirSync(folder, { mode: 0o755 });
  chmodSync(folder, 0o755);
  await assert.rejects(openStore(folder), storeError(/is not a regular file/));
  assert.equal(statSync(folder).mode & 0o777, 0o755);
  // a folder that cannot be made is one sentence naming it, not an unexpected error
  await assert.rejects(
    openStore(join(path, 'below-a-file', 'svc.db')),
    storeError(/ENOTDIR.*point --db-path or SVC_DB_PATH/),
  );
});

test('a missing store is refused when it must exist; a folder is not a store', async () => {
  await assert.rejects(
    openStore(join(tmp, 'missing.db'), { readOnly: true }),
    storeError(/No trace store at/),
  );
  await assert.rejects(
    openStore(join(tmp, 'missing.db'), { mustExist: true }),
    storeError(/No trace store at/),
  );
  await assert.rejects(openStore(tmp, { mustExist: true }), storeError(/is not a (regular )?file/));
});

test("an empty file is a store only to a server; another application's database is none, and stays as it was", async () => {
  const empty = join(tmp, 'touched.db');
  writeFileSync(empty, '');
  for (const options of [{ mustExist: true }, { readOnly: true }])
    await assert.rejects(
      openStore(empty, options),
      storeError(/touched\.db is empty, not an svc trace store/),
    );
  assert.equal(statSync(empty).size, 0, 'a refused command leaves the empty file empty');
  const foreign = join(tmp, 'other-app.db');
  const other = new DatabaseSync(foreign);
  other.exec('CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES (1); PRAGMA user_version = 3');
  other.close();
  chmodSync(foreign, 0o644);
  const bytes = readFileSync(foreign);
  for (const options of [{}, { mustExist: true }, { readOnly: true }])
    await assert.rejects(openStore(foreign, options), storeError(/without svc's tables .*left as it is/));
  assert.deepEqual(readFileSync(foreign), bytes, 'not migrated, not switched to WAL');
  assert.equal(statSync(foreign).mode & 0o777, 0o644, 'not made private');
  // a server creates its store in the empty file
  const store = await openStore(empty);
  assert.equal(store.schemaVersion, SCHEMA_VERSION);
  await store.close();
});

test('read-only opens do not migrate and cannot write', async () => {
  const path = fresh();
  (await openStore(path)).close();
  const ro = await openStore(path, { readOnly: true });
  assert.equal(ro.schemaVersion, SCHEMA_VERSION);
  await assert.rejects(
    ro.kysely.insertInto('store_meta').values({ key: 'a', value: 'b' }).execute(),
    /readonly/,
  );
  await ro.close();
});

test('a store this process may not write is refused with one sentence; a writable one is left as it was', async () => {
  const path = fresh();
  (await openStore(path)).close();
  // SQLite opens a file it may not write (mode, owner, read-only file system) for reading without a word;
  // a connection opened read-only is the same to it
  const ro = new DatabaseSync(path, { readOnly: true });
  try {
    assert.throws(
      () => assertWritable(ro, path),
      storeError(/^The trace store .*svc\.db is read-only for this process \(.*readonly.*\); make the file/),
    );
    assert.equal(ro.isTransaction, false, 'the probe leaves no transaction open');
  } finally {
    ro.close();
  }
  const rw = new DatabaseSync(path);
  try {
    assertWritable(rw, path);
    assert.equal(
      (rw.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
      SCHEMA_VERSION,
    );
    assert.equal(rw.isTransaction, false);
  } finally {
    rw.close();
  }
});

test('a store SQLite cannot use at open is refused with what happened and what to do', async () => {
  const path = fresh();
  await (await openStore(path)).close();
  // another process holds the file exclusively (as a stuck writer would): every open waits out the busy
  // timeout (SVC_SQLITE_BUSY_TIMEOUT_MS, here 300 ms), then fails with SQLITE_BUSY; a full disk fails
  // here the same way (SQLITE_IOERR / SQLITE_FULL)
  const holder = new DatabaseSync(path);
  try {
    holder.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE');
    await assert.rejects(
      openStore({ engine: 'sqlite', path, busyTimeoutMs: 300 }),
      storeError(/^Cannot use the trace store .*svc\.db: database is locked; .*run the command again/),
    );
  } finally {
    holder.close();
  }
});

/**
 * @module The SQLite store (the embedded default): one file in WAL mode with the pragmas of DECISIONS §3,
 * private to its owner (0600), a SQLite version check, migrations, the exact `decimal_sum` aggregate for
 * money, and the group commit of events through one cached prepared INSERT inside BEGIN IMMEDIATE.
 */
import { existsSync, type Stats, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { Kysely } from 'kysely';
import { add, type Decimal, formatDecimal, readCost, ZERO } from '../lib/decimal.ts';
import { errorMessage, SvcError } from '../lib/errors.ts';
import { createFolders, isReadOnlyFileSystem, PRIVATE_FOLDER_MODE } from '../lib/folders.ts';
import { runEventInsert, sqliteDialect } from './dialect.ts';
import { migrateToLatest, readSchemaVersion } from './migrate.ts';
import { createNodeSqliteDialect } from './node-sqlite-dialect.ts';
import type { OpenStoreOptions, SqliteStore } from './open.ts';
import { createPrivateFile, tightenStoreFiles } from './private-files.ts';
import type { Database } from './schema.ts';
import { holdServerLock, type ServerLock } from './server-lock.ts';
import { SQLITE, sqliteAdvice, sqliteCode } from './sqlite-errors.ts';
import { assertSvcStoreContent } from './svc-schema.ts';

/** SQLite before 3.51.3 can corrupt a WAL database when two connections write and reset the WAL. */
export const MIN_SQLITE_VERSION = '3.51.3';
/** How long a statement waits for another connection's lock, unless SVC_SQLITE_BUSY_TIMEOUT_MS says otherwise. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * The busy timeout of a store's connection (SVC_SQLITE_BUSY_TIMEOUT_MS, else BUSY_TIMEOUT_MS): a worker
 * thread that opens its own connection to the file (checkpoints, pattern statistics) waits as long.
 */
export function busyTimeoutOf(store: { db: { prepare(sql: string): { get(): unknown } } }): number {
  return (store.db.prepare('PRAGMA busy_timeout').get() as { timeout: number }).timeout;
}

export function sqliteVersion(db: DatabaseSync): string {
  return String((db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v);
}

/** Throws with the reason when the linked SQLite is older than MIN_SQLITE_VERSION. */
export function assertSqliteVersion(version: string): void {
  if (compareVersions(version, MIN_SQLITE_VERSION) < 0) {
    throw new SvcError('store_error', {
      message: `SQLite ${version} is too old: svc needs ${MIN_SQLITE_VERSION} or newer, because older versions can corrupt a WAL database when two processes write it (the WAL-reset bug); run svc on Node.js 24 with a newer bundled SQLite.`,
    });
  }
}

/** Opens one connection to the file at `path` (open.ts shares it within the process). */
export async function openSqliteStore(
  path: string,
  options: OpenStoreOptions & { busyTimeoutMs?: number },
): Promise<SqliteStore> {
  const readOnly = options.readOnly ?? false;
  const busyMs = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
  const exists = existsAsStore(path);
  if (!exists && (readOnly || options.mustExist)) assertStoreFile(path);
  if (!exists && !readOnly) {
    // the store holds prompts: folders svc makes for it are private (an existing one is never changed)
    createFolders(
      dirname(path),
      'the trace store',
      'point --db-path or SVC_DB_PATH at a writable location',
      PRIVATE_FOLDER_MODE,
    );
    createNewStoreFile(path);
  }
  let db = connect(path, readOnly, path, busyMs);
  let lock: ServerLock | undefined;
  try {
    if (readOnly) db = readableConnection(db, path, busyMs);
    else assertSqliteFile(db, path);
    // an empty file is a store only to a server, which creates one; another application's database never
    if (exists) assertSvcStoreContent(db, path, readOnly || options.mustExist === true);
    // only a file now known to be a SQLite database is made private: never whatever the path named
    if (exists && !readOnly) makePrivate(path, options);
    assertSqliteVersion(sqliteVersion(db));
    applyPragmas(db, readOnly, busyMs);
    if (!readOnly) assertWritable(db, path);
    // a second server of the kind is refused here, before a migration or its start-up scans change anything
    if (options.serverLock && !readOnly) lock = holdServerLock(path, options.serverLock);
    registerFunctions(db);
  } catch (err) {
    lock?.release();
    if (db.isOpen) db.close(); // readableConnection closed the one it gave up
    if (err instanceof SvcError) throw err;
    // SQLite opened the file for reading instead (a read-only mount, a -wal or -shm of another user)
    if (!readOnly && isWriteRefusedAtOpen(err)) throw readOnlyStore(path, err);
    throw new SvcError('store_error', {
      message: `Cannot use the trace store ${path}: ${errorMessage(err)}${withAdvice(err)}.`,
      cause: err,
    });
  }
  const kysely = new Kysely<Database>({ dialect: createNodeSqliteDialect(db) });
  try {
    const schemaVersion = readOnly ? await readSchemaVersion(kysely) : await migrateToLatest(kysely, path);
    let closed = false;
    return {
      engine: 'sqlite',
      dialect: sqliteDialect,
      path,
      db,
      kysely,
      schemaVersion,
      appendEvents: createAppender(db, kysely),
      ...(lock?.sharedWith ? { serverSharedWith: lock.sharedWith } : {}),
      async close() {
        if (closed) return;
        closed = true;
        await kysely.destroy();
        db.close();
        lock?.release();
      },
    };
  } catch (err) {
    await kysely.destroy();
    db.close();
    lock?.release();
    if (err instanceof SvcError) throw err;
    throw new SvcError('store_error', {
      message: `Cannot migrate the trace store ${path}: ${errorMessage(err)}${withAdvice(err)}.`,
      cause: err,
    });
  }
}

/**
 * A store this process may not write (a read-only file, -wal or -shm, or file system) opens without
 * complaint, SQLite falling back to reading, and would fail only at its first event: one write, rolled
 * back, finds out at open and refuses with one sentence.
 */
export function assertWritable(db: DatabaseSync, path: string): void {
  try {
    db.exec('BEGIN IMMEDIATE');
    try {
      const { user_version } = db.prepare('PRAGMA user_version').get() as { user_version: number };
      db.exec(`PRAGMA user_version = ${user_version}`);
    } finally {
      db.exec('ROLLBACK');
    }
  } catch (err) {
    if (sqliteCode(err) !== SQLITE.READONLY) throw err;
    throw readOnlyStore(path, err);
  }
}

/** SQLite could open the file but not write it or its -wal / -shm (READONLY, CANTOPEN). */
function isWriteRefusedAtOpen(err: unknown): boolean {
  const code = sqliteCode(err);
  return code === SQLITE.READONLY || code === SQLITE.CANTOPEN;
}

/** One sentence for a store this process may not write; names a read-only file system when that is why. */
function readOnlyStore(path: string, err: unknown): SvcError {
  const folder = dirname(resolve(path));
  const reason = isReadOnlyFileSystem(folder) ? `${folder} is on a read-only file system` : errorMessage(err);
  return new SvcError('store_error', {
    message: `The trace store ${path} is read-only for this process (${reason}); make the file, its -wal and -shm files and its folder writable by the user svc runs as, or point --db-path or SVC_DB_PATH at a writable store.`,
    cause: err,
  });
}

/** One node:sqlite connection to `path`, store_error with one sentence when even that fails. */
function connect(target: string | URL, readOnly: boolean, path: string, busyMs: number): DatabaseSync {
  try {
    return new DatabaseSync(target, { readOnly, timeout: busyMs });
  } catch (cause) {
    throw new SvcError('store_error', {
      message: `Cannot open the trace store ${path}: ${errorMessage(cause)}; check the path and its permissions.`,
      cause,
    });
  }
}

/**
 * A read-only connection reads a WAL store through its -shm (read-only when this process may not write
 * it), so it needs the -wal and -shm to exist or to be creatable next to the file. Where they are absent
 * and cannot be created (a read-only mount, a folder this user may not write), the first read fails; if
 * the WAL then holds nothing and no -shm is left (no -wal or an empty one: no connection has the store
 * open), the file alone is the whole database and it is read as immutable (no lock, no -shm). A -wal
 * with changes, or a -shm this process cannot use, cannot be read there: one sentence says so. `db` is
 * closed when it is replaced or on failure.
 */
function readableConnection(db: DatabaseSync, path: string, busyMs: number): DatabaseSync {
  try {
    assertSqliteFile(db, path);
    return db;
  } catch (err) {
    const code = sqliteCode(err);
    if (code !== SQLITE.CANTOPEN && code !== SQLITE.READONLY) throw err;
    db.close();
    // a -shm left means a connection may still be writing: reading the file as immutable could tear
    if (fileSize(`${path}-wal`) > 0 || existsSync(`${path}-shm`)) {
      throw new SvcError('store_error', {
        message: `Cannot read the trace store ${path}: its -wal file holds changes or a process has the store open, and reading it then needs a -shm file that this process can neither use nor create in ${dirname(resolve(path))} (${errorMessage(err)}); run the command as a user who may write that folder, or have the store's owner open it for writing once (svc gateway) to move the changes into the file.`,
        cause: err,
      });
    }
  }
  const immutable = connect(new URL(`${pathToFileURL(resolve(path)).href}?immutable=1`), true, path, busyMs);
  try {
    assertSqliteFile(immutable, path);
  } catch (err) {
    immutable.close();
    throw err;
  }
  return immutable;
}

/** The size of a file, 0 when it does not exist. */
function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Throws store_error with one sentence when `path` is not an existing file. */
export function assertStoreFile(path: string): void {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    throw new SvcError('store_error', {
      message: `No trace store at ${path}; pass --db-path or set SVC_DB_PATH to an existing store.`,
    });
  }
  if (!st.isFile()) {
    throw new SvcError('store_error', {
      message: `The trace store path ${path} is not a file; pass a file path.`,
    });
  }
}

// --- internal ---

/** `; <what to do>` for a SQLite failure whose remedy is known (a full disk, a lock, a damaged file). */
function withAdvice(err: unknown): string {
  const advice = sqliteAdvice(err);
  return advice === undefined ? '' : `; ${advice}`;
}

/**
 * One BEGIN IMMEDIATE transaction of cached prepared statements run straight on `db`, inside Kysely's
 * connection (so no other Kysely query interleaves). At one request in flight every call commits
 * alone, and going through Kysely's query pipeline per statement (BEGIN, each row, COMMIT) cost more
 * than the rows themselves.
 */
function createAppender(db: DatabaseSync, kysely: Kysely<Database>): SqliteStore['appendEvents'] {
  let stmts:
    | { begin: StatementSync; insert: StatementSync; insertIfAbsent: StatementSync; commit: StatementSync }
    | undefined;
  return (rows, options) =>
    kysely.connection().execute(async () => {
      stmts ??= {
        begin: db.prepare('BEGIN IMMEDIATE'),
        insert: db.prepare(sqliteDialect.insertEvent),
        insertIfAbsent: db.prepare(sqliteDialect.insertEventIfAbsent),
        commit: db.prepare('COMMIT'),
      };
      const insert = options?.ifAbsent ? stmts.insertIfAbsent : stmts.insert;
      stmts.begin.run();
      try {
        for (const r of rows) runEventInsert(insert, r);
        stmts.commit.run();
      } catch (err) {
        try {
          if (db.isTransaction) db.exec('ROLLBACK');
        } catch {
          // the failure to report is the first one (the trace writer judges whether it is retryable)
        }
        throw err;
      }
    });
}

/**
 * Whether something exists at `path`; it must then be a regular file (a folder, a device such as /dev/null,
 * a FIFO is refused with one sentence before anything opens or changes it).
 */
function existsAsStore(path: string): boolean {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new SvcError('store_error', {
      message: `Cannot use the trace store path ${path} (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}); point --db-path or SVC_DB_PATH at a file you can write.`,
      cause: err,
    });
  }
  if (!st.isFile()) {
    throw new SvcError('store_error', {
      message: `The trace store path ${path} is not a regular file; point --db-path or SVC_DB_PATH at a file.`,
    });
  }
  return true;
}

/** A new store file is created 0600, so its -wal and -shm follow that mode. */
function createNewStoreFile(path: string): void {
  try {
    createPrivateFile(path);
  } catch (err) {
    throw new SvcError('store_error', {
      message: `Cannot create the trace store ${path} (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}); point --db-path or SVC_DB_PATH at a writable location.`,
      cause: err,
    });
  }
}

/** An existing store's files that group or others may read are tightened to 0600 (with a warning). */
function makePrivate(path: string, options: OpenStoreOptions): void {
  const t = tightenStoreFiles(path);
  if (t.files.length > 0) {
    options.log?.warn('the trace store was readable by other users; its files are now mode 0600', {
      files: t.files,
      previous_modes: t.previousModes,
    });
  }
  if (t.failed.length > 0) {
    options.log?.warn('cannot make the trace store private (mode 0600); chmod 600 its files as their owner', {
      failed: t.failed,
    });
  }
}

/** Touches the schema so a non-SQLite file fails here with a clear sentence (SQLITE_NOTADB). */
function assertSqliteFile(db: DatabaseSync, path: string): void {
  try {
    db.prepare('SELECT count(*) AS n FROM sqlite_schema').get();
  } catch (cause) {
    if (sqliteCode(cause) === SQLITE.NOTADB) {
      throw new SvcError('store_error', {
        message: `${path} is not a SQLite database, so it cannot be the trace store; point --db-path at an svc store or move the file away.`,
        cause,
      });
    }
    throw cause;
  }
}

function applyPragmas(db: DatabaseSync, readOnly: boolean, busyMs: number): void {
  db.exec(`PRAGMA busy_timeout = ${busyMs}`);
  if (!readOnly) {
    const mode = (db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string }).journal_mode;
    if (mode !== 'wal') throw new Error(`journal_mode is ${mode}, expected wal`);
  }
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
}

function registerFunctions(db: DatabaseSync): void {
  // Exact money sums in SQL: decimal_sum(cost_usd) returns a decimal string (DECISIONS §3).
  db.aggregate('decimal_sum', {
    start: () => ZERO as unknown as null,
    // a value that is no number is left out: a throw here would not fail the statement, node:sqlite then
    // answers it with no rows at all (undefined)
    step: (acc: unknown, value: unknown) => {
      const d = readCost(value);
      return (d === null ? acc : add(acc as Decimal, d)) as unknown as null;
    },
    result: (acc: unknown) => formatDecimal(acc as Decimal),
    deterministic: true,
  } as never);
  // nearest_ranks(x, '50,95'): the nearest-rank percentiles of a group's numbers (the value at rank
  // ceil(p/100 × n) in ascending order) as a JSON array in the order asked; NULL when it has none. One
  // pass and one sort per group, where a window function would sort the whole window (analytics latency).
  db.aggregate('nearest_ranks', {
    start: () => ({ values: [] as number[], percentiles: '' }) as unknown as null,
    step: (acc: unknown, value: unknown, percentiles: unknown) => {
      const a = acc as { values: number[]; percentiles: string };
      const n = typeof value === 'bigint' ? Number(value) : value;
      if (typeof n === 'number' && Number.isFinite(n)) a.values.push(n);
      a.percentiles = String(percentiles);
      return a as unknown as null;
    },
    result: (acc: unknown) => {
      const { values, percentiles } = acc as { values: number[]; percentiles: string };
      if (values.length === 0) return null;
      const sorted = Float64Array.from(values).sort();
      const at = (p: number) =>
        sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p * sorted.length) / 100))) - 1];
      return JSON.stringify(percentiles.split(',').map((p) => at(Number(p))));
    },
    deterministic: true,
  } as never);
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * @module Opens the store: a SQLite file (sqlite.ts, the embedded default) or a PostgreSQL database
 * (postgres.ts, when SVC_DATABASE_URL / --database-url names one), migrated to this binary's schema,
 * behind one Store interface. Opens of the same store within a process share one connection or pool.
 */
import { resolve } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { Kysely } from 'kysely';
import type { StoreTarget } from '../config/paths.ts';
import type { Logger } from '../lib/log.ts';
import type { EngineName, SqlDialect } from './dialect.ts';
import { assertCurrentSchema, POSTGRES_SCHEMA_VERSION, SCHEMA_VERSION } from './migrate.ts';
import type { ChannelHandlers } from './postgres-session.ts';
import type { Database, NewEventRow } from './schema.ts';
import type { ServerKind } from './server-lock.ts';
import { assertStoreFile, openSqliteStore } from './sqlite.ts';

export {
  assertSqliteVersion,
  assertWritable,
  BUSY_TIMEOUT_MS,
  MIN_SQLITE_VERSION,
  sqliteVersion,
} from './sqlite.ts';

interface StoreBase {
  readonly engine: EngineName;
  /** The SQLite file, or the PostgreSQL URL without its password (safe to print). */
  readonly path: string;
  readonly kysely: Kysely<Database>;
  /** The SQL fragments that differ between the engines. */
  readonly dialect: SqlDialect;
  readonly schemaVersion: number;
  /**
   * Appends events atomically: all rows or none (the trace writer's group commit). `ifAbsent` skips rows
   * whose id is stored already (the retry of an append whose outcome is unknown).
   */
  appendEvents(rows: readonly NewEventRow[], options?: { ifAbsent?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export interface SqliteStore extends StoreBase {
  readonly engine: 'sqlite';
  readonly db: DatabaseSync;
  /** Opened for a gateway while another gateway runs on the store (server-lock.ts): its pid when known. */
  readonly serverSharedWith?: { pid?: number };
}

export interface PostgresStore extends StoreBase {
  readonly engine: 'postgres';
  /** This process's id, stamped on every event row it inserts (events.origin). */
  readonly origin: string;
  /**
   * Calls `onNotify` for every NOTIFY on `channel` and `onReconnect` after the listening connection came
   * back (notifications may have been missed meanwhile); resolves once listening, with a stop.
   */
  listen(channel: string, handlers: ChannelHandlers): Promise<() => Promise<void>>;
  /** Says "this origin is alive" to other processes until the store closes or the process dies. */
  announcePresence(): Promise<void>;
  /** Which of these origins belong to a process that announced its presence and is still alive. */
  liveOrigins(origins: Iterable<string>): Promise<Set<string>>;
}

export type Store = SqliteStore | PostgresStore;

export interface OpenStoreOptions {
  /** Open without creating or migrating (backup/restore inspection); a SQLite file must exist. */
  readOnly?: boolean;
  /** Refuse (store_error) instead of creating a missing SQLite file. Implied by readOnly. */
  mustExist?: boolean;
  /**
   * Refuse (store_error) a store whose schema version is not this binary's: with readOnly nothing
   * migrates it, and a report's queries need the current tables (a newer store: "upgrade svc").
   */
  currentSchema?: boolean;
  /** Told when the modes of an existing store had to be tightened to 0600 (a writable open does that). */
  log?: Logger;
  /**
   * A stop during a server's start: aborting it ends a PostgreSQL open at once (its connections closed,
   * rejecting with the signal's reason) rather than after its connection attempt's timeout, and later,
   * until the store closes, closes every connection of the store, so a start step waiting on the server
   * fails at once; connections asked for afterwards fail at once too.
   */
  signal?: AbortSignal;
  /**
   * A server's start (SQLite): takes that kind's lock on the store once it is known writable and before
   * it is migrated (server-lock.ts): a second agent server is refused, a second gateway is told of the first
   * (`serverSharedWith`); released at close. PostgreSQL: `serve` takes the serve lock on the session
   * connection once migrated (postgres-session.ts), a second agent server is refused; gateways take none.
   */
  serverLock?: ServerKind;
}

interface Shared {
  opening: Promise<Store>;
  refs: number;
}

// One connection per file and mode in a process. node:sqlite is synchronous, so a second connection of
// the same process waiting on the write lock would block the event loop that the first one needs to
// commit: a self-deadlock until busy_timeout. Sharing makes Kysely's connection mutex serialise them.
// PostgreSQL stores share one pool per URL for the same reason of economy.
const shared = new Map<string, Shared>();

/**
 * Opens (creating and migrating unless readOnly) the store. A string is a SQLite path. Fails with
 * store_error and one sentence for a missing file (when it must exist), a non-SQLite file, an empty one
 * (when it must exist), another application's database (svc-schema.ts), an old SQLite, an unreachable
 * database or a newer schema. Each caller closes its own handle.
 */
export function openStore(path: string, options?: OpenStoreOptions): Promise<SqliteStore>;
export function openStore(
  target: Extract<StoreTarget, { engine: 'sqlite' }>,
  options?: OpenStoreOptions,
): Promise<SqliteStore>;
export function openStore(target: StoreTarget, options?: OpenStoreOptions): Promise<Store>;
export async function openStore(
  target: StoreTarget | string,
  options: OpenStoreOptions = {},
): Promise<Store> {
  const t: StoreTarget = typeof target === 'string' ? { engine: 'sqlite', path: target } : target;
  const mode = options.readOnly ? 'ro' : 'rw';
  const key = t.engine === 'sqlite' ? `${mode}:${resolve(t.path)}` : `${mode}:${t.url}`;
  let entry = shared.get(key);
  if (entry) {
    entry.refs++;
  } else {
    const opening =
      t.engine === 'sqlite'
        ? openSqliteStore(t.path, { ...options, busyTimeoutMs: t.busyTimeoutMs })
        : // pg and its helpers load only for a PostgreSQL store, not for every SQLite command
          import('./postgres.ts').then((pg) =>
            pg.openPostgresStore(t.url, { ...options, timeoutMs: t.timeoutMs }),
          );
    entry = { opening, refs: 1 };
    shared.set(key, entry);
  }
  const current = entry;
  let store: Store;
  try {
    store = await current.opening;
  } catch (err) {
    if (shared.get(key) === current) shared.delete(key);
    throw err;
  }
  let closed = false;
  const handle = {
    ...store,
    async close() {
      if (closed) return;
      closed = true;
      if (--current.refs > 0) return;
      if (shared.get(key) === current) shared.delete(key);
      await store.close();
    },
  } as Store;
  try {
    if (options.mustExist && t.engine === 'sqlite') assertStoreFile(t.path);
    if (options.currentSchema) {
      const expected = store.engine === 'sqlite' ? SCHEMA_VERSION : POSTGRES_SCHEMA_VERSION;
      assertCurrentSchema(store.path, store.schemaVersion, expected);
    }
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}

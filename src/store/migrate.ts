/**
 * @module Runs the frozen migrations at open. SQLite: `PRAGMA user_version` is the schema version and
 * BEGIN IMMEDIATE serialises racing processes. PostgreSQL: its own migrations (migrations/postgres/),
 * the version in store_meta, and a transaction-scoped advisory lock so N replicas migrate once.
 */
import { type Kysely, sql } from 'kysely';
import { SvcError } from '../lib/errors.ts';
import { ADVISORY_LOCKS } from './dialect.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { POSTGRES_MIGRATIONS, POSTGRES_VERSION_KEY } from './migrations/postgres/index.ts';

/** The schema version this binary writes and expects (SQLite; what a backup records). */
export const SCHEMA_VERSION = MIGRATIONS.length;
/** The PostgreSQL schema version this binary writes and expects (its own sequence). */
export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS.length;

export async function readSchemaVersion(db: Kysely<any>): Promise<number> {
  const r = await sql<{ user_version: number }>`PRAGMA user_version`.execute(db);
  return Number(r.rows[0]?.user_version ?? 0);
}

/**
 * Brings the store to SCHEMA_VERSION inside one BEGIN IMMEDIATE transaction, so two processes
 * opening a new store at once cannot both migrate it. Refuses a store newer than the binary.
 */
export async function migrateToLatest(db: Kysely<any>, path: string): Promise<number> {
  const current = await readSchemaVersion(db);
  if (current === SCHEMA_VERSION) return current;
  if (current > SCHEMA_VERSION) throw newerStore(path, current);
  return db.connection().execute(async (conn) => {
    await sql`BEGIN IMMEDIATE`.execute(conn);
    try {
      let version = await readSchemaVersion(conn);
      if (version > SCHEMA_VERSION) throw newerStore(path, version); // a newer binary won the race
      for (const m of MIGRATIONS) {
        if (m.version <= version) continue;
        await m.up(conn);
        version = await readSchemaVersion(conn);
        if (version !== m.version)
          throw new Error(`migration ${m.name} did not set user_version ${m.version}`);
      }
      await sql`COMMIT`.execute(conn);
      return version;
    } catch (err) {
      await sql`ROLLBACK`.execute(conn);
      throw err;
    }
  });
}

/**
 * Refuses a store that a read-only open found at another schema version than `expected`, this binary's:
 * a newer one as a writable open does ("upgrade svc"), an older one because migrating it would write.
 */
export function assertCurrentSchema(label: string, version: number, expected: number): void {
  if (version > expected) throw newerStore(label, version, expected);
  if (version < expected) {
    throw new SvcError('store_error', {
      message: `The trace store ${label} has schema version ${version}, older than this svc binary's ${expected}, and this command only reads it, so it does not migrate it; run svc gateway or svc serve on it once (a command that opens the store for writing migrates it), then run this command again.`,
    });
  }
}

/** The version recorded in store_meta; 0 for a database svc never migrated. */
export async function readPostgresSchemaVersion(db: Kysely<any>): Promise<number> {
  // pg_class through the statement's snapshot: to_regclass may answer from a catalog cache that has
  // not yet seen the table a replica we waited for just committed
  const t = await sql<{ n: number }>`SELECT count(*) AS n FROM pg_class c
    JOIN pg_namespace s ON s.oid = c.relnamespace
    WHERE c.relname = 'store_meta' AND s.nspname = current_schema()`.execute(db);
  if (Number(t.rows[0]?.n ?? 0) === 0) return 0;
  const r = await sql<{
    value: string;
  }>`SELECT value FROM store_meta WHERE key = ${POSTGRES_VERSION_KEY}`.execute(db);
  return Number(r.rows[0]?.value ?? 0);
}

/**
 * Brings a PostgreSQL database to POSTGRES_SCHEMA_VERSION in one transaction holding the migration
 * advisory lock: replicas that start together wait for the first, then find the work done. DDL is
 * transactional there, so a failed migration leaves nothing behind.
 */
export async function migratePostgres(db: Kysely<any>, label: string): Promise<number> {
  const current = await readPostgresSchemaVersion(db);
  if (current === POSTGRES_SCHEMA_VERSION) return current;
  if (current > POSTGRES_SCHEMA_VERSION) throw newerStore(label, current, POSTGRES_SCHEMA_VERSION);
  const [a, b] = ADVISORY_LOCKS.migrate;
  return db.connection().execute(async (conn) => {
    await sql`BEGIN`.execute(conn);
    try {
      await sql`SELECT pg_advisory_xact_lock(${sql.lit(a)}, ${sql.lit(b)})`.execute(conn);
      let version = await readPostgresSchemaVersion(conn);
      if (version > POSTGRES_SCHEMA_VERSION) throw newerStore(label, version, POSTGRES_SCHEMA_VERSION);
      for (const m of POSTGRES_MIGRATIONS) {
        if (m.version <= version) continue;
        await m.up(conn);
        version = await readPostgresSchemaVersion(conn);
        if (version !== m.version) throw new Error(`migration ${m.name} did not record version ${m.version}`);
      }
      await sql`COMMIT`.execute(conn);
      return version;
    } catch (err) {
      await sql`ROLLBACK`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}

// --- internal ---

function newerStore(path: string, version: number, expected = SCHEMA_VERSION): SvcError {
  return new SvcError('store_error', {
    message: `The trace store ${path} has schema version ${version}, newer than this svc binary's ${expected}; upgrade svc.`,
  });
}

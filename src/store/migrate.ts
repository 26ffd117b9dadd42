/**
 * @module Runs the frozen migrations at open; `PRAGMA user_version` is the schema version.
 */
import { type Kysely, sql } from 'kysely';
import { SvcError } from '../lib/errors.ts';
import { MIGRATIONS } from './migrations/index.ts';

/** The schema version this binary writes and expects. */
export const SCHEMA_VERSION = MIGRATIONS.length;

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

// --- internal ---

function newerStore(path: string, version: number): SvcError {
  return new SvcError('store_error', {
    message: `The trace store ${path} has schema version ${version}, newer than this svc binary's ${SCHEMA_VERSION}; upgrade svc.`,
  });
}

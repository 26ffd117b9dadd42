/**
 * @module Tells an svc trace store from any other SQLite file before anything changes it: an empty file
 * (`touch svc.db`) or an empty database is no store yet (a server creates one in it; a command that needs
 * a store refuses it), and a database with tables but no svc schema (another application's) is never
 * taken as one: migrating it would add svc's tables to someone else's data.
 */
import type { DatabaseSync } from 'node:sqlite';
import { SvcError } from '../lib/errors.ts';

export type StoreFileContent = 'svc' | 'empty' | 'foreign';

/** What the opened file holds: svc's schema (user_version set by a migration, and its events table), nothing, or something else. */
export function storeFileContent(db: DatabaseSync): StoreFileContent {
  // one statement, so one read transaction: a migration another process commits cannot fall between the
  // table list and user_version (no tables yet, version already set, would read as another app's file)
  const { tables, has_events, user_version } = db
    .prepare(
      `SELECT (SELECT count(*) FROM sqlite_schema WHERE type = 'table') AS tables,
              EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'events') AS has_events,
              user_version
         FROM pragma_user_version`,
    )
    .get() as { tables: number; has_events: number; user_version: number };
  if (tables === 0 && user_version === 0) return 'empty';
  return user_version > 0 && has_events === 1 ? 'svc' : 'foreign';
}

const refused = new WeakSet<SvcError>();

/**
 * Refuses (store_error, one sentence) a file that holds no svc store: any but an svc one when the command
 * needs an existing store (`mustExist`), a foreign database always.
 */
export function assertSvcStoreContent(db: DatabaseSync, path: string, mustExist: boolean): void {
  const content = storeFileContent(db);
  if (content === 'svc' || (content === 'empty' && !mustExist)) return;
  const err = new SvcError('store_error', {
    message:
      content === 'empty'
        ? `${path} is empty, not an svc trace store; point --db-path or SVC_DB_PATH at the store svc gateway or svc serve writes (either creates one there when it starts).`
        : `${path} is a SQLite database without svc's tables (another application's?), so it cannot be the trace store and was left as it is; point --db-path or SVC_DB_PATH at an svc store or at a new file.`,
  });
  refused.add(err);
  throw err;
}

/** Whether `err` is assertSvcStoreContent's refusal (restore words it for a backup). */
export function isNotSvcStore(err: unknown): boolean {
  return err instanceof SvcError && refused.has(err);
}

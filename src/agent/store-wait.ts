/**
 * @module A turn's own store writes and reads wait out a store that cannot be reached (PostgreSQL
 * restarting or failed over) or, on SQLite, cannot be written (a full disk, a read-only mount, a write
 * lock another process holds past the busy timeout), as the gateway's answers wait for their events: a
 * turn accepted before an outage ends once the store is back, with its messages, its counters and exactly
 * one closing event, instead of failing half-written and holding its session (409 turn_in_flight until a
 * restart), or stopping the server when its end cannot be written.
 */

import { errorMessage } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { isStoreUnreachable } from '../store/dialect.ts';
import { isSqliteKeyConflict, isSqliteWriteRefused } from '../store/sqlite-errors.ts';

/** Between two attempts while the store is away (the trace writer's own pace after its quick attempts). */
export const STORE_WAIT_INTERVAL_MS = 1000;

/**
 * Runs `work` until it ends other than on an unreachable or unwritable store. An attempt that failed on a lost
 * connection (PostgreSQL) or an I/O error at COMMIT (SQLite) may have committed unheard: a retry meeting its
 * own row (a unique or primary-key violation) counts as done and gives undefined, so `work` must be an
 * insert of fixed ids, an update, or a read. The same violation on the first attempt is thrown.
 */
export async function whileStoreAway<T>(
  log: Logger,
  what: string,
  work: () => Promise<T>,
): Promise<T | undefined> {
  let failures = 0;
  for (;;) {
    try {
      return await work();
    } catch (err) {
      if (failures > 0 && isUniqueViolation(err)) return undefined;
      const refused = isSqliteWriteRefused(err);
      if (!refused && !isStoreUnreachable(err)) throw err;
      if (failures === 0)
        log.warn(`the trace store cannot be ${refused ? 'written' : 'reached'}; the turn waits for it`, {
          what,
          message: errorMessage(err),
        });
      failures++;
    }
    await new Promise((resolve) => setTimeout(resolve, STORE_WAIT_INTERVAL_MS));
  }
}

// --- internal ---

/** PostgreSQL 23505, SQLite's SQLITE_CONSTRAINT_PRIMARYKEY / _UNIQUE. */
function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '23505' || isSqliteKeyConflict(err);
}

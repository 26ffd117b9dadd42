/**
 * @module Removes every stale copy of rewritten or deleted content from the store's files. SQLite
 * leaves old cell bytes in unused page space (even with secure_delete, page rebuilds during splits keep
 * them) and old page images in the WAL. VACUUM rebuilds every page from the live rows, then a TRUNCATE
 * checkpoint writes the rebuilt pages into the main file and empties the WAL.
 * On PostgreSQL, VACUUM of the events table removes the dead row versions an UPDATE left behind from
 * every page and index a query can reach, without blocking writers, and its ANALYZE takes the planner's
 * statistics again (pg_stats samples column values, a user id among them); freed page space, the server's WAL
 * and its archives may hold the old bytes until they are overwritten (VACUUM FULL events rewrites the
 * table, under a lock that stops every replica's writes: an operator's maintenance-window step).
 */
import { statSync } from 'node:fs';
import { sql } from 'kysely';
import { errorMessage, SvcError } from '../lib/errors.ts';
import type { SqliteStore, Store } from './open.ts';
import { SQLITE, sqliteAdvice, sqliteCode } from './sqlite-errors.ts';

export interface ScrubReport {
  /** False when another process kept reading through the checkpoint: the WAL still holds old pages. */
  readonly walTruncated: boolean;
  /** Size of the main file afterwards. */
  readonly bytes: number;
}

/**
 * VACUUM, then `wal_checkpoint(TRUNCATE)`. Takes the write lock for as long as VACUUM runs (time and
 * temporary disk grow with the store); fails with store_error when it cannot get it.
 */
export async function scrubStore(store: Store): Promise<ScrubReport> {
  if (store.engine === 'postgres') return vacuumEvents(store);
  try {
    await sql`VACUUM`.execute(store.kysely);
    return { walTruncated: await truncateWal(store), bytes: statSync(store.path).size };
  } catch (cause) {
    throw new SvcError('store_error', { message: compactFailure(store.path, cause), cause });
  }
}

// --- internal ---

/**
 * The sentence for a failed VACUUM or checkpoint, by SQLite's code: a full disk says so (VACUUM needs
 * free space about the store's size, in the temp folder and for the WAL); a lock asks to stop the writers.
 */
function compactFailure(path: string, cause: unknown): string {
  const code = sqliteCode(cause);
  if (code === SQLITE.FULL)
    return `The disk is full, so the trace store ${path} could not be compacted (${errorMessage(cause)}); free at least its size in space on its disk and in the temp folder, then run the command again.`;
  const advice = code === SQLITE.BUSY || code === SQLITE.LOCKED ? undefined : sqliteAdvice(cause);
  return `Cannot compact the trace store ${path} (${errorMessage(cause)}); ${advice ?? 'stop the processes writing to it and run the command again'}.`;
}

/**
 * `wal_checkpoint(TRUNCATE)` waits (busy timeout) for readers, but answers busy at once while another
 * connection runs a checkpoint: a running gateway or agent server checkpoints every 500 ms and at once
 * when the WAL passes 32 MiB, which the VACUUM just made it do. Such a busy is retried for as long as
 * the busy timeout (SVC_SQLITE_BUSY_TIMEOUT_MS, 10 s by default); a reader held through the busy timeout
 * still ends it (the first attempt alone waits that long).
 */
async function truncateWal(store: SqliteStore): Promise<boolean> {
  const busy = store.db.prepare('PRAGMA busy_timeout').get() as { timeout: number };
  const deadline = Date.now() + busy.timeout;
  for (;;) {
    const r = await sql<{ busy: number }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(store.kysely);
    if (Number(r.rows[0]?.busy ?? 1) === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function vacuumEvents(store: Store): Promise<ScrubReport> {
  try {
    await sql`VACUUM (ANALYZE) events`.execute(store.kysely);
  } catch (cause) {
    throw new SvcError('store_error', {
      message: `Cannot vacuum the events table of ${store.path} (${errorMessage(cause)}); run VACUUM (ANALYZE) events as the table's owner.`,
      cause,
    });
  }
  const r = await sql<{ n: number }>`SELECT pg_total_relation_size('events') AS n`.execute(store.kysely);
  return { walTruncated: true, bytes: Number(r.rows[0]?.n ?? 0) };
}

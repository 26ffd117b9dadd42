/**
 * @module One sentence for a SQLite failure that reached the command line unclassified (a page found
 * damaged in the middle of a read, a full disk): what happened and what to do, by SQLite's primary code.
 */
import { errorMessage } from '../lib/errors.ts';

/** The sentence for a node:sqlite error, or undefined when `err` is not one this module knows. */
export function describeSqliteFailure(err: unknown): string | undefined {
  const code = (err as { errcode?: unknown } | null)?.errcode;
  if (typeof code !== 'number') return undefined;
  const advice = ADVICE[code & 0xff];
  return advice === undefined ? undefined : `${advice[0]} (${errorMessage(err)}); ${advice[1]}.`;
}

/** What to do about a node:sqlite error (`check the disk, …`), or undefined when it is not one known here. */
export function sqliteAdvice(err: unknown): string | undefined {
  const code = (err as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' ? ADVICE[code & 0xff]?.[1] : undefined;
}

/** What happened and what to do when the store's file is damaged (SQLITE_CORRUPT, a failed integrity_check). */
export const DAMAGED: readonly [string, string] = [
  'The trace store is damaged',
  'restore it from a backup with svc restore, or point --db-path at an intact copy',
];

// --- internal ---

/** SQLite primary result codes (sqlite.org/rescode.html) → what happened, what to do. */
const ADVICE: Record<number, readonly [string, string]> = {
  3: ['The trace store cannot be accessed', "check the file's and its folder's permissions"], // PERM
  5: ['The trace store stayed locked by another process', 'run the command again when it is idle'], // BUSY
  6: ['The trace store stayed locked by another process', 'run the command again when it is idle'], // LOCKED
  8: ['The trace store cannot be written', "check the file's and its folder's permissions"], // READONLY
  10: [
    'The trace store could not be read or written',
    'check the disk and its free space, then run the command again',
  ], // IOERR (a full disk when SQLite maps its shared memory)
  11: DAMAGED, // CORRUPT
  13: ['The disk is full', 'free some space, then run the command again'], // FULL
  26: DAMAGED, // NOTADB
};

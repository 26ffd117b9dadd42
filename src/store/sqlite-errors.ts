/**
 * @module One sentence for a SQLite failure that reached the command line unclassified (a page found
 * damaged in the middle of a read, a full disk): what happened and what to do, by SQLite's primary code.
 */
import { errorMessage } from '../lib/errors.ts';

/** SQLite primary result codes (sqlite.org/rescode.html) that the store tells apart. */
export const SQLITE = {
  PERM: 3,
  BUSY: 5,
  LOCKED: 6,
  READONLY: 8,
  IOERR: 10,
  CORRUPT: 11,
  FULL: 13,
  CANTOPEN: 14,
  CONSTRAINT: 19,
  NOTADB: 26,
} as const;

/** The primary result code of a node:sqlite error (an extended code folded to it); undefined for others. */
export function sqliteCode(err: unknown): number | undefined {
  const code = (err as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' ? code & 0xff : undefined;
}

/**
 * SQLite refused a write for the disk's, the file system's or another process's sake (a full disk, a file
 * grown past its limit, a mount or folder turned read-only, an I/O error, a write lock held past the busy
 * timeout), not for the statement's: the same write succeeds once there is room, the mount is writable
 * again or the lock is released. SQLite has rolled the statement or transaction back.
 */
export function isSqliteWriteRefused(err: unknown): boolean {
  const code = sqliteCode(err);
  return code !== undefined && WRITE_REFUSED.has(code);
}

/**
 * A row whose primary key or unique column is already taken (SQLITE_CONSTRAINT_PRIMARYKEY or _UNIQUE, as
 * PostgreSQL's 23505): on the retry of an insert of fixed ids after a refused write whose commit landed
 * (an I/O error reported at COMMIT), the row the first attempt wrote.
 */
export function isSqliteKeyConflict(err: unknown): boolean {
  const code = (err as { errcode?: unknown } | null)?.errcode;
  return code === CONSTRAINT_PRIMARYKEY || code === CONSTRAINT_UNIQUE;
}

/** A lock another process held past the busy timeout (SQLITE_BUSY, SQLITE_LOCKED), not the disk. */
export function isSqliteLocked(err: unknown): boolean {
  const code = sqliteCode(err);
  return code === SQLITE.BUSY || code === SQLITE.LOCKED;
}

/** The sentence for a node:sqlite error, or undefined when `err` is not one this module knows. */
export function describeSqliteFailure(err: unknown): string | undefined {
  const code = sqliteCode(err);
  const advice = code === undefined ? undefined : ADVICE[code];
  return advice === undefined ? undefined : `${advice[0]} (${errorMessage(err)}); ${advice[1]}.`;
}

/** What to do about a node:sqlite error (`check the disk, …`), or undefined when it is not one known here. */
export function sqliteAdvice(err: unknown): string | undefined {
  const code = sqliteCode(err);
  return code === undefined ? undefined : ADVICE[code]?.[1];
}

/** What happened and what to do when the store's file is damaged (SQLITE_CORRUPT, a failed integrity_check). */
export const DAMAGED: readonly [string, string] = [
  'The trace store is damaged',
  'restore it from a backup with svc restore, or point --db-path at an intact copy',
];

// --- internal ---

/** SQLite extended result codes (SQLITE_CONSTRAINT | n << 8). */
const CONSTRAINT_PRIMARYKEY = SQLITE.CONSTRAINT | (6 << 8);
const CONSTRAINT_UNIQUE = SQLITE.CONSTRAINT | (8 << 8);

const WRITE_REFUSED: ReadonlySet<number> = new Set([
  SQLITE.BUSY,
  SQLITE.LOCKED,
  SQLITE.PERM,
  SQLITE.READONLY,
  SQLITE.IOERR,
  SQLITE.FULL,
  SQLITE.CANTOPEN,
]);

/** SQLite primary result code → what happened, what to do. */
const ADVICE: Record<number, readonly [string, string]> = {
  [SQLITE.PERM]: ['The trace store cannot be accessed', "check the file's and its folder's permissions"],
  [SQLITE.BUSY]: [
    'The trace store stayed locked by another process',
    'run the command again when it is idle',
  ],
  [SQLITE.LOCKED]: [
    'The trace store stayed locked by another process',
    'run the command again when it is idle',
  ],
  [SQLITE.READONLY]: ['The trace store cannot be written', "check the file's and its folder's permissions"],
  [SQLITE.IOERR]: [
    'The trace store could not be read or written',
    'check the disk and its free space, then run the command again',
  ], // a full disk too, when SQLite maps its shared memory
  [SQLITE.CORRUPT]: DAMAGED,
  [SQLITE.FULL]: ['The disk is full', 'free some space, then run the command again'],
  [SQLITE.NOTADB]: DAMAGED,
};

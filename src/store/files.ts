/**
 * @module Crash-safe file steps shared by backup and restore: temp names beside the target, fsync of
 * files and folders, and a rename that never overwrites.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { errorMessage, SvcError } from '../lib/errors.ts';
import { isReadOnlyFileSystem } from '../lib/folders.ts';
import { SQLITE, sqliteCode } from './sqlite-errors.ts';

/**
 * A hidden temp path in the target's folder, so the final rename stays on one filesystem. Until
 * removeQuietly is called for it, SIGINT or SIGTERM removes it (and its SQLite journal) before the
 * process exits, so an interrupted backup or export leaves no partial copy of the store or its data.
 */
export function tempPathBeside(target: string, label: string): string {
  const path = join(
    dirname(target),
    `.${basename(target)}.${label}-${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  pending.add(path);
  if (pending.size === 1) for (const signal of SIGNALS) process.on(signal, removePendingAndExit);
  return path;
}

/**
 * Which file of the SQLite store at `storePath` (the store itself, its -wal, -shm or -journal) `path`
 * names, by path or through a link (to the file, or to a folder on the way), or undefined: a file svc
 * writes there would replace part of the store. An idle store may have no -wal yet, so names are compared
 * as well as files.
 */
export function storeFileAt(path: string, storePath: string): string | undefined {
  const dest = resolve(path);
  const destReal = withRealFolder(dest);
  const destStat = statQuietly(dest);
  for (const file of ['', '-wal', '-shm', '-journal'].map((suffix) => resolve(`${storePath}${suffix}`))) {
    if (file === dest || withRealFolder(file) === destReal) return file;
    const fileStat = destStat && statQuietly(file);
    if (fileStat && fileStat.dev === destStat.dev && fileStat.ino === destStat.ino) return file;
  }
  return undefined;
}

/** `path` with its folder's links resolved (its own name kept), or as given when the folder is missing. */
function withRealFolder(path: string): string {
  try {
    return join(realpathSync(dirname(path)), basename(path));
  } catch {
    return path;
  }
}

function statQuietly(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Lets the event loop turn once, so a SIGINT or SIGTERM that arrived during a long synchronous step
 * (VACUUM INTO) is handled (temp files removed, exit) before the step's result is put in place.
 */
export function yieldToSignals(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Flushes a file's data (and a folder's entries) to stable storage. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } catch (err) {
    // Some filesystems refuse fsync on a folder; the data fsync already happened.
    if ((err as NodeJS.ErrnoException).code !== 'EINVAL' && (err as NodeJS.ErrnoException).code !== 'EISDIR')
      throw err;
  } finally {
    closeSync(fd);
  }
}

/**
 * Moves `from` to `to` only if `to` does not exist (hard link then unlink, atomic against a racing
 * creator); returns false when `to` exists. Falls back to check-then-rename where links are unsupported.
 */
export function renameNoClobber(from: string, to: string): boolean {
  try {
    linkSync(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw err;
    if (existsSync(to)) return false;
    renameSync(from, to);
    fsyncPath(dirname(to));
    return true;
  }
  rmSync(from, { force: true });
  fsyncPath(dirname(to));
  return true;
}

/** Best-effort removal of a temp file (and the journal an interrupted SQLite write left beside it). */
export function removeQuietly(path: string): void {
  for (const file of [path, `${path}-journal`]) {
    try {
      rmSync(file, { force: true });
    } catch {
      // nothing more to do; the name is hidden and carries the pid
    }
  }
  if (pending.delete(path) && pending.size === 0)
    for (const signal of SIGNALS) process.off(signal, removePendingAndExit);
}

/**
 * One sentence (io_error, exit 1) for a failure to write `what` at `path` (a temp file beside it, the
 * copy into it, its fsync or rename): a read-only file system, a folder that refuses it, a full disk,
 * whether Node (EROFS, EACCES, EPERM, ENOSPC, EDQUOT) or SQLite (READONLY, CANTOPEN, FULL, IOERR) saw it;
 * `remedy` is what to do about a folder that cannot be written. Undefined for any other failure (a damaged
 * source, a refusal), which keeps its own sentence.
 */
export function describeWriteFailure(
  what: string,
  path: string,
  err: unknown,
  remedy: string,
): SvcError | undefined {
  const folder = dirname(path);
  const errno = (err as NodeJS.ErrnoException | null)?.code;
  const sqlite = sqliteCode(err);
  let kind =
    sqlite !== undefined
      ? SQLITE_WRITE_FAILURES[sqlite]
      : typeof errno === 'string'
        ? (ERRNO_WRITE_FAILURES[errno] ?? (isOwnTempRefused(path, err) ? 'denied' : undefined))
        : undefined;
  if (kind === undefined) return undefined;
  // SQLite says only I/O error or cannot open where a read-only mount refused it
  if (sqlite !== undefined && kind !== 'full' && isReadOnlyFileSystem(folder)) kind = 'readonly';
  const reason = errorMessage(err).replace(/, \w+ '[^']*'(?: -> '[^']*')?$/, ''); // not the hidden temp path
  const message = {
    readonly: `Cannot write ${what} ${path}: the folder ${folder} is on a read-only file system (${reason}); ${remedy}.`,
    denied: `Cannot write ${what} ${path}: the folder ${folder} cannot be written (${reason}); ${remedy}.`,
    full: `Cannot write ${what} ${path}: the disk is full (${reason}); free some space, then run the command again.`,
    io: `Cannot write ${what} ${path} (${reason}); check the disk and its free space, then run the command again.`,
  }[kind];
  return new SvcError('io_error', { message, cause: err });
}

// --- internal ---

type WriteFailure = 'readonly' | 'denied' | 'full' | 'io';

const ERRNO_WRITE_FAILURES: Record<string, WriteFailure> = {
  EROFS: 'readonly',
  EACCES: 'denied',
  EPERM: 'denied',
  ENOSPC: 'full',
  EDQUOT: 'full',
  EIO: 'io',
};

/**
 * ENOENT on creating our own temp file beside `path`, in a folder that exists (createFolders made it): the
 * folder refuses new files without saying EACCES, as /proc and /sys-like file systems do. Any other ENOENT
 * (a source that vanished) is not a write failure of the destination.
 */
function isOwnTempRefused(path: string, err: unknown): boolean {
  const failed = (err as NodeJS.ErrnoException).path;
  return (
    (err as NodeJS.ErrnoException).code === 'ENOENT' &&
    typeof failed === 'string' &&
    dirname(failed) === dirname(path) &&
    basename(failed).startsWith(`.${basename(path)}.`)
  );
}

/** SQLite primary result codes of a write that the disk or folder refused. */
const SQLITE_WRITE_FAILURES: Record<number, WriteFailure> = {
  [SQLITE.PERM]: 'denied',
  [SQLITE.READONLY]: 'denied',
  [SQLITE.IOERR]: 'io',
  [SQLITE.FULL]: 'full',
  [SQLITE.CANTOPEN]: 'denied',
};

/** Temp paths handed out and not yet removed. */
const pending = new Set<string>();
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** A listener replaces the default exit, so it exits itself with the status the default would give. */
function removePendingAndExit(signal: NodeJS.Signals): void {
  for (const path of [...pending]) removeQuietly(path);
  process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
}

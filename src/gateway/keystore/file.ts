/**
 * @module The keystore file: strict reads (a bad file is refused with its path and the reason and is
 * never overwritten), updates serialized across processes by an OS lock on a file beside it, written atomically
 * (temporary file, fsync, rename, directory fsync; mode 0600), and the gateway's in-memory cache.
 */

import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { errorMessage, SvcError } from '../../lib/errors.ts';
import { createFolders, PRIVATE_FOLDER_MODE } from '../../lib/folders.ts';
import { jsonSyntaxReason } from '../../lib/json-syntax.ts';
import type { Logger } from '../../lib/log.ts';
import { SQLITE, sqliteCode } from '../../store/sqlite-errors.ts';
import { guardKeystoreWriters } from './file-mode.ts';
import { decodeKeystore, type KeyRecord, type Keystore } from './keystore.ts';

/** The document at `path`, or undefined when there is no file. Throws `keystore_invalid` on a bad file. */
export function readKeystoreFile(path: string): Keystore | undefined {
  let text: string;
  try {
    // a device (/dev/zero) or a FIFO would be read without end: only a file (or a folder, below) is read
    const st = statSync(path);
    if (!st.isFile() && !st.isDirectory())
      throw new SvcError('keystore_invalid', {
        message: `The keystore path ${path} is not a regular file (a device, FIFO or socket); point --keystore or SVC_GATEWAY_KEYSTORE at the keys file.`,
      });
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof SvcError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EISDIR') {
      // "check its permissions" would send the operator the wrong way
      throw new SvcError('keystore_invalid', {
        message: `The keystore path ${path} is a folder, not a file; point --keystore or SVC_GATEWAY_KEYSTORE at the keys file (such as ${join(path, 'keys.json')}).`,
        cause: err,
      });
    }
    throw new SvcError('keystore_invalid', {
      message: `Cannot read the keystore ${path}: ${errorMessage(err)}; check its permissions.`,
      cause: err,
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw invalid(path, `it is not valid JSON (${jsonSyntaxReason(err)})`);
  }
  const decoded = decodeKeystore(data);
  if (!decoded.ok) throw invalid(path, `it does not match the keystore schema (${decoded.reason})`);
  return decoded.value;
}

export interface KeystoreChange<T> {
  /** The document to write, or undefined to leave the file untouched. */
  next: Keystore | undefined;
  result: T;
}

/**
 * Read-modify-write under the keystore's lock file, so that concurrent commands in several processes
 * all keep their change. `change` sees undefined when no keystore exists yet.
 */
export async function updateKeystoreFile<T>(
  path: string,
  change: (current: Keystore | undefined) => KeystoreChange<T>,
): Promise<T> {
  // A change that writes nothing (a listing with no lapsed grace period, an unknown key id, revoking a
  // revoked key) is answered from the file as it is, which writers only ever rename into place: it
  // creates no folder at a mistyped path and needs no lock file where the folder is read-only (the
  // chart's Secret mount). Only a change that writes is redone under the lock.
  const planned = change(readKeystoreFile(path));
  if (!planned.next) return planned.result;
  // A keystore path that is a symlink is written where it leads (its lock beside that file too): a rename
  // over the link would replace it with a copy and leave the file it named, which the gateway or another
  // path may read, without the change.
  const file = followSymlinks(path);
  createFolders(
    dirname(file),
    'the keystore',
    'point --keystore or SVC_GATEWAY_KEYSTORE at a writable location',
    PRIVATE_FOLDER_MODE,
  );
  const release = acquireLock(`${file}.lock`);
  try {
    const { next, result } = change(readKeystoreFile(path));
    if (next) writeAtomically(file, `${JSON.stringify(next, null, 2)}\n`);
    return result;
  } finally {
    release();
  }
}

/** The keystore's folder cannot be written (a read-only mount such as the chart's Secret, or its mode). */
export function isReadOnlyKeystore(err: unknown): boolean {
  return err instanceof SvcError && err.details?.read_only === true;
}

/** What the gateway keeps in memory: secret_hash → record. */
export interface KeystoreCache {
  /** Re-reads the file if it changed since the last look; cheap enough to call on every request. */
  refresh(): void;
  lookup(secretHash: string): KeyRecord | undefined;
  readonly size: number;
}

export interface KeystoreCacheOptions {
  log: Logger;
  /** Re-read even an unchanged-looking file after this long (guards against inode reuse). */
  maxAgeMs?: number;
  now?: () => number;
}

/**
 * Loads the keystore now (throws when it is unreadable) and reloads it when its stat identity changes.
 * Each request pays one statSync (about 1.7 µs measured, the same as the token's SHA-256), not a read:
 * writers always rename a new file into place, so inode, size, mtime and ctime move together, and the
 * change is visible to the very next request (DECISIONS §4: no restart). Keys are taken only from a file no
 * other user can write (guardKeystoreWriters, at the load and at each reload). A file that turns bad while
 * running keeps the last good keys and logs the reason; a deleted file means no key authenticates (logged
 once, so the operator sees why every client gets 401).
 */
export function createKeystoreCache(path: string, options: KeystoreCacheOptions): KeystoreCache {
  const now = options.now ?? Date.now;
  const maxAgeMs = options.maxAgeMs ?? 5_000;
  guardKeystoreWriters(path, options.log);
  let byHash = index(readKeystoreFile(path));
  let identity = statIdentity(path);
  let loadedAt = now();
  let lastError: string | undefined;

  const reload = (nextIdentity: StatIdentity | undefined) => {
    try {
      guardKeystoreWriters(path, options.log);
      const doc = readKeystoreFile(path);
      if (doc === undefined && lastError !== REMOVED) {
        options.log.error('keystore removed; no key authenticates until it is restored', { keystore: path });
      }
      byHash = index(doc);
      lastError = doc === undefined ? REMOVED : undefined;
    } catch (err) {
      const reason = errorMessage(err);
      if (reason !== lastError)
        options.log.error('keystore reload failed; keeping the last good keys', { reason });
      lastError = reason;
    }
    identity = nextIdentity;
    loadedAt = now();
  };

  return {
    refresh() {
      const current = statIdentity(path);
      if (!sameIdentity(current, identity) || now() - loadedAt >= maxAgeMs) reload(current);
    },
    lookup: (secretHash) => byHash.get(secretHash),
    get size() {
      return byHash.size;
    },
  };
}

// --- internal ---

/** lastError while the file is gone (logged once, like a reason a bad file is refused for). */
const REMOVED = 'removed';
const LOCK_WAIT_MS = 15_000;

function invalid(path: string, reason: string): SvcError {
  return new SvcError('keystore_invalid', {
    message: `The keystore ${path} is refused because ${reason}; fix or restore the file (svc never overwrites a keystore it cannot read).`,
  });
}

/** The file a path names once its symlinks (of the last component, followed hop by hop) are resolved. */
function followSymlinks(path: string): string {
  let at = path;
  for (let hops = 0; hops < 40; hops++) {
    const st = lstatSync(at, { throwIfNoEntry: false });
    if (!st?.isSymbolicLink()) return at;
    at = resolve(dirname(at), readlinkSync(at));
  }
  throw new SvcError('keystore_invalid', {
    message: `The keystore path ${path} is a loop of symbolic links; point --keystore or SVC_GATEWAY_KEYSTORE at the keys file itself.`,
  });
}

function index(store: Keystore | undefined): Map<string, KeyRecord> {
  return new Map((store?.keys ?? []).map((k) => [k.secret_hash, k]));
}

/**
 * What identifies the file's content: inode, size, mtime and ctime (`undefined` while it is absent). The
 * times are read as milliseconds with their fraction (a double resolves ~0.25 µs at today's epoch), not as
 * bigint nanoseconds: the bigint stat built some fourteen bigints and four strings on every request.
 */
interface StatIdentity {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

function statIdentity(path: string): StatIdentity | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  return st && { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

function sameIdentity(a: StatIdentity | undefined, b: StatIdentity | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

/**
 * Takes the keystore's lock: `BEGIN EXCLUSIVE` on an empty SQLite file beside the keystore, SQLite's fcntl
 * write lock, which the operating system drops when its process ends however it ends (a command killed
 * mid-write never blocks the next one, and there is no staleness to guess). Waits up to LOCK_WAIT_MS for
 * another command's change (a few milliseconds each). The file stays: removing it would let a waiter
 * and a newcomer lock two different files.
 */
function acquireLock(lockPath: string): () => void {
  let db: DatabaseSync | undefined;
  try {
    openLockFile(lockPath);
    db = new DatabaseSync(lockPath, { timeout: LOCK_WAIT_MS });
    db.exec('PRAGMA journal_mode = MEMORY'); // no -journal file beside the lock
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    if (db?.isOpen) db.close();
    if (err instanceof SvcError) throw err;
    if (sqliteCode(err) === SQLITE.BUSY) {
      throw new SvcError('keystore_invalid', {
        message: `The keystore is locked by another svc command (${lockPath}) that has not finished in ${LOCK_WAIT_MS / 1000} s; retry once it ends.`,
      });
    }
    throw lockError(lockPath, err);
  }
  const held = db;
  return () => {
    if (held.isOpen) held.close();
  };
}

/**
 * Creates the lock file (mode 0600) when absent. One an older svc left (its pid as text, after a crash) is
 * emptied first: this lock is an empty database, and that one is held by no process.
 */
function openLockFile(lockPath: string): void {
  let fd: number;
  try {
    fd = openSync(lockPath, 'a+', 0o600);
  } catch (err) {
    throw lockError(lockPath, err);
  }
  try {
    const st = fstatSync(fd);
    if (st.size > 0 && st.size < 100) ftruncateSync(fd, 0); // a database is never this small
    if ((st.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

function lockError(lockPath: string, err: unknown): SvcError {
  const code = (err as NodeJS.ErrnoException).code;
  const readOnly = code === 'EROFS' || code === 'EACCES' || code === 'EPERM';
  // a folder that refuses the lock refuses the keystore's write too: the same sentence as writeError's
  if (readOnly || code === 'ENOSPC' || code === 'EDQUOT') {
    return new SvcError('io_error', {
      message: `Cannot write the keystore ${lockPath.slice(0, -'.lock'.length)} (${code}: its lock file ${lockPath} cannot be created there); it is unchanged. Make its folder writable by the user svc runs as (or free disk space), or point --keystore or SVC_GATEWAY_KEYSTORE at a writable copy.`,
      details: { read_only: readOnly },
      cause: err,
    });
  }
  return new SvcError('keystore_invalid', {
    message: `Cannot create the keystore lock ${lockPath}: ${errorMessage(err)}; check the folder's permissions.`,
    cause: err,
  });
}

function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      fchmodSync(fd, 0o600); // regardless of the umask
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // never created, or already gone
    }
    throw writeError(path, err);
  }
  try {
    const dirFd = openSync(dirname(path), 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // directory fsync is not supported everywhere; the rename is already atomic
  }
}

/**
 * A keystore that could not be written (its folder read-only, the disk full): one sentence, the keystore
 * left as it was; a read-only folder is marked so that list-keys still lists it (see isReadOnlyKeystore).
 */
function writeError(path: string, err: unknown): SvcError {
  const code = (err as NodeJS.ErrnoException).code ?? errorMessage(err);
  return new SvcError('io_error', {
    message: `Cannot write the keystore ${path} (${code}); it is unchanged. Make its folder writable by the user svc runs as (or free disk space), or point --keystore or SVC_GATEWAY_KEYSTORE at a writable copy.`,
    details: { read_only: code === 'EROFS' || code === 'EACCES' || code === 'EPERM' },
    cause: err,
  });
}

/**
 * @module `svc restore`: replaces the trace store with a verified backup, atomically. Order: check the
 * backup (SQLite, same schema version as this binary, PRAGMA integrity_check), refuse an existing store
 * without `force`, take the store's exclusive lock (which fails while any other process has it open:
 * that is how a running writer is detected), stage the backup beside the store, fsync and check it,
 * fold the old WAL into the old file, then rename over it. A failure before the rename leaves the old
 * store as it was; after it, the new one is complete.
 */
import {
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  statSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { sql } from 'kysely';
import { errorMessage, isSvcError, SvcError } from '../lib/errors.ts';
import { createFolders, PRIVATE_FOLDER_MODE } from '../lib/folders.ts';
import { type StoreSummary, summarizeFile } from './backup.ts';
import {
  describeWriteFailure,
  fsyncPath,
  removeQuietly,
  renameNoClobber,
  storeFileAt,
  tempPathBeside,
  yieldToSignals,
} from './files.ts';
import { describeProblems, integrityProblems } from './integrity.ts';
import { SCHEMA_VERSION } from './migrate.ts';
import { openStore, type Store } from './open.ts';
import { createPrivateFile } from './private-files.ts';
import { SQLITE, sqliteCode } from './sqlite-errors.ts';
import { isNotSvcStore, storeFileContent } from './svc-schema.ts';

export interface RestoreOptions {
  backup: string;
  dbPath: string;
  /** Replace an existing store. */
  force?: boolean;
  /**
   * How long a read of the backup waits for a lock another process holds on it (SVC_SQLITE_BUSY_TIMEOUT_MS;
   * default 10 s). The store's own lock never waits (lockStore).
   */
  busyTimeoutMs?: number;
  /** Test seam: called after staging and folding the old WAL, just before the rename. */
  _beforeReplace?: () => void;
}

export interface RestoreReport extends StoreSummary {
  readonly backup: string;
  readonly destination: string;
  /** Whether an existing store was replaced. */
  readonly replaced: boolean;
}

export async function restoreStore(options: RestoreOptions): Promise<RestoreReport> {
  const backup = resolve(options.backup);
  // a link to the store names the store: restore that file (renaming over the link would leave the store
  // it names as it was and put the restored one where the link was)
  const target = throughLink(resolve(options.dbPath));
  // by name, through a link or a second (hard) name: the store's lock below would then block its own read
  const storeFile = storeFileAt(backup, target);
  if (storeFile === target) refuse(`The backup ${backup} is the trace store itself; pass a backup file.`);
  if (storeFile !== undefined)
    refuse(`The backup ${backup} is the trace store's file ${storeFile}; pass a file written by svc backup.`);
  const source = { engine: 'sqlite' as const, path: backup, busyTimeoutMs: options.busyTimeoutMs };
  await verifyBackup(source);
  // a folder (or a device) there is no store to replace: say so, with or without --force, rather than
  // "a store already exists" and then a failed write blamed on the parent folder
  if (existsSync(target) && !statSync(target).isFile())
    refuse(`The trace store path ${target} is not a regular file; point --db-path at a file.`);
  // a link to a missing file holds the name (the no-clobber rename fails) but is no store: name it,
  // rather than "a store appeared during the restore" and a --force that meets the same link
  if (isDanglingLink(target))
    refuse(
      `The trace store path ${target} is a link to ${resolve(dirname(target), readlinkSync(target))}, which does not exist; point --db-path at a file, or remove the link, then run restore again.`,
    );
  const exists = storeExists(target);
  if (exists && !options.force) {
    refuse(`A trace store already exists at ${target}; pass --force to replace it with ${backup}.`);
  }
  createFolders(
    dirname(target),
    'the restored trace store',
    'restore to a writable location',
    PRIVATE_FOLDER_MODE,
  );
  // an empty file (touch svc.db) holds no store to keep: it is replaced without --force, under the lock
  const lock = exists || existsSync(target) ? lockStore(target) : undefined;
  const staged = tempPathBeside(target, 'restore');
  try {
    await stage(source, staged);
    await yieldToSignals(); // a Ctrl-C during the copy stops here, with the old store in place
    const summary = await summarizeFile(staged, options.busyTimeoutMs);
    if (lock) releaseWal(lock);
    options._beforeReplace?.();
    if (lock) {
      renameSync(staged, target);
      fsyncPath(dirname(target));
    } else if (!renameNoClobber(staged, target)) {
      refuse(`A trace store appeared at ${target} during the restore; run restore again with --force.`);
    }
    return { backup, destination: target, replaced: exists, ...summary };
  } catch (err) {
    throw describeWriteFailure('the restored trace store', target, err, WRITE_REMEDY) ?? err;
  } finally {
    removeQuietly(staged);
    lock?.close();
  }
}

/** What to do when the store's folder cannot take the restored file. */
const WRITE_REMEDY = 'make the folder writable, or restore to another --db-path';

/**
 * Takes the store's exclusive lock and keeps it until the returned connection closes. In WAL mode
 * every open connection holds a shared lock on the wal-index, so this fails at once while any other
 * process (a gateway, an agent server, a backup) has the store open, even when it is idle. It does not
 * wait SVC_SQLITE_BUSY_TIMEOUT_MS: that lock is held for as long as the other process runs (a server
 * never lets it go), so a wait would only delay the refusal that says to stop it.
 */
export function lockStore(path: string): DatabaseSync {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { timeout: 0 });
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (err) {
    db?.close();
    const code = sqliteCode(err);
    if (code === SQLITE.BUSY || code === SQLITE.LOCKED) {
      refuse(
        `The trace store ${path} is open in another process (a running svc gateway or svc serve, or a backup); stop it, then run restore again.`,
      );
    }
    if (code === SQLITE.NOTADB)
      refuse(`${path} is not a SQLite database; move it away, then run restore again.`);
    const unwritable = describeWriteFailure('the restored trace store', path, err, WRITE_REMEDY);
    if (unwritable) throw unwritable;
    throw new SvcError('store_error', {
      message: `Cannot lock the trace store ${path}: ${errorMessage(err)}.`,
      cause: err,
    });
  }
  // --force replaces a trace store, never another application's database
  if (storeFileContent(db) === 'foreign') {
    db.close();
    refuse(
      `${path} is a SQLite database without svc's tables (another application's?), not a trace store to replace; move it away or restore to another --db-path.`,
    );
  }
  return db;
}

// --- internal ---

function isDanglingLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink() && !existsSync(path);
  } catch {
    return false;
  }
}

/** The file a link at `path` points to when that file exists (links of links too); else `path` itself. */
function throughLink(path: string): string {
  try {
    return lstatSync(path).isSymbolicLink() && existsSync(path) ? realpathSync(path) : path;
  } catch {
    return path; // no such name, or a file where a folder should be: the checks after this one say so
  }
}

/** A backup file, read with the busy timeout the command was given. */
type SqliteSource = { engine: 'sqlite'; path: string; busyTimeoutMs?: number };

function isBusy(err: unknown): boolean {
  const code = sqliteCode(err);
  return (
    code === SQLITE.BUSY || code === SQLITE.LOCKED || /database is (locked|busy)/i.test(errorMessage(err))
  );
}

function refuse(message: string): never {
  throw new SvcError('restore_refused', { message });
}

function storeExists(path: string): boolean {
  return (existsSync(path) && statSync(path).size > 0) || existsSync(`${path}-wal`);
}

/** The backup is a SQLite file of this binary's schema version that passes PRAGMA integrity_check. */
async function verifyBackup(source: SqliteSource): Promise<void> {
  const { path } = source;
  if (!existsSync(path)) refuse(`No backup file at ${path}; pass a file written by svc backup.`);
  if (!statSync(path).isFile())
    refuse(`The backup ${path} is not a regular file; pass a file written by svc backup.`);
  if (!hasSqliteHeader(path))
    refuse(`The backup ${path} is not a SQLite database; pass a file written by svc backup.`);
  let store: Store;
  try {
    store = await openStore(source, { readOnly: true });
  } catch (err) {
    if (isNotSvcStore(err))
      refuse(
        `The backup ${path} holds no svc trace store (no svc tables); pass a file written by svc backup.`,
      );
    // the store's own sentences advise on --db-path; the backup needs advice about itself
    const cause = isSvcError(err) && err.cause !== undefined ? err.cause : err;
    if (isBusy(cause))
      refuse(
        `The backup ${path} is locked by another process (${errorMessage(cause)}); run restore again once that process has let it go.`,
      );
    refuse(`The backup ${path} cannot be read (${errorMessage(cause)}); restore an intact backup instead.`);
  }
  try {
    if (store.schemaVersion !== SCHEMA_VERSION) {
      // spec 1: a backup restores only into its own schema version; an older one has a way forward
      const then =
        store.schemaVersion < SCHEMA_VERSION
          ? ` (the svc release that took it), then start this svc on the restored store (svc gateway or svc serve), which migrates it to schema version ${SCHEMA_VERSION}`
          : '';
      refuse(
        `The backup ${path} has schema version ${store.schemaVersion} but this svc binary uses schema version ${SCHEMA_VERSION}; restore it with an svc binary of the same schema version${then}.`,
      );
    }
    const problems = await integrityProblems(store);
    if (problems.length > 0) {
      refuse(
        `The backup ${path} failed PRAGMA integrity_check (${describeProblems(problems)}); restore an intact backup instead.`,
      );
    }
  } finally {
    await store.close();
  }
}

/** Whether the file starts with SQLite's 16-byte magic string (a cut-off copy still does). */
function hasSqliteHeader(path: string): boolean {
  const head = Buffer.alloc(SQLITE_MAGIC.length);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    // a backup copied in as another user (a container's uid 1000) was "unexpected error: EACCES"
    const code = (err as NodeJS.ErrnoException).code ?? errorMessage(err);
    refuse(
      `The backup ${path} cannot be read (${code}); make it readable by the user svc runs as, then run restore again.`,
    );
  }
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  return head.equals(SQLITE_MAGIC);
}

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/** Copies the backup (through SQLite, so a stray -wal beside it is included) to `staged`, fsynced and checked. */
async function stage(backup: SqliteSource, staged: string): Promise<void> {
  const source = await openStore(backup, { readOnly: true });
  try {
    createPrivateFile(staged); // the restored store is 0600 like a new one; VACUUM INTO fills an empty file
    await sql`VACUUM INTO ${staged}`.execute(source.kysely);
  } finally {
    await source.close();
  }
  fsyncPath(staged);
  const copy = await openStore({ ...backup, path: staged }, { readOnly: true });
  try {
    const problems = await integrityProblems(copy, 'quick_check');
    if (problems.length > 0)
      refuse(`The staged copy of ${backup.path} failed PRAGMA quick_check (${describeProblems(problems)}).`);
  } finally {
    await copy.close();
  }
}

/**
 * Under the exclusive lock: checkpoint the old WAL into the old file and leave WAL mode, which deletes
 * -wal and -shm. The old file is then complete on its own (so a failure still leaves it intact), and no
 * stale WAL frame can be replayed onto the restored file.
 */
function releaseWal(lock: DatabaseSync): void {
  lock.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const mode = (lock.prepare('PRAGMA journal_mode = DELETE').get() as { journal_mode: string }).journal_mode;
  if (mode !== 'delete') throw new SvcError('store_error', { message: `Cannot leave WAL mode (${mode}).` });
}

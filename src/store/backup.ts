/**
 * @module `svc backup`: a hot, WAL-safe, single-file snapshot of the trace store. VACUUM INTO runs in
 * one read transaction, so it neither blocks nor restarts under a concurrent writer, and the snapshot
 * is consistent. It is written to a temp file beside the destination, fsynced, then linked into place
 * without ever overwriting an existing file. A store that fails PRAGMA integrity_check is refused (its
 * backup would not restore), and a destination folder that cannot take the file is one sentence.
 */
import { lstatSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { sql } from 'kysely';
import type { StoreTarget } from '../config/paths.ts';
import { SvcError } from '../lib/errors.ts';
import { createFolders, PRIVATE_FOLDER_MODE } from '../lib/folders.ts';
import { formatUs } from '../lib/time.ts';
import {
  describeWriteFailure,
  fsyncPath,
  removeQuietly,
  renameNoClobber,
  storeFileAt,
  tempPathBeside,
  yieldToSignals,
} from './files.ts';
import { assertStoreIntact } from './integrity.ts';
import { openStore, type Store } from './open.ts';
import { createPrivateFile } from './private-files.ts';
import { redactDatabaseUrl } from './redact-url.ts';

export interface StoreSummary {
  readonly bytes: number;
  readonly schemaVersion: number;
  readonly events: number;
  /** ISO timestamps of the oldest and newest event; null for an empty store. */
  readonly oldestEvent: string | null;
  readonly newestEvent: string | null;
}

export interface BackupReport extends StoreSummary {
  readonly source: string;
  readonly destination: string;
}

/**
 * The SQLite file of `target`; a PostgreSQL store is refused (backup_refused / restore_refused, exit 1)
 * with the advice to use the engine's own tools, which copy a live database consistently.
 */
export function sqliteFileOf(
  target: StoreTarget,
  command: 'backup' | 'restore',
  urlFrom: '--database-url' | 'SVC_DATABASE_URL' = 'SVC_DATABASE_URL',
): string {
  if (target.engine === 'sqlite') return target.path;
  const db = redactDatabaseUrl(target.url);
  // the URL as the user gave it, never echoed (it may hold a password): the variable, or a placeholder
  const url = urlFrom === 'SVC_DATABASE_URL' ? '"$SVC_DATABASE_URL"' : '"<the URL you gave --database-url>"';
  throw new SvcError(command === 'backup' ? 'backup_refused' : 'restore_refused', {
    message:
      command === 'backup'
        ? `svc backup copies a SQLite store file, but this store is the PostgreSQL database ${db}; back it up with PostgreSQL's own tool: pg_dump --format=custom --file=svc.dump ${url}.`
        : `svc restore replaces a SQLite store file, but this store is the PostgreSQL database ${db}; restore a pg_dump archive with PostgreSQL's own tool, with every svc process stopped: pg_restore --clean --if-exists --dbname=${url} svc.dump.`,
  });
}

/**
 * Snapshots the store at `source` into the new file `destination` (refused if it exists), waiting
 * `busyTimeoutMs` for a lock another connection holds (SVC_SQLITE_BUSY_TIMEOUT_MS; default 10 s).
 */
export async function backupStore(
  source: string,
  destination: string,
  busyTimeoutMs?: number,
): Promise<BackupReport> {
  const src = resolve(source);
  const dest = resolve(destination);
  const storeFile = storeFileAt(dest, src);
  if (storeFile !== undefined) {
    throw new SvcError('backup_refused', {
      message:
        storeFile === src
          ? `The backup destination ${dest} is the trace store itself; choose another file.`
          : `The backup destination ${dest} is the trace store's file ${storeFile}, which SQLite rewrites; choose another file.`,
    });
  }
  assertFree(dest);
  const tmp = tempPathBeside(dest, 'backup');
  const asWriteFailure = (err: unknown) =>
    describeWriteFailure('the backup', dest, err, 'choose a destination in a writable folder') ?? err;
  const writing = <T>(step: () => T): T => {
    try {
      return step();
    } catch (err) {
      throw asWriteFailure(err);
    }
  };
  try {
    const store = await openStore({ engine: 'sqlite', path: src, busyTimeoutMs }, { readOnly: true });
    try {
      // a damaged store would give a backup that restore refuses
      await assertStoreIntact(store, 'no backup was written');
      // only now: a missing, unreadable or damaged store leaves no folder behind
      createFolders(dirname(dest), 'the backup', 'choose a writable destination', PRIVATE_FOLDER_MODE);
      writing(() => createPrivateFile(tmp)); // 0600 like the store; VACUUM INTO fills an empty file
      await sql`VACUUM INTO ${tmp}`.execute(store.kysely).catch((err) => Promise.reject(asWriteFailure(err)));
    } finally {
      await store.close();
    }
    await yieldToSignals(); // a Ctrl-C during the copy stops here, without a backup
    writing(() => fsyncPath(tmp));
    const summary = await summarizeFile(tmp, busyTimeoutMs);
    // the name was taken meanwhile (by anything): never a success without the file in place
    if (!writing(() => renameNoClobber(tmp, dest))) throw takenError(dest);
    return { source: src, destination: dest, ...summary };
  } finally {
    removeQuietly(tmp);
  }
}

/** Size, schema version, event count and time span of a store file (opened read-only). */
export async function summarizeFile(path: string, busyTimeoutMs?: number): Promise<StoreSummary> {
  const store = await openStore({ engine: 'sqlite', path, busyTimeoutMs }, { readOnly: true });
  try {
    return { bytes: statSync(path).size, ...(await summarizeStore(store)) };
  } finally {
    await store.close();
  }
}

export async function summarizeStore(store: Store): Promise<Omit<StoreSummary, 'bytes'>> {
  const row = await store.kysely
    .selectFrom('events')
    .select((eb) => [
      eb.fn.countAll<number>().as('events'),
      eb.fn.min('timestamp_us').as('oldest'),
      eb.fn.max('timestamp_us').as('newest'),
    ])
    .executeTakeFirstOrThrow();
  return {
    schemaVersion: store.schemaVersion,
    events: Number(row.events),
    oldestEvent: row.oldest === null ? null : formatUs(Number(row.oldest)),
    newestEvent: row.newest === null ? null : formatUs(Number(row.newest)),
  };
}

/** The report as `key: value` lines (the command's stdout). */
export function formatSummaryLines(fields: Array<[string, string | number | null]>): string {
  return fields.map(([k, v]) => `${k}: ${v ?? 'none'}`).join('\n');
}

// --- internal ---

/**
 * Refuses a destination name that is taken by anything, a link included: a link to a missing file would
 * pass a check that follows it, and then the link could not be replaced (EEXIST). A name under a file
 * (ENOTDIR) is not taken: the folder check after this one says what is wrong.
 */
function assertFree(dest: string): void {
  let taken: boolean;
  try {
    taken = lstatSync(dest, { throwIfNoEntry: false }) !== undefined;
  } catch {
    taken = false;
  }
  if (!taken) return;
  // a folder is no file to refuse to overwrite: say to name a file in it (as user-export --out does)
  if (statSync(dest, { throwIfNoEntry: false })?.isDirectory()) {
    throw new SvcError('backup_refused', {
      message: `The backup destination ${dest} is a folder; name a new file in it, such as ${join(dest, 'svc-backup.db')}.`,
    });
  }
  throw takenError(dest);
}

function takenError(dest: string): SvcError {
  return new SvcError('backup_refused', {
    message: `The backup destination ${dest} already exists; backups never overwrite, so choose a new file name or remove it first.`,
  });
}

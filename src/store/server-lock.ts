/**
 * @module One server of each kind per SQLite trace store. A start takes for its kind of server a lock the
 * operating system drops when the process ends however it ends (kill -9 included): an open connection to
 * a lock file beside the store (`<store>-gateway.lock`, `<store>-serve.lock`, empty SQLite files) that
 * holds `BEGIN EXCLUSIVE`, SQLite's fcntl write lock, until the store closes. A second `svc serve` would
 * cancel the first's running turns as server_restart at its start; a second `svc gateway` would name the
 * first's calls in flight as gaps, and each would hold every key's budget apart from the other. A gateway
 * and an agent server share a store: their start-up scans leave each other's turns alone. Short-lived
 * commands take no lock. PostgreSQL stores have their presence locks instead (postgres-session.ts).
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { errorMessage, SvcError } from '../lib/errors.ts';
import { createPrivateFile } from './private-files.ts';
import { SQLITE, sqliteCode } from './sqlite-errors.ts';

/** The long-running servers; each kind runs once per SQLite store. */
export const SERVER_KINDS = ['gateway', 'serve'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

/**
 * The lock file of `kind` for the existing store at `storePath`, beside the file the path resolves to (a
 * store reached through a symlink, or by another relative path, has one lock, as SQLite puts its -wal there).
 */
export function serverLockPath(storePath: string, kind: ServerKind): string {
  return `${realpathSync(storePath)}-${kind}.lock`;
}

/**
 * Takes the lock of `kind` on the store at `storePath`, or refuses (startup_refused, one sentence naming
 * the store and the running server's pid) when another process holds it. Returns its release.
 */
export function holdServerLock(storePath: string, kind: ServerKind): () => void {
  let path = `${storePath}-${kind}.lock`;
  let db: DatabaseSync | undefined;
  try {
    path = serverLockPath(storePath, kind);
    createPrivateFile(path);
    db = new DatabaseSync(path, { timeout: 0 });
    db.exec('PRAGMA journal_mode = MEMORY'); // no -journal file beside the lock
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    if (db?.isOpen) db.close();
    if (sqliteCode(err) === SQLITE.BUSY) throw refusal(storePath, kind, path);
    throw new SvcError('store_error', {
      message: `Cannot take the lock file ${path} of the trace store (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}); make the store's folder writable by the user svc runs as, or point --db-path at a store in a writable folder.`,
      cause: err,
    });
  }
  const held = db;
  return () => {
    if (held.isOpen) held.close();
  };
}

// --- internal ---

const WHAT_A_SECOND_ONE_DOES: Record<ServerKind, string> = {
  serve: `a second one would cancel that server's running turns as server_restart at its start, so stop it first or give this one its own store (--db-path or SVC_DB_PATH)`,
  gateway: `a second one would take that gateway's calls in flight for gaps at its start and count each key's budget apart from it, so stop it first or give this one its own store (--db-path or SVC_GATEWAY_DB_PATH); for several gateways, use a PostgreSQL store (SVC_DATABASE_URL)`,
};

function refusal(storePath: string, kind: ServerKind, lockPath: string): SvcError {
  const pid = lockHolder(lockPath);
  const who = `Another svc ${kind}${pid === undefined ? '' : ` (pid ${pid})`}`;
  return new SvcError('startup_refused', {
    message: `${who} is running on the trace store ${storePath}; ${WHAT_A_SECOND_ONE_DOES[kind]}.`,
  });
}

/**
 * The pid of the process holding a lock on `path`, as the kernel lists it in /proc/locks (Linux); undefined
 * elsewhere, or when that process is outside this one's pid namespace (listed as 0).
 */
function lockHolder(path: string): number | undefined {
  try {
    const st = statSync(path, { bigint: true });
    const device = `${hex(devMajor(st.dev))}:${hex(devMinor(st.dev))}:${st.ino}`;
    for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
      const fields = line.trim().split(/\s+/);
      // a waiter (`->`) or a shared lock is not the holder's exclusive one
      if (fields[1] === '->' || !fields.includes('WRITE')) continue;
      const at = fields.indexOf(device);
      const pid = at > 0 ? Number(fields[at - 1]) : 0;
      if (pid > 0 && pid !== process.pid) return pid;
    }
  } catch {
    // no /proc/locks (not Linux): the sentence goes without the pid
  }
  return undefined;
}

/** glibc's major() and minor() of a dev_t. */
function devMajor(dev: bigint): bigint {
  return ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
}

function devMinor(dev: bigint): bigint {
  return (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
}

/** /proc/locks prints major and minor as %02x. */
function hex(n: bigint): string {
  return n.toString(16).padStart(2, '0');
}

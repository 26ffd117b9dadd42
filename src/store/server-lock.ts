/**
 * @module One agent server per SQLite trace store, and gateways that know of each other. A start takes for
 * its kind of server a lock the operating system drops when the process ends however it ends (kill -9
 * included): an open connection to a lock file beside the store (`<store>-gateway.lock`, `<store>-serve.lock`,
 * empty SQLite files) holding SQLite's fcntl lock until the store closes.
 * - `serve` holds it exclusively: a second `svc serve` would cancel the first's running turns as
 *   server_restart at its start, so it is refused.
 * - `gateway` holds it shared: a rolling update (spec 1's chart: maxSurge 1, maxUnavailable 0) starts the new
 *   gateway beside the old one on the same store, and a refused start would never let the rollout end. A
 *   start that takes the lock exclusively for a moment is alone and scans for a dead process's gaps; one that
 *   finds another gateway leaves that gateway's calls in flight alone (no gap scan) and warns that each
 *   counts the keys' budgets apart until the other stops.
 * A gateway and an agent server share a store: their start-up scans leave each other's turns alone. Short-lived
 * commands take no lock. On PostgreSQL gateways have their presence locks instead, and `serve` an advisory
 * lock on its session connection (postgres-session.ts).
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { errorMessage, SvcError } from '../lib/errors.ts';
import { createPrivateFile } from './private-files.ts';
import { SQLITE, sqliteCode } from './sqlite-errors.ts';

/** The long-running servers; each holds its kind's lock on a SQLite store while it runs. */
export const SERVER_KINDS = ['gateway', 'serve'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

export interface ServerLock {
  release(): void;
  /**
   * Set when another gateway runs on this store (a rolling update's overlap), with its pid when /proc/locks
   * names it; a `serve` start that finds another agent server is refused instead.
   */
  readonly sharedWith?: { pid?: number };
}

/** How long a gateway start waits for another gateway's moment of exclusive hold to end. */
const SHARED_WAIT_MS = 5_000;

/**
 * The lock file of `kind` for the existing store at `storePath`, beside the file the path resolves to (a
 * store reached through a symlink, or by another relative path, has one lock, as SQLite puts its -wal there).
 */
export function serverLockPath(storePath: string, kind: ServerKind): string {
  return `${realpathSync(storePath)}-${kind}.lock`;
}

/**
 * Takes the lock of `kind` on the store at `storePath`. `serve` refuses (startup_refused, one sentence naming
 * the store and the running server's pid) when another process holds it; `gateway` shares it and says
 * whether another gateway holds it too.
 */
export function holdServerLock(storePath: string, kind: ServerKind): ServerLock {
  let path = `${storePath}-${kind}.lock`;
  let db: DatabaseSync | undefined;
  let sharedWith: { pid?: number } | undefined;
  try {
    path = serverLockPath(storePath, kind);
    createPrivateFile(path);
    db = new DatabaseSync(path, { timeout: 0 });
    const alone = tryExclusive(db);
    if (!alone && kind === 'serve') throw refusal(storePath, path);
    if (kind === 'gateway') {
      if (alone) db.exec('COMMIT');
      else {
        const pid = lockHolder(path, 'any');
        sharedWith = pid === undefined ? {} : { pid };
      }
      // a read transaction holds SQLite's SHARED lock until the store closes: a later gateway start finds it
      db.exec(`PRAGMA busy_timeout = ${SHARED_WAIT_MS}`);
      db.exec('BEGIN');
      db.prepare('SELECT count(*) FROM sqlite_master').get();
    }
  } catch (err) {
    if (db?.isOpen) db.close();
    if (err instanceof SvcError) throw err;
    throw new SvcError('store_error', {
      message: `Cannot take the lock file ${path} of the trace store (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}); make the store's folder writable by the user svc runs as, or point --db-path at a store in a writable folder.`,
      cause: err,
    });
  }
  const held = db;
  return {
    release() {
      if (held.isOpen) held.close();
    },
    ...(sharedWith ? { sharedWith } : {}),
  };
}

// --- internal ---

/** BEGIN EXCLUSIVE without waiting: false when another process holds the lock in any mode. */
function tryExclusive(db: DatabaseSync): boolean {
  try {
    db.exec('PRAGMA journal_mode = MEMORY'); // no -journal file beside the lock (needs the lock itself)
    db.exec('BEGIN EXCLUSIVE');
    return true;
  } catch (err) {
    if (sqliteCode(err) === SQLITE.BUSY) return false;
    throw err;
  }
}

function refusal(storePath: string, lockPath: string): SvcError {
  return secondServeRefusal(storePath, lockHolder(lockPath), '--db-path or SVC_DB_PATH');
}

/**
 * The refusal of a second `svc serve` on a store (SQLite here, PostgreSQL in postgres-session.ts): one
 * sentence naming the store (a PostgreSQL URL without its password), and the first's pid when known.
 */
export function secondServeRefusal(store: string, pid: number | undefined, ownStore: string): SvcError {
  const who = `Another svc serve${pid === undefined ? '' : ` (pid ${pid})`}`;
  return new SvcError('startup_refused', {
    message: `${who} is running on the trace store ${store}; a second one would cancel that server's running turns as server_restart at its start, so stop it first or give this one its own store (${ownStore}).`,
  });
}

/**
 * The pid of the process holding a lock on `path`, as the kernel lists it in /proc/locks (Linux); undefined
 * elsewhere, or when that process is outside this one's pid namespace (listed as 0).
 */
function lockHolder(path: string, mode: 'WRITE' | 'any' = 'WRITE'): number | undefined {
  try {
    const st = statSync(path, { bigint: true });
    const device = `${hex(devMajor(st.dev))}:${hex(devMinor(st.dev))}:${st.ino}`;
    for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
      const fields = line.trim().split(/\s+/);
      // a waiter (`->`) is no holder; nor, when an exclusive holder is looked for, a shared lock
      if (fields[1] === '->' || (mode === 'WRITE' && !fields.includes('WRITE'))) continue;
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

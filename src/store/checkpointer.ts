/**
 * @module WAL checkpoints off the event loop for long-running servers. SQLite's automatic checkpoint runs
 * inside the COMMIT that crosses `wal_autocheckpoint` pages, on the committing thread: copying the WAL
 * into the database and fsyncing it stalled one request in ~40 by 10–20 ms. A worker thread with its
 * own connection runs `PRAGMA wal_checkpoint(PASSIVE)` on an interval instead (PASSIVE never blocks
 * writers or readers), and the server's connection keeps an automatic checkpoint only as a far-away
 * safety net (SAFETY_NET_PAGES) should the worker stop.
 * Under sustained writes a PASSIVE checkpoint never finds the WAL wholly copied when a write begins, so
 * SQLite never rewinds it and the file only grows: past WAL_TRUNCATE_BYTES the worker runs one
 * TRUNCATE checkpoint (writers wait for it; PASSIVE already copied most frames), and the server's
 * `journal_size_limit` trims the file whenever SQLite rewinds it, so the WAL stays under 64 MiB.
 * At each checkpoint the worker also checks that the store's path still names the file opened: one removed
 * or replaced under a running server takes its events with it, which is logged once as an error.
 */
import { Worker } from 'node:worker_threads';
import { errorMessage } from '../lib/errors.ts';
import { createRepeatFilter, type Logger } from '../lib/log.ts';
import type { SqliteStore } from './open.ts';
import { busyTimeoutOf } from './sqlite.ts';

/** SQLite's default automatic checkpoint threshold, restored when the worker is gone. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/** Automatic checkpoint threshold while the worker runs (~47 MiB of WAL at 4 KiB pages). */
const SAFETY_NET_PAGES = 12_000;
/** A WAL file larger than this is checkpointed with TRUNCATE (back to 0 bytes). */
export const WAL_TRUNCATE_BYTES = 32 * 1024 * 1024;
/** The size the server connection trims the WAL file to when SQLite rewinds it. */
const JOURNAL_SIZE_LIMIT_BYTES = WAL_TRUNCATE_BYTES;
/** How long a TRUNCATE checkpoint waits for readers (writers wait meanwhile) before it tries again later. */
const TRUNCATE_WAIT_MS = 200;
/** How often the worker looks at the WAL file's size (a stat), between checkpoints. */
const SIZE_CHECK_MS = 100;
/** A checkpoint that keeps failing the same way is logged at most once per this interval. */
const WARNING_INTERVAL_MS = 30_000;

export interface Checkpointer {
  /** A last checkpoint, then the worker exits; the store's own threshold is restored. */
  stop(): Promise<void>;
}

// CommonJS, evaluated in the worker: one connection, a PASSIVE checkpoint per tick, a TRUNCATE one when the
// WAL file passes its bound, a final one on 'stop'.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path, { timeout: workerData.busyTimeoutMs });
const walPath = workerData.path + '-wal';
const run = (mode) => {
  try { return db.prepare('PRAGMA wal_checkpoint(' + mode + ')').get(); }
  catch (err) { parentPort.postMessage({ warning: String(err && err.message || err) }); }
};
const walBytes = () => { try { return statSync(walPath).size; } catch { return 0; } };
let held = false;
const bound = () => {
  if (walBytes() <= workerData.truncateBytes) return;
  // TRUNCATE holds new writers back while it waits for readers: wait briefly, retry on the next check
  db.exec('PRAGMA busy_timeout = ' + workerData.truncateWaitMs);
  const r = run('TRUNCATE');
  db.exec('PRAGMA busy_timeout = ' + workerData.busyTimeoutMs);
  const busy = Boolean(r && r.busy);
  if (busy && !held) parentPort.postMessage({ busy: walBytes() });
  held = busy;
};
// the file the path names now, to tell when it is no longer the one opened (removed, or replaced by another)
const fileAt = () => { try { const st = statSync(workerData.path); return st.dev + ':' + st.ino; } catch { return null; } };
const opened = fileAt();
let gone = false;
const watch = () => {
  if (gone || opened === null) return;
  const now = fileAt();
  if (now === opened) return;
  gone = true;
  parentPort.postMessage({ gone: now === null ? 'removed' : 'replaced' });
};
const checkpoint = () => { watch(); run('PASSIVE'); bound(); };
const timer = setInterval(checkpoint, workerData.intervalMs);
const sizer = setInterval(bound, workerData.sizeCheckMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  clearInterval(sizer);
  checkpoint();
  db.close();
  parentPort.postMessage({ stopped: true });
  parentPort.close();
});
`;

export function startCheckpointer(
  store: SqliteStore,
  options: { log: Logger; intervalMs?: number },
): Checkpointer {
  const { log } = options;
  store.db.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
  store.db.exec(`PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      path: store.path,
      intervalMs: options.intervalMs ?? 500,
      sizeCheckMs: Math.min(SIZE_CHECK_MS, options.intervalMs ?? SIZE_CHECK_MS),
      truncateBytes: WAL_TRUNCATE_BYTES,
      truncateWaitMs: TRUNCATE_WAIT_MS,
      // the store connection's own (SVC_SQLITE_BUSY_TIMEOUT_MS, default BUSY_TIMEOUT_MS)
      busyTimeoutMs: busyTimeoutOf(store),
    },
  });
  let alive = true;
  const restore = () => {
    if (!alive) return;
    alive = false;
    try {
      store.db.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
    } catch {
      // the store is already closed: nothing left to checkpoint from this connection
    }
  };
  // a checkpoint runs every 500 ms: on a full disk each one fails the same way
  const failures = createRepeatFilter(WARNING_INTERVAL_MS);
  worker.on('message', (m: { warning?: string; busy?: number; gone?: 'removed' | 'replaced' }) => {
    if (m.gone)
      log.error(
        `trace store ${m.gone} while the server runs: new events go to a file no path leads to and are lost at stop; stop the server, then restore the store from a backup (svc restore) or start it on a new one`,
        { path: store.path, found: m.gone },
      );
    const repeat = m.warning ? failures(m.warning) : undefined;
    if (repeat?.emit)
      log.warn('background WAL checkpoint failed; will try again', {
        message: m.warning,
        ...(repeat.held > 0 ? { failed_since_last_line: repeat.held } : {}),
      });
    if (m.busy !== undefined)
      log.warn('the WAL could not be truncated: a long read transaction holds it; will try again', {
        wal_bytes: m.busy,
      });
  });
  worker.on('error', (err) => {
    log.warn('background WAL checkpointer stopped; SQLite checkpoints automatically again', {
      message: errorMessage(err),
    });
    restore();
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      if (alive) worker.postMessage('stop');
      await exited;
      restore();
    },
  };
}

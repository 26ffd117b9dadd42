/**
 * @module WAL checkpoints off the event loop for long-running servers. SQLite's automatic checkpoint runs
 * inside the COMMIT that crosses `wal_autocheckpoint` pages, on the committing thread: copying the WAL
 * into the database and fsyncing it stalled one request in ~40 by 10–20 ms. A worker thread with its
 * own connection runs `PRAGMA wal_checkpoint(PASSIVE)` on an interval instead (PASSIVE never blocks
 * writers or readers), and the server's connection keeps an automatic checkpoint only as a far-away
 * safety net (SAFETY_NET_PAGES) should the worker stop.
 */
import { Worker } from 'node:worker_threads';
import { errorMessage } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { BUSY_TIMEOUT_MS, type Store } from './open.ts';

/** SQLite's default automatic checkpoint threshold, restored when the worker is gone. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/** Automatic checkpoint threshold while the worker runs (~80 MB of WAL at 4 KiB pages). */
const SAFETY_NET_PAGES = 20_000;

export interface Checkpointer {
  /** A last checkpoint, then the worker exits; the store's own threshold is restored. */
  stop(): Promise<void>;
}

// CommonJS, evaluated in the worker: one connection, a checkpoint per tick, a final one on 'stop'.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path, { timeout: workerData.busyTimeoutMs });
const checkpoint = () => {
  try { db.exec('PRAGMA wal_checkpoint(PASSIVE)'); }
  catch (err) { parentPort.postMessage({ warning: String(err && err.message || err) }); }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.postMessage({ stopped: true });
  parentPort.close();
});
`;

export function startCheckpointer(store: Store, options: { log: Logger; intervalMs?: number }): Checkpointer {
  const { log } = options;
  store.db.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { path: store.path, intervalMs: options.intervalMs ?? 500, busyTimeoutMs: BUSY_TIMEOUT_MS },
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
  worker.on('message', (m: { warning?: string }) => {
    if (m.warning) log.warn('background WAL checkpoint failed; will try again', { message: m.warning });
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

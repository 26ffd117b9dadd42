/**
 * @module Runs the pattern statistics query in a worker thread with its own connection: node:sqlite is
 * synchronous, and a lookback of many days would otherwise hold a server's event loop (and its requests)
 * for the whole read. One short-lived worker per rebuild; `query_only` keeps it from ever writing.
 */
import { Worker } from 'node:worker_threads';
import { errorMessage, SvcError } from '../../lib/errors.ts';
import { PATTERN_STATS_SQL, type PatternStatsParams, statsBindings } from './stats-query.ts';
import type { PatternStatRow } from './table.ts';

/** Reads the aggregates a table is built from; the server's reader runs off the event loop. */
export type StatsReader = (params: PatternStatsParams, signal: AbortSignal) => Promise<PatternStatRow[]>;

// CommonJS, evaluated in the worker: one connection, one statement, one answer, then exit.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path, { timeout: workerData.busyTimeoutMs });
try {
  db.exec('PRAGMA query_only = ON');
  parentPort.postMessage({ rows: db.prepare(workerData.sql).all(workerData.bindings) });
} catch (err) {
  parentPort.postMessage({ error: String((err && err.message) || err) });
} finally {
  db.close();
}
`;

/**
 * A reader that opens `storePath` in a fresh worker for each rebuild, waiting `busyTimeoutMs` for a lock as
 * the store's own connection does (SVC_SQLITE_BUSY_TIMEOUT_MS); an abort terminates the worker.
 */
export function createWorkerStatsReader(storePath: string, busyTimeoutMs: number): StatsReader {
  return (params, signal) =>
    new Promise<PatternStatRow[]>((resolve, reject) => {
      if (signal.aborted) return reject(aborted());
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          path: storePath,
          sql: PATTERN_STATS_SQL,
          bindings: statsBindings(params),
          busyTimeoutMs,
        },
      });
      let answered = false;
      const onAbort = () => void worker.terminate();
      signal.addEventListener('abort', onAbort, { once: true });
      worker.once('message', (m: { rows?: PatternStatRow[]; error?: string }) => {
        answered = true;
        if (m.rows) resolve(m.rows);
        else reject(new SvcError('store_error', { message: `pattern statistics query failed: ${m.error}` }));
      });
      worker.once('error', (err) => {
        answered = true;
        reject(
          new SvcError('store_error', { message: `pattern statistics worker failed: ${errorMessage(err)}` }),
        );
      });
      worker.once('exit', () => {
        signal.removeEventListener('abort', onAbort);
        if (!answered)
          reject(
            signal.aborted
              ? aborted()
              : new SvcError('store_error', {
                  message: 'pattern statistics worker exited without an answer',
                }),
          );
      });
    });
}

// --- internal ---

function aborted(): SvcError {
  return new SvcError('cancelled', { message: 'the pattern table rebuild was stopped' });
}

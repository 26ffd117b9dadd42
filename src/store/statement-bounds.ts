/**
 * @module How long svc waits for PostgreSQL to answer. A paused server or a black-holed network errs
 * nothing: without a bound a statement waits forever, and the request behind it with it. Each pooled
 * statement gets a client-side bound (node-postgres' query_timeout); one not answered in time fails as an
 * unreachable store (dialect.ts), and its connection is dropped instead of being handed out again.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';

/** The default bound on a connection attempt and on a statement of the request path (SVC_DATABASE_TIMEOUT_MS). */
export const DATABASE_TIMEOUT_MS = 10_000;

/**
 * The bound on a statement of a report, an export or a forget (analytics endpoints and commands): a
 * report over a long window of a large store may take minutes, and cutting it off would say "unreachable"
 * of a store that is only busy. Never below the request-path bound.
 */
export const LONG_STATEMENT_MS = 300_000;

/** The message of node-postgres' own error for a statement not answered within its query_timeout. */
export const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** Statements run inside `fn` wait up to LONG_STATEMENT_MS (reports, exports, forget). */
export function runLongStatements<T>(fn: () => Promise<T>): Promise<T> {
  return bounds.run('long', fn);
}

/** Statements run inside `fn` wait as long as they take (migrations: an index build on a large table). */
export function runUnboundedStatements<T>(fn: () => Promise<T>): Promise<T> {
  return bounds.run('none', fn);
}

/** The query_timeout of a statement issued now, given the request-path bound; undefined: none. */
export function statementBoundMs(timeoutMs: number): number | undefined {
  const kind = bounds.getStore();
  if (kind === 'none') return undefined;
  return kind === 'long' ? Math.max(LONG_STATEMENT_MS, timeoutMs) : timeoutMs;
}

/**
 * Makes every text statement of `client` (Kysely's, set_config's) carry the bound of its caller, and
 * records a statement that timed out: its connection still waits for that answer, so it must not be
 * reused (see releaseHung).
 */
export function boundStatements(client: pg.PoolClient, timeoutMs: number): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    if (typeof config !== 'string') return query(config, values, callback);
    const promise = query({ text: config, query_timeout: statementBoundMs(timeoutMs) }, values, callback);
    if (promise instanceof Promise) promise.catch((err: unknown) => markIfHung(client, err));
    return promise;
  };
}

/**
 * Records that `err` (from a statement of `client`) is its timeout, or a read-only server's refusal (25006:
 * a demoted primary, which stays read-only for as long as the connection lasts): the connection is then
 * dropped. A read-only refusal also condemns every other connection opened before it (see
 * predatesReadOnlyRefusal): those reached the same server, and the idle ones a failover's reads left in
 * the pool would otherwise refuse the next writes one by one after the primary is back.
 */
export function markIfHung(client: pg.PoolClient, err: unknown): void {
  if (err instanceof Error && err.message === QUERY_TIMEOUT_MESSAGE) hung.add(client);
  else if ((err as { code?: unknown } | null)?.code === '25006') {
    hung.add(client);
    readOnlyRefusals++;
  }
}

/** Notes that `client` has just connected (and been set up): what predatesReadOnlyRefusal compares with. */
export function noteConnected(client: pg.PoolClient): void {
  connectedAfter.set(client, readOnlyRefusals);
}

/** Whether a read-only refusal came on some connection since `client` connected: drop it rather than use it. */
export function predatesReadOnlyRefusal(client: pg.PoolClient): boolean {
  const seen = connectedAfter.get(client);
  return seen !== undefined && seen < readOnlyRefusals;
}

/** Makes the release of this checkout drop the connection when markIfHung marked it. */
export function releaseHung(client: pg.PoolClient): void {
  const release = client.release;
  client.release = (err?: Error | boolean) =>
    release(
      err ??
        (hung.has(client)
          ? new Error('a statement timed out on this connection, or it reached a read-only server')
          : undefined),
    );
}

// --- internal ---

const bounds = new AsyncLocalStorage<'long' | 'none'>();
const hung = new WeakSet<pg.PoolClient>();
/** Read-only refusals (25006) seen by this process, and how many each connection had seen when it connected. */
let readOnlyRefusals = 0;
const connectedAfter = new WeakMap<pg.PoolClient, number>();

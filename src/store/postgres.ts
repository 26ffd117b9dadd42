/**
 * @module The PostgreSQL store (SVC_DATABASE_URL): a node-postgres pool behind Kysely's PostgresDialect,
 * migrated under an advisory lock so N replicas starting together migrate once, events appended one
 * batch per statement through a named (server-side prepared) INSERT. Every pooled connection stamps the
 * rows it inserts with this process's origin (events.origin), and the session connection
 * (postgres-session.ts) LISTENs and holds the presence lock that says the origin is alive.
 */
import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { errorMessage, SvcError } from '../lib/errors.ts';
import { EVENT_COLUMNS, eventValues, postgresDialect } from './dialect.ts';
import { migratePostgres, readPostgresSchemaVersion } from './migrate.ts';
import type { OpenStoreOptions, PostgresStore } from './open.ts';
import { postgresRefusalAdvice } from './postgres-refusals.ts';
import { createSessionConnection, presenceLockArgs, type SessionConnection } from './postgres-session.ts';
import { redactDatabaseUrl } from './redact-url.ts';
import type { Database, NewEventRow } from './schema.ts';
import { secondServeRefusal } from './server-lock.ts';
import {
  boundStatements,
  DATABASE_TIMEOUT_MS,
  markIfHung,
  noteConnected,
  predatesReadOnlyRefusal,
  releaseHung,
  runUnboundedStatements,
  statementBoundMs,
} from './statement-bounds.ts';

/** Connections per process: the trace writer, request-path budget updates and reads share them. */
export const POOL_SIZE = 10;

/**
 * What to do about a store that cannot be opened. The server answered with an SQL error (a table of
 * that name that is not svc's, a role that may not create tables): the URL names the wrong database or
 * the role lacks rights. An empty password refused ('empty password returned by client') when the URL
 * has none and PGPASSWORD is unset says where the password goes. Anything else
 * (refused, unknown host, a wrong password, TLS, the server going away) is about reaching it.
 */
function storeAdvice(err: unknown, url: string): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (
    code === '28P01' &&
    /empty password/.test(errorMessage(err)) &&
    !process.env.PGPASSWORD &&
    !hasPassword(url)
  )
    return 'no password was given (none in the URL, PGPASSWORD unset): set PGPASSWORD, or put it in the URL percent-encoded';
  const refusal = postgresRefusalAdvice(err);
  if (refusal !== undefined) return refusal;
  const sqlError = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|28|3D|53|57)/.test(code);
  return sqlError
    ? 'check that SVC_DATABASE_URL (or --database-url) names a database of svc (an empty one before the first start) and that its role may create tables in it'
    : 'check SVC_DATABASE_URL (or --database-url) and that the server accepts connections';
}

function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return false;
  }
}

/** The sslmode values whose meaning node-postgres takes from libpq only when asked (uselibpqcompat). */
const LIBPQ_SSL_MODES = new Set(['prefer', 'require', 'verify-ca']);

/**
 * The URL with `sslmode` meaning what it means to libpq (psql and every other client): `require`
 * encrypts without checking the certificate, `verify-ca` checks the chain, `verify-full` the host too.
 * node-postgres 8 otherwise reads prefer/require/verify-ca as verify-full, refusing a managed database's
 * private CA that psql accepts, and prints a multi-line deprecation warning on every start.
 */
export function withLibpqSslModes(url: string): string {
  const u = new URL(url);
  const mode = u.searchParams.get('sslmode');
  if (mode === null || !LIBPQ_SSL_MODES.has(mode) || u.searchParams.has('uselibpqcompat')) return url;
  u.searchParams.set('uselibpqcompat', 'true');
  return u.toString();
}

export async function openPostgresStore(
  url: string,
  options: OpenStoreOptions & { timeoutMs?: number },
): Promise<PostgresStore> {
  const label = redactDatabaseUrl(url);
  // a connection attempt, a wait for a pooled connection and a statement: each bounded (statement-bounds.ts)
  const timeoutMs = options.timeoutMs ?? DATABASE_TIMEOUT_MS;
  const config: pg.PoolConfig = {
    connectionString: withLibpqSslModes(url),
    max: POOL_SIZE,
    connectionTimeoutMillis: timeoutMs,
    // a network that dies under an idle or a long-running connection is noticed (the server itself
    // answers no probe: that is the statement bound's job)
    keepAlive: true,
    keepAliveInitialDelayMillis: timeoutMs,
    types: { getTypeParser },
    application_name: 'svc',
  };
  const origin = randomUUID();
  // A stop during the start (options.signal) closes every connection of the store, the pool's and the
  // session's, instead of waiting out a connection attempt, a migration or a start step (the presence
  // lock, the start's scans under their long bound) that the server leaves unanswered; connections
  // asked for afterwards fail at once. After the start the signal is no longer aborted (lib/stop-signal.ts).
  const sockets = new Set<Socket>();
  let session: SessionConnection | undefined;
  const stopStart = () => {
    void session?.close(); // no reconnect, nor its warning
    for (const socket of sockets) socket.destroy();
  };
  options.signal?.throwIfAborted();
  options.signal?.addEventListener('abort', stopStart, { once: true });
  const openSocket = (): Socket => {
    const socket = new Socket();
    if (options.signal?.aborted) {
      const reason = options.signal.reason;
      socket.connect = (() => {
        process.nextTick(() => socket.destroy(reason instanceof Error ? reason : new Error(String(reason))));
        return socket;
      }) as Socket['connect'];
      return socket;
    }
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    return socket;
  };
  const pool = new pg.Pool({ ...config, stream: openSocket });
  // an idle client that loses its server must not crash the process; the next query reconnects
  pool.on('error', (err) =>
    options.log?.warn('a PostgreSQL connection failed', { message: errorMessage(err) }),
  );
  // A checked-out client loses the pool's listener: a server ending it between two statements (a
  // restart's FATAL 57P01, a reset) would be an unhandled 'error' that kills the process. The client
  // is left unqueryable instead, its next statement fails and the pool drops it on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const connections = stampedConnections(pool, origin, timeoutMs);
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: connections }) });
  const fail = async (verb: string, err: unknown): Promise<never> => {
    options.signal?.removeEventListener('abort', stopStart);
    await kysely.destroy().catch(() => undefined);
    if (options.signal?.aborted) throw options.signal.reason;
    if (err instanceof SvcError) throw err;
    throw new SvcError('store_error', {
      message: `Cannot ${verb} the PostgreSQL store ${label}: ${errorMessage(err)}; ${storeAdvice(err, url)}.`,
      cause: err,
    });
  };
  try {
    (await connections.connect()).release();
  } catch (err) {
    return fail('reach', err);
  }
  // a server on a standby, a read replica or a read-only role would run and write nothing (svc serve
  // started, its every write refused): refused at the start, as the sentence of postgres-refusals.ts
  if (options.serverLock && !options.readOnly) {
    const r = await sql<{ ro: string }>`SELECT current_setting('transaction_read_only') AS ro`
      .execute(kysely)
      .catch((err: unknown) => fail('reach', err));
    if (r.rows[0]?.ro === 'on')
      return fail('write to', Object.assign(new Error('transaction_read_only is on'), { code: '25006' }));
  }
  let schemaVersion: number;
  try {
    // a database without svc's tables is no store for a command that needs one: nothing is created in it
    if ((options.readOnly || options.mustExist) && (await readPostgresSchemaVersion(kysely)) === 0)
      throw new SvcError('store_error', {
        message: `No svc trace store in the PostgreSQL database ${label}; check that SVC_DATABASE_URL (or --database-url) names the database the gateway uses.`,
      });
    // a migration may build an index over a large table: it is not cut off
    schemaVersion = options.readOnly
      ? await readPostgresSchemaVersion(kysely)
      : await runUnboundedStatements(() => migratePostgres(kysely, label));
  } catch (err) {
    return fail('migrate', err);
  }
  session = createSessionConnection(config, origin, options.log, { timeoutMs, socket: openSocket });
  // one svc serve per database, before its start-up recovery (postgres-session.ts): a second is refused
  if (options.serverLock === 'serve' && !options.readOnly) {
    const s = session;
    const held = await s.holdServeLock().catch(async (err) => {
      await s.close();
      return fail('lock', err);
    });
    if (!held) {
      await s.close();
      return fail(
        'lock',
        secondServeRefusal(label, undefined, 'another database in SVC_DATABASE_URL or --database-url'),
      );
    }
  }
  let closed = false;
  return {
    engine: 'postgres',
    dialect: postgresDialect,
    path: label,
    kysely,
    schemaVersion,
    origin,
    appendEvents: (rows, options) =>
      appendEvents(connections, rows, options?.ifAbsent === true, statementBoundMs(timeoutMs)),
    listen: (channel, handlers) => session.listen(channel, handlers),
    announcePresence: () => session.announce(),
    async liveOrigins(origins) {
      const live = new Set<string>();
      // one connection: a session lock taken to test a dead origin must be released by the same session
      await kysely.connection().execute(async (conn) => {
        for (const o of new Set(origins)) {
          const [cls, key] = presenceLockArgs(o);
          const r = await sql<{
            got: boolean;
          }>`SELECT pg_try_advisory_lock(${cls}::int4, hashtext(${key})) AS got`.execute(conn);
          if (r.rows[0]?.got)
            await sql`SELECT pg_advisory_unlock(${cls}::int4, hashtext(${key}))`.execute(conn);
          else live.add(o);
        }
      });
      return live;
    },
    async close() {
      if (closed) return;
      closed = true;
      options.signal?.removeEventListener('abort', stopStart);
      await session.close();
      await kysely.destroy(); // ends the pool
    },
  };
}

// --- internal ---

const INT8_OID = 20;
const JSON_OIDS = new Set([114, 3802]);

/**
 * Rows read the same on both engines: int8 (counts, timestamp_us) as numbers (they stay below 2^53),
 * json as its text, numeric as its exact text (the default).
 */
function getTypeParser(oid: number, format?: string): (value: string) => unknown {
  if (oid === INT8_OID) return Number;
  if (JSON_OIDS.has(oid)) return (v: string) => v;
  return pg.types.getTypeParser(oid, format as 'text');
}

/**
 * The pool as Kysely and appendEvents use it: a connection is handed out only once it has run
 * set_config('svc.origin', …), which events.origin and budget_holds.origin default to. Its statements
 * are bounded, and a connection whose statement timed out is dropped at its release.
 */
function stampedConnections(
  pool: pg.Pool,
  origin: string,
  timeoutMs: number,
): { connect(): Promise<pg.PoolClient>; end(): Promise<void> } {
  const stamped = new WeakSet<pg.PoolClient>();
  return {
    async connect() {
      for (;;) {
        const client = await pool.connect();
        // an idle connection from before a read-only refusal reached that server too: dropped, not used
        if (predatesReadOnlyRefusal(client)) {
          client.release(new Error('opened before a read-only refusal: it may reach a read-only server'));
          continue;
        }
        releaseHung(client);
        if (stamped.has(client)) return client;
        boundStatements(client, timeoutMs);
        try {
          await client.query("SELECT set_config('svc.origin', $1, false)", [origin]);
        } catch (err) {
          client.release(err as Error);
          throw err;
        }
        stamped.add(client);
        noteConnected(client);
        return client;
      }
    },
    end: () => pool.end(),
  };
}

async function appendEvents(
  connections: { connect(): Promise<pg.PoolClient> },
  rows: readonly NewEventRow[],
  ifAbsent: boolean,
  boundMs: number | undefined,
): Promise<void> {
  const columns: unknown[][] = EVENT_COLUMNS.map(() => new Array(rows.length));
  rows.forEach((r, i) => {
    const values = eventValues(r);
    for (let c = 0; c < values.length; c++) columns[c][i] = values[c];
  });
  // node-postgres reads query_timeout from a query's config, which its types leave out
  const query: pg.QueryConfig & { query_timeout?: number } = {
    ...(ifAbsent
      ? { name: 'svc_append_events_if_absent', text: postgresDialect.insertEventIfAbsent }
      : { name: 'svc_append_events', text: postgresDialect.insertEvent }),
    values: columns,
    query_timeout: boundMs,
  };
  const client = await connections.connect();
  try {
    await client.query(query);
  } catch (err) {
    markIfHung(client, err);
    client.release(isConnectionError(err) ? (err as Error) : undefined);
    throw err;
  }
  client.release();
}

/** A failure that leaves the connection unusable: the pool should drop it rather than reuse it. */
function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  // anything but a SQLSTATE (a socket's ECONNRESET, a thrown Error) is the connection's failure
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return code.startsWith('08') || code.startsWith('57P');
}

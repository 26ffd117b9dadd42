/**
 * @module The one dedicated PostgreSQL connection of a process (a pooled one would be handed to other
 * work): it LISTENs for the channels asked for, and holds the process's presence lock, a session-level
 * advisory lock on its origin that tells other replicas it is alive (it ends with the connection, so a
 * killed process releases it). An agent server's holds the serve lock too, the one `svc serve` of the
 * database (a second one would cancel the first's running turns at its start). It reconnects by itself,
 * re-taking the locks, and reports the reconnect so that listeners can catch up on what they missed.
 *
 * A LISTEN connection only receives, so a dead network or a server gone silent would never be noticed:
 * its statements are bounded (SVC_DATABASE_TIMEOUT_MS), and an idle connection runs a cheap statement
 * under that bound as often; one not answered (or failing) drops the connection, which reconnects.
 */
import type { Socket } from 'node:net';
import pg from 'pg';
import { errorMessage } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { ADVISORY_LOCKS } from './dialect.ts';

export interface ChannelHandlers {
  onNotify: () => void;
  /** Called after the connection came back: notifications may have been missed meanwhile. */
  onReconnect?: () => void;
}

export interface SessionConnection {
  listen(channel: string, handlers: ChannelHandlers): Promise<() => Promise<void>>;
  /** Takes the presence lock of `origin` (kept until close, re-taken after a reconnect). */
  announce(): Promise<void>;
  /**
   * Takes the serve lock without waiting: false when another session holds it (another `svc serve`).
   * Kept until close, re-taken after a reconnect; one it cannot re-take is logged.
   */
  holdServeLock(): Promise<boolean>;
  close(): Promise<void>;
}

const RECONNECT_DELAY_MS = 500;
/** The longest wait between reconnection attempts during an outage. */
const RECONNECT_MAX_MS = 15_000;

/** The SQL arguments of the presence lock of `origin` (also tried by liveOrigins). */
export function presenceLockArgs(origin: string): [number, string] {
  return [ADVISORY_LOCKS.presence, origin];
}

export interface SessionOptions {
  /**
   * The bound on a connection attempt and on each statement (SVC_DATABASE_TIMEOUT_MS), and how often the
   * connection is checked with a statement of its own.
   */
  timeoutMs: number;
  /** Opens the socket of a connection (the store's: a stop during the start closes it). */
  socket: () => Socket;
}

export function createSessionConnection(
  config: pg.ClientConfig,
  origin: string,
  log: Logger | undefined,
  options: SessionOptions,
): SessionConnection {
  const { timeoutMs } = options;
  const channels = new Map<string, Set<ChannelHandlers>>();
  let announced = false;
  let serving = false;
  /** The backend pid of the last connection that held the serve lock: one PostgreSQL has not seen end. */
  let servedBy: number | undefined;
  let client: Session | undefined;
  let connecting: Promise<Session> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  /**
   * LISTEN first, then the presence lock, tried rather than waited for: after a network that died silently
   * the server may still hold the old session, and its lock, until it notices (its TCP keepalive: hours by
   * default). Waiting for it would time out, drop the connection and reconnect, over and over: no LISTEN
   * meanwhile, and each abandoned attempt a server process left queued on the lock. The check takes it
   * once that session is gone.
   */
  const setUp = async (session: Session) => {
    for (const channel of channels.keys())
      await session.client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    await retake(session);
  };

  /** Whether this connection lacks a lock the process holds (after a reconnect). */
  const missing = (session: Session) => (announced && !session.present) || (serving && !session.serving);

  const retake = async (session: Session): Promise<void> => {
    if (announced && !session.present) await tryPresence(session);
    if (serving && !session.serving) await tryServeLock(session);
  };

  /**
   * Re-taking the serve lock after a reconnect. Still held by this process's previous connection: taken
   * once PostgreSQL sees that one end. Held by another session: a `svc serve` started while this one had
   * lost the lock, whose start cancelled this server's running turns; said at error level, and tried again.
   */
  const tryServeLock = async (session: Session): Promise<void> => {
    const r = await run(session, TRY_SERVE, [...ADVISORY_LOCKS.serve]);
    const row = r.rows[0] as { got?: unknown; pid?: unknown; holder?: unknown } | undefined;
    session.serving = row?.got === true;
    if (session.serving) {
      servedBy = Number(row?.pid);
      return;
    }
    if (session.warnedServe) return;
    session.warnedServe = true;
    const holder = row?.holder === null || row?.holder === undefined ? undefined : Number(row.holder);
    if (holder !== undefined && holder === servedBy)
      log?.warn(
        "the serve lock is still held by this process's previous session connection, which PostgreSQL has not seen end; taking it once it does",
        {},
      );
    else
      log?.error(
        "another svc serve started on this database while this server's session connection was down and holds the serve lock: its start cancelled this server's running turns as server_restart; stop one of the two",
        { ...(holder === undefined ? {} : { holder_backend_pid: holder }) },
      );
  };

  const tryPresence = async (session: Session): Promise<void> => {
    const r = await run(session, TRY_PRESENCE, presenceLockArgs(origin));
    session.present = (r.rows[0] as { got?: unknown } | undefined)?.got === true;
    if (!session.present && !session.waitedForPresence) {
      session.waitedForPresence = true;
      log?.warn(
        "the presence lock is still held by this process's previous session connection, which PostgreSQL has not seen end; taking it once it does",
        {},
      );
    }
  };

  const connect = (): Promise<Session> => {
    if (client) return Promise.resolve(client);
    connecting ??= (async () => {
      let socket: Socket | undefined;
      // every statement bounded: a statement not answered in time drops the connection (run)
      const c = new pg.Client({
        ...config,
        query_timeout: timeoutMs,
        stream: () => {
          socket = options.socket();
          return socket;
        },
      });
      const session: Session = {
        client: c,
        drop: () => socket?.destroy(),
        lost: undefined,
        present: false,
        waitedForPresence: false,
        serving: false,
        warnedServe: false,
      };
      c.on('notification', (n) => {
        for (const h of channels.get(n.channel) ?? []) h.onNotify();
      });
      c.on('error', () => undefined); // 'end' follows and schedules the reconnect
      c.on('end', () => {
        if (client !== session || closed) return;
        client = undefined;
        log?.warn('lost the PostgreSQL session connection (LISTEN, presence); reconnecting', {
          ...(session.lost === undefined ? {} : { message: session.lost }),
        });
        schedule();
      });
      try {
        await c.connect();
        await setUp(session);
      } catch (err) {
        // a statement left unanswered still waits on this connection: end it without a goodbye
        session.drop();
        throw err;
      }
      client = session;
      return session;
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

  /** Runs a statement on the session; one that fails or goes unanswered drops the connection. */
  const run = async (session: Session, text: string, values?: unknown[]): Promise<pg.QueryResult> => {
    try {
      return await session.client.query(text, values);
    } catch (err) {
      session.lost ??= errorMessage(err);
      session.drop();
      throw err;
    }
  };

  // the check of a connection that only listens: without it a dead one would never be noticed
  let checking = false;
  const check = setInterval(() => {
    const session = client;
    if (!session || checking) return;
    checking = true;
    // a lock not yet taken again (see setUp): trying it is the check
    (missing(session) ? retake(session) : run(session, 'SELECT 1'))
      .catch(() => undefined) // dropped: 'end' reconnects
      .finally(() => {
        checking = false;
      });
  }, timeoutMs);
  check.unref();

  // failed attempts in a row: the wait doubles up to RECONNECT_MAX_MS, and an outage logs once a doubling
  let failures = 0;
  const schedule = () => {
    if (closed || timer) return;
    const wait = Math.min(RECONNECT_MAX_MS, RECONNECT_DELAY_MS * 2 ** failures);
    timer = setTimeout(() => {
      timer = undefined;
      connect().then(
        () => {
          failures = 0;
          for (const set of channels.values()) for (const h of set) h.onReconnect?.();
        },
        (err) => {
          failures++;
          if (wait < RECONNECT_MAX_MS || failures % 10 === 0)
            log?.warn('cannot reconnect the PostgreSQL session connection; retrying', {
              message: errorMessage(err),
              attempts: failures,
              next_attempt_ms: Math.min(RECONNECT_MAX_MS, RECONNECT_DELAY_MS * 2 ** failures),
            });
          schedule();
        },
      );
    }, wait);
    timer.unref();
  };

  return {
    async listen(channel, handlers) {
      const set = channels.get(channel) ?? new Set();
      const first = set.size === 0;
      set.add(handlers);
      channels.set(channel, set);
      // LISTEN is idempotent: a connection being set up meanwhile may or may not have seen this channel
      const session = await connect();
      if (first) await run(session, `LISTEN ${pg.escapeIdentifier(channel)}`);
      return async () => {
        set.delete(handlers);
      };
    },
    async announce() {
      if (announced) return;
      announced = true;
      // a session lock taken twice is simply held twice, until the connection ends
      const session = await connect();
      await run(session, 'SELECT pg_advisory_lock($1, hashtext($2))', presenceLockArgs(origin));
      session.present = true;
    },
    async holdServeLock() {
      if (serving) return true;
      const session = await connect();
      const r = await run(session, TRY_SERVE, [...ADVISORY_LOCKS.serve]);
      const row = r.rows[0] as { got?: unknown; pid?: unknown } | undefined;
      if (row?.got !== true) return false;
      serving = true;
      session.serving = true;
      servedBy = Number(row.pid);
      return true;
    },
    async close() {
      closed = true;
      clearInterval(check);
      if (timer) clearTimeout(timer);
      const session = client ?? (await connecting?.catch(() => undefined));
      client = undefined;
      if (!session) return;
      // a goodbye the server does not answer (it hangs) is not waited out past the bound
      const bound = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
      await Promise.race([session.client.end().catch(() => undefined), bound]);
      session.drop();
    },
  };
}

// --- internal ---

interface Session {
  client: pg.Client;
  /** Ends the connection at once (its socket destroyed): 'end' follows. */
  drop(): void;
  /** Why it was dropped, for the log line. */
  lost: string | undefined;
  /** It holds the presence lock (once announced). */
  present: boolean;
  /** The warning that the lock is still held by the previous connection was logged. */
  waitedForPresence: boolean;
  /** It holds the serve lock (once taken). */
  serving: boolean;
  /** Why the serve lock could not be re-taken was logged. */
  warnedServe: boolean;
}

const TRY_PRESENCE = 'SELECT pg_try_advisory_lock($1, hashtext($2)) AS got';
/** The serve lock tried, this connection's backend pid, and the holder's when it is not free. */
const TRY_SERVE = `SELECT pg_try_advisory_lock($1::int4, $2::int4) AS got, pg_backend_pid() AS pid,
  (SELECT min(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND classid = $1::int4::oid AND objid = $2::int4::oid AND pid <> pg_backend_pid()) AS holder`;

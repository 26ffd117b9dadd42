/**
 * @module The one dedicated PostgreSQL connection of a process (a pooled one would be handed to other
 * work): it LISTENs for the channels asked for, and holds the process's presence lock, a session-level
 * advisory lock on its origin that tells other replicas it is alive (it ends with the connection, so a
 * killed process releases it). It reconnects by itself, re-taking both, and reports the reconnect so
 * that listeners can catch up on what they missed.
 */
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
  close(): Promise<void>;
}

const RECONNECT_DELAY_MS = 500;
/** The longest wait between reconnection attempts during an outage. */
const RECONNECT_MAX_MS = 15_000;

/** The SQL arguments of the presence lock of `origin` (also tried by liveOrigins). */
export function presenceLockArgs(origin: string): [number, string] {
  return [ADVISORY_LOCKS.presence, origin];
}

export function createSessionConnection(
  config: pg.ClientConfig,
  origin: string,
  log: Logger | undefined,
): SessionConnection {
  const channels = new Map<string, Set<ChannelHandlers>>();
  let announced = false;
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const setUp = async (c: pg.Client) => {
    if (announced) await c.query('SELECT pg_advisory_lock($1, hashtext($2))', presenceLockArgs(origin));
    for (const channel of channels.keys()) await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
  };

  const connect = (): Promise<pg.Client> => {
    if (client) return Promise.resolve(client);
    connecting ??= (async () => {
      const c = new pg.Client(config);
      c.on('notification', (n) => {
        for (const h of channels.get(n.channel) ?? []) h.onNotify();
      });
      c.on('error', () => undefined); // 'end' follows and schedules the reconnect
      c.on('end', () => {
        if (client !== c || closed) return;
        client = undefined;
        log?.warn('lost the PostgreSQL session connection (LISTEN, presence); reconnecting', {});
        schedule();
      });
      try {
        await c.connect();
        await setUp(c);
      } catch (err) {
        await c.end().catch(() => undefined);
        throw err;
      }
      client = c;
      return c;
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

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
      const c = await connect();
      if (first) await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      return async () => {
        set.delete(handlers);
      };
    },
    async announce() {
      if (announced) return;
      announced = true;
      // a session lock taken twice is simply held twice, until the connection ends
      const c = await connect();
      await c.query('SELECT pg_advisory_lock($1, hashtext($2))', presenceLockArgs(origin));
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client ?? (await connecting?.catch(() => undefined));
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}

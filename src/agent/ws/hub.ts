/**
 * @module The stream server's one bus subscriber (spec 2 item 5): every event of a session, streaming-only
 * ones included, goes to the connections attached to that session, and to connections on its ancestors
 * (worker sessions, learned from `delegate.started`), in publish order. Delivery is synchronous and O(1)
 * per connection: a connection queues, it never makes the publisher wait. The hub also remembers the last
 * id it saw (a new connection's accept fence) and which sessions have a turn in flight.
 */
import type { Subscriber } from '../../events/bus.ts';
import type { EventEnvelope } from '../../events/envelope.ts';

/** Bus subscriber name (bus.subscriber_registered, bus.handler_warning). */
export const STREAM_SUBSCRIBER = 'stream_server';

/** Worker → parent links kept (oldest forgotten first); a worker's events all precede its delegate end. */
const MAX_WORKER_LINKS = 10_000;

/** One event on its way to connections: encoded at most once, however many connections take it. */
export interface Delivery {
  readonly event: EventEnvelope;
  /** The event belongs to a worker session below the connection's session. */
  readonly fromWorker: boolean;
}

export interface HubClient {
  readonly sessionId: string;
  deliver(delivery: Delivery, encoded: () => Buffer): void;
}

export interface StreamHub {
  readonly subscriber: Subscriber;
  /** Id of the last event published so far: everything at or below it was published before now. */
  readonly lastEventId: string | null;
  /** Starts delivery to `client` now (its accept); returns the detach. */
  attach(client: HubClient): () => void;
  /** Connections attached to the session or to a worker session below it. */
  clientsUnder(sessionId: string): HubClient[];
  /** Every attached connection. */
  clients(): HubClient[];
  /** Calls `fn` once the session has no turn in flight (at once when it has none). */
  whenIdle(sessionId: string, fn: () => void): void;
  /** The session has no turn in flight (no turn.started without its end so far). */
  isIdle(sessionId: string): boolean;
}

export function createStreamHub(encode: (event: EventEnvelope) => Buffer): StreamHub {
  const bySession = new Map<string, Set<HubClient>>();
  const parentOf = new Map<string, string>();
  const turnsInFlight = new Map<string, Set<string>>();
  const idleWaiters = new Map<string, Array<() => void>>();
  let lastEventId: string | null = null;

  const track = (event: EventEnvelope, sid: string) => {
    if (event.type === 'delegate.started') {
      const worker = (event.payload as { worker_session_id?: unknown }).worker_session_id;
      if (typeof worker === 'string') link(parentOf, worker, sid);
    } else if (event.type === 'turn.started' && event.turn_id) {
      entry(turnsInFlight, sid, () => new Set<string>()).add(event.turn_id);
    } else if ((event.type === 'turn.completed' || event.type === 'turn.cancelled') && event.turn_id) {
      const set = turnsInFlight.get(sid);
      set?.delete(event.turn_id);
      if (set?.size === 0) turnsInFlight.delete(sid);
      const waiting = turnsInFlight.has(sid) ? undefined : idleWaiters.get(sid);
      if (waiting) {
        idleWaiters.delete(sid);
        for (const fn of waiting) fn();
      }
    }
  };

  const handle = (event: EventEnvelope) => {
    lastEventId = event.id;
    if (event.session_id === null) return;
    let encoded: Buffer | undefined;
    const lazy = () => {
      encoded ??= encode(event);
      return encoded;
    };
    const direct = bySession.get(event.session_id);
    if (direct) for (const c of direct) c.deliver({ event, fromWorker: false }, lazy);
    const seen = new Set<string>([event.session_id]);
    for (let p = parentOf.get(event.session_id); p && !seen.has(p); p = parentOf.get(p)) {
      seen.add(p);
      const above = bySession.get(p);
      if (above) for (const c of above) c.deliver({ event, fromWorker: true }, lazy);
    }
    // after delivery: a close waiting for a turn's end goes out after that end event
    track(event, event.session_id);
  };

  return {
    subscriber: { name: STREAM_SUBSCRIBER, handle },
    get lastEventId() {
      return lastEventId;
    },
    attach(client) {
      entry(bySession, client.sessionId, () => new Set<HubClient>()).add(client);
      return () => {
        const s = bySession.get(client.sessionId);
        s?.delete(client);
        if (s?.size === 0) bySession.delete(client.sessionId);
      };
    },
    clientsUnder(sessionId) {
      const out: HubClient[] = [];
      for (const [sid, set] of bySession) {
        if (sid === sessionId || isBelow(parentOf, sid, sessionId)) out.push(...set);
      }
      return out;
    },
    clients() {
      return [...bySession.values()].flatMap((s) => [...s]);
    },
    whenIdle(sessionId, fn) {
      if (!turnsInFlight.has(sessionId)) return fn();
      entry(idleWaiters, sessionId, () => [] as Array<() => void>).push(fn);
    },
    isIdle: (sessionId) => !turnsInFlight.has(sessionId),
  };
}

// --- internal ---

function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

function link(parentOf: Map<string, string>, worker: string, parent: string): void {
  parentOf.set(worker, parent);
  if (parentOf.size > MAX_WORKER_LINKS) {
    const oldest = parentOf.keys().next().value;
    if (oldest !== undefined) parentOf.delete(oldest);
  }
}

function isBelow(parentOf: Map<string, string>, sid: string, ancestor: string): boolean {
  const seen = new Set<string>();
  for (let p = parentOf.get(sid); p && !seen.has(p); p = parentOf.get(p)) {
    if (p === ancestor) return true;
    seen.add(p);
  }
  return false;
}

/**
 * @module The trace writer: persisted bus events go to the `events` table in group commits — one
 * atomic append for everything queued (DECISIONS §3): a BEGIN IMMEDIATE transaction on SQLite, one
 * multi-row INSERT on PostgreSQL (store.appendEvents) — and each writer promise resolves once
 * its event is committed, so servers can hold their final byte until then. An event that closes something
 * (llm.call_completed, turn.completed, audit events…) is committed at the next event-loop turn; an event
 * that only opens something (route.decided, llm.call_started, turn.started, tool.called, delegate.started)
 * may wait up to LAZY_COMMIT_MS for company, so one gateway call costs one transaction instead of two.
 * Rows go in through one cached prepared statement, not a query built per batch.
 */
import { errorMessage } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { POSTGRES_OUTAGE_MS } from '../store/dialect.ts';
import type { Store } from '../store/open.ts';
import type { NewEventRow } from '../store/schema.ts';
import type { Subscriber } from './bus.ts';
import { EVENT_CATALOG } from './catalog.ts';
import type { EventEnvelope } from './envelope.ts';

export interface TraceWriterStats {
  /** Transactions committed. */
  readonly commits: number;
  /** Rows committed. */
  readonly rows: number;
  /** Events given up on (logged). */
  readonly dropped: number;
}

export interface TraceWriter {
  /** Queues the event; resolves true once committed, false if it had to be dropped (logged). */
  write(event: EventEnvelope): Promise<boolean>;
  /** Resolves when everything queued so far is committed. */
  flush(): Promise<void>;
  /** Flushes everything, including events queued while flushing, then refuses further writes. */
  stop(): Promise<void>;
  /** The bus subscriber (durable) that feeds this writer. */
  readonly subscriber: Subscriber;
  readonly pending: number;
  readonly stats: TraceWriterStats;
}

export interface TraceWriterOptions {
  store: Store;
  log: Logger;
  /** Attempts per batch on lock contention or a lost connection before its events are dropped and logged. */
  maxAttempts?: number;
  /** How long a PostgreSQL outage is waited out, counted from its first failed commit (POSTGRES_OUTAGE_MS). */
  outageMs?: number;
  /**
   * Opening events wait for company (LAZY_COMMIT_MS, the gateway's default); false commits them at the next
   * event-loop turn like closing events. `svc serve` sends every event to its WebSocket clients as it is
   * published: one held back for 250 ms was lost by a kill -9 in that window although a client had it.
   */
  lazyOpeningCommits?: boolean;
}

/**
 * Longest wait of an opening event for company. Real LLM calls take seconds, so this is what lets the
 * opening events of calls in flight ride along with the next closing event of any call instead of paying
 * a transaction each; a graceful stop flushes them, and a crash loses only events of calls that had not
 * finished either.
 */
export const LAZY_COMMIT_MS = 250;

/**
 * Dropped events are logged at most once per this interval: a store that refuses every write (a full disk)
 * drops every event, and a line per event flooded the log. The first drop is logged at once; later ones
 * are counted and reported when the interval ends (or at stop).
 */
export const DROP_LOG_INTERVAL_MS = 30_000;

/** Events that open a unit of work; something that closes it always follows (or the stop flushes it). */
const OPENING_EVENTS: ReadonlySet<string> = new Set([
  'route.decided',
  'llm.call_started',
  'turn.started',
  'tool.called',
  'delegate.started',
]);

/**
 * What one drain commits: the rows queued since the last one, the resolver of each row a write() caller
 * awaits (none for a row the bus's subscriber queued), and `settled`, the one promise every row the
 * subscriber queued shares (the bus's `committed`): one promise per transaction, not two per event.
 */
interface Batch {
  rows: NewEventRow[];
  resolves: Array<((ok: boolean) => void) | undefined>;
  settled: Promise<void> | undefined;
  settle: () => void;
}

const noop = (): void => undefined;
const SETTLED: Promise<void> = Promise.resolve();

function newBatch(): Batch {
  return { rows: [], resolves: [], settled: undefined, settle: noop };
}

export function createTraceWriter(options: TraceWriterOptions): TraceWriter {
  const { store, log } = options;
  const maxAttempts = options.maxAttempts ?? 8;
  const outageMs = options.outageMs ?? POSTGRES_OUTAGE_MS;
  const lazyOpening = options.lazyOpeningCommits ?? true;
  /**
   * When the commits started failing (undefined while they succeed). One clock for the whole outage, not
   * one per batch: the batch queued behind one that waited the outage out would otherwise wait as long
   * again, and every answer waiting for it with it (README: up to 60 s since the first failure).
   */
  let failingSinceMs: number | undefined;
  const stats = { commits: 0, rows: 0, dropped: 0 };
  const drops = {
    events: 0,
    ids: [] as string[],
    attempts: 0,
    message: '',
    loggedAtMs: Number.NEGATIVE_INFINITY,
    timer: undefined as NodeJS.Timeout | undefined,
  };
  let queue = newBatch();
  let scheduled = false;
  let running: Promise<void> | undefined;
  let stopped = false;
  let stopping = false;
  const idleWaiters: Array<() => void> = [];
  let lazyTimer: NodeJS.Timeout | undefined;

  // Everything queued during one tick lands in the next drain: one transaction per tick.
  const schedule = () => {
    if (lazyTimer) {
      clearTimeout(lazyTimer);
      lazyTimer = undefined;
    }
    if (scheduled || running) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      running = drain().finally(() => {
        running = undefined;
        if (queue.rows.length > 0) schedule();
        else for (const w of idleWaiters.splice(0)) w();
      });
    });
  };

  /** Opening events alone: commit within LAZY_COMMIT_MS unless a closing event comes first. */
  const scheduleLazy = () => {
    if (scheduled || running || lazyTimer) return;
    lazyTimer = setTimeout(schedule, LAZY_COMMIT_MS);
  };

  async function drain(): Promise<void> {
    const batch = queue;
    queue = newBatch();
    try {
      await commitWithRetries(batch);
    } finally {
      batch.settle();
    }
  }

  async function commitWithRetries(batch: Batch): Promise<void> {
    const { rows, resolves } = batch;
    // after a lost connection the batch may have been committed unheard: its retries skip stored ids
    let outcomeUnknown = false;
    for (let attempt = 1; ; attempt++) {
      try {
        await commitRows(rows, outcomeUnknown);
        for (const resolve of resolves) resolve?.(true);
        return;
      } catch (err) {
        if (!store.dialect.isRetryable(err)) return commitOneByOne(batch, err, outcomeUnknown);
        outcomeUnknown = true;
        failingSinceMs ??= Date.now();
        // PostgreSQL unreachable: servers hold their final byte meanwhile, so an answer keeps its trace
        // (not once stopping: the answers still waiting were cut off, and the stop must end)
        const waitingOutOutage =
          !stopping && store.engine === 'postgres' && Date.now() - failingSinceMs < outageMs;
        if (attempt >= maxAttempts && !waitingOutOutage) return drop(rows, resolves, err, attempt);
        if (attempt <= maxAttempts || attempt % 10 === 0)
          log.warn('trace writer commit failed; retrying', {
            events: rows.length,
            attempt,
            message: errorMessage(err),
          });
        await new Promise((r) => setTimeout(r, Math.min(1000, 10 * 2 ** attempt)));
      }
    }
  }

  /** A batch failed for a reason other than locking: keep every good row, drop only the bad ones. */
  async function commitOneByOne(batch: Batch, first: unknown, ifAbsent: boolean): Promise<void> {
    const { rows, resolves } = batch;
    if (rows.length === 1) return drop(rows, resolves, first, 1);
    for (let i = 0; i < rows.length; i++) {
      try {
        await commitRows([rows[i]], ifAbsent);
        resolves[i]?.(true);
      } catch (err) {
        drop([rows[i]], [resolves[i]], err, 1);
      }
    }
  }

  function drop(
    rows: readonly NewEventRow[],
    resolves: ReadonlyArray<((ok: boolean) => void) | undefined>,
    err: unknown,
    attempts: number,
  ): void {
    stats.dropped += rows.length;
    drops.events += rows.length;
    for (const row of rows) if (drops.ids.length < 5) drops.ids.push(row.id);
    drops.attempts = attempts;
    drops.message = errorMessage(err);
    const wait = drops.loggedAtMs + DROP_LOG_INTERVAL_MS - Date.now();
    if (wait <= 0) logDrops();
    else drops.timer ??= setTimeout(logDrops, wait).unref();
    for (const resolve of resolves) resolve?.(false);
  }

  /** One line for every event dropped since the last line. */
  function logDrops(): void {
    clearTimeout(drops.timer);
    drops.timer = undefined;
    if (drops.events === 0) return;
    log.error('trace writer dropped events', {
      events: drops.events,
      event_ids: drops.ids,
      attempts: drops.attempts,
      message: drops.message,
    });
    drops.loggedAtMs = Date.now();
    drops.events = 0;
    drops.ids = [];
  }

  async function commitRows(rows: readonly NewEventRow[], ifAbsent = false): Promise<void> {
    await store.appendEvents(rows, ifAbsent ? { ifAbsent } : undefined);
    failingSinceMs = undefined;
    stats.commits += 1;
    stats.rows += rows.length;
  }

  /** true: queue `event`; undefined: a type never stored; false: refused by a stopped writer (logged). */
  const accepts = (event: EventEnvelope): boolean | undefined => {
    if (!EVENT_CATALOG[event.type]?.persisted) return undefined;
    if (stopped) {
      log.error('trace writer is stopped; event not written', { event_type: event.type, event_id: event.id });
      return false;
    }
    return true;
  };

  /** Queues a row and schedules its commit (an opening event's lazily). */
  const enqueue = (row: NewEventRow, resolve: ((ok: boolean) => void) | undefined): void => {
    queue.rows.push(row);
    queue.resolves.push(resolve);
    if (lazyOpening && OPENING_EVENTS.has(row.type)) scheduleLazy();
    else schedule();
  };

  const write = (event: EventEnvelope): Promise<boolean> => {
    const ok = accepts(event);
    if (ok !== true) return Promise.resolve(ok === undefined);
    const row = toRow(event); // throws on an unserialisable payload: the bus reports it
    return new Promise<boolean>((resolve) => enqueue(row, resolve));
  };

  /** The bus's handler: settles (never rejects) once the event's batch is committed or dropped. */
  const handle = (event: EventEnvelope): Promise<void> => {
    if (accepts(event) !== true) return SETTLED;
    const batch = queue;
    enqueue(toRow(event), undefined);
    batch.settled ??= new Promise<void>((resolve) => {
      batch.settle = resolve;
    });
    return batch.settled;
  };

  const flush = (): Promise<void> => {
    if (queue.rows.length === 0 && !running && !scheduled) return Promise.resolve();
    return new Promise((resolve) => {
      idleWaiters.push(resolve);
      schedule();
    });
  };

  return {
    write,
    flush,
    async stop() {
      stopping = true;
      while (queue.rows.length > 0 || running || scheduled) await flush();
      stopped = true;
      logDrops();
    },
    subscriber: { name: 'trace_writer', durable: true, neverRejects: true, handle },
    get pending() {
      return queue.rows.length;
    },
    get stats() {
      return { ...stats };
    },
  };
}

/** Envelope → events row (payload as JSON text). */
export function toRow(event: EventEnvelope): NewEventRow {
  return {
    id: event.id,
    timestamp: event.timestamp,
    timestamp_us: event.timestamp_us,
    session_id: event.session_id,
    turn_id: event.turn_id,
    type: event.type,
    actor: event.actor,
    payload: JSON.stringify(event.payload ?? {}),
    parent_event_id: event.parent_event_id,
    sensitivity: event.sensitivity,
  };
}

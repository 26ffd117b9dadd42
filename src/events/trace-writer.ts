/**
 * @module The trace writer: persisted bus events go to the `events` table in group commits — one
 * BEGIN IMMEDIATE transaction per event-loop tick for everything queued in it (DECISIONS §3) — and each
 * writer promise resolves once its event is committed, so servers can hold their final byte until then.
 */
import { sql } from 'kysely';
import { errorMessage } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import type { Store } from '../store/open.ts';
import type { NewEventRow } from '../store/schema.ts';
import type { Subscriber } from './bus.ts';
import { EVENT_CATALOG } from './catalog.ts';
import type { EventEnvelope } from './envelope.ts';

export interface TraceWriter {
  /** Queues the event; resolves true once committed, false if it had to be dropped (logged). */
  write(event: EventEnvelope): Promise<boolean>;
  /** Resolves when everything queued so far is committed. */
  flush(): Promise<void>;
  /** Flushes and refuses further writes. */
  stop(): Promise<void>;
  /** The bus subscriber (durable) that feeds this writer. */
  readonly subscriber: Subscriber;
  readonly pending: number;
}

export interface TraceWriterOptions {
  store: Store;
  log: Logger;
  /** Rows per INSERT statement. */
  chunkSize?: number;
  /** Attempts per batch before its events are dropped and logged. */
  maxAttempts?: number;
}

interface Pending {
  row: NewEventRow;
  resolve: (ok: boolean) => void;
}

export function createTraceWriter(options: TraceWriterOptions): TraceWriter {
  const { store, log } = options;
  const chunkSize = options.chunkSize ?? 200;
  const maxAttempts = options.maxAttempts ?? 8;
  let queue: Pending[] = [];
  let scheduled = false;
  let running: Promise<void> | undefined;
  let stopped = false;
  let idleWaiters: Array<() => void> = [];

  const schedule = (delayMs = 0) => {
    if (scheduled) return;
    scheduled = true;
    const run = () => {
      scheduled = false;
      running = drain().finally(() => {
        running = undefined;
        if (queue.length > 0) schedule();
        else for (const w of idleWaiters.splice(0)) w();
      });
    };
    if (delayMs > 0) setTimeout(run, delayMs).unref();
    else setImmediate(run);
  };

  async function drain(): Promise<void> {
    const batch = queue;
    queue = [];
    for (let attempt = 1; ; attempt++) {
      try {
        await commitBatch(batch);
        for (const p of batch) p.resolve(true);
        return;
      } catch (err) {
        if (attempt >= maxAttempts) {
          log.error('trace writer dropped events after repeated failures', {
            events: batch.length,
            attempts: attempt,
            message: errorMessage(err),
          });
          for (const p of batch) p.resolve(false);
          return;
        }
        log.warn('trace writer commit failed; retrying', {
          events: batch.length,
          attempt,
          message: errorMessage(err),
        });
        await new Promise((r) => setTimeout(r, Math.min(1000, 10 * 2 ** attempt)));
      }
    }
  }

  async function commitBatch(batch: Pending[]): Promise<void> {
    await store.kysely.connection().execute(async (conn) => {
      await sql`BEGIN IMMEDIATE`.execute(conn);
      try {
        for (let i = 0; i < batch.length; i += chunkSize) {
          const rows = batch.slice(i, i + chunkSize).map((p) => p.row);
          await conn.insertInto('events').values(rows).execute();
        }
        await sql`COMMIT`.execute(conn);
      } catch (err) {
        await sql`ROLLBACK`.execute(conn).catch(() => undefined);
        throw err;
      }
    });
  }

  const write = (event: EventEnvelope): Promise<boolean> => {
    if (!EVENT_CATALOG[event.type].persisted) return Promise.resolve(true);
    if (stopped) {
      log.error('trace writer is stopped; event not written', { event_type: event.type, event_id: event.id });
      return Promise.resolve(false);
    }
    return new Promise<boolean>((resolve) => {
      queue.push({ row: toRow(event), resolve });
      if (!running) schedule();
    });
  };

  const flush = (): Promise<void> => {
    if (queue.length === 0 && !running && !scheduled) return Promise.resolve();
    return new Promise((resolve) => {
      idleWaiters.push(resolve);
      if (!running) schedule();
    });
  };

  return {
    write,
    flush,
    async stop() {
      await flush();
      stopped = true;
      idleWaiters = [];
    },
    subscriber: { name: 'trace_writer', durable: true, handle: write },
    get pending() {
      return queue.length;
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
    payload: JSON.stringify(event.payload),
    parent_event_id: event.parent_event_id,
    sensitivity: event.sensitivity,
  };
}

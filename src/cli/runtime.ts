/**
 * @module What a command needs at run time, built in one place: env → paths → store → bus → trace writer.
 */
import { readEnv, type SvcEnv } from '../config/env.ts';
import { resolveStoreTarget } from '../config/paths.ts';
import { type Bus, createBus, type Published } from '../events/bus.ts';
import type { EventType } from '../events/catalog.ts';
import { createEnvelope, type EventInput } from '../events/envelope.ts';
import { createTraceWriter, type TraceWriter } from '../events/trace-writer.ts';
import { SvcError } from '../lib/errors.ts';
import { flushOnFatalError } from '../lib/fatal-error.ts';
import { createIdFactory, type NewId } from '../lib/ids.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { type Clock, systemClock } from '../lib/time.ts';
import { startCheckpointer } from '../store/checkpointer.ts';
import { openStore, type Store } from '../store/open.ts';
import type { ServerKind } from '../store/server-lock.ts';

export interface Runtime {
  readonly env: SvcEnv;
  readonly log: Logger;
  readonly store: Store;
  readonly bus: Bus;
  readonly writer: TraceWriter;
  readonly newId: NewId;
  readonly clock: Clock;
  /** Flushes the trace writer, then closes the store. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  dbPathFlag?: string;
  databaseUrlFlag?: string;
  scope?: 'gateway' | 'any';
  env?: SvcEnv;
  log?: Logger;
  /** Long-running servers: WAL checkpoints in a worker thread instead of inside a request's COMMIT. */
  backgroundCheckpoints?: boolean;
  /**
   * A stop during the start: cuts the store's open short (a PostgreSQL connection attempt that hangs),
   * and any later statement of the store, until it closes (open.ts).
   */
  signal?: AbortSignal;
  /** The trace writer's lazyOpeningCommits (default true). */
  lazyOpeningCommits?: boolean;
  /** A server's start: one server of this kind per SQLite store, one serve per PostgreSQL database (store/open.ts). */
  serverLock?: ServerKind;
}

/** Opens the trace store and wires the bus to the trace writer (the first subscriber). */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const env = options.env ?? readEnv();
  const log = options.log ?? createLogger();
  const target = resolveStoreTarget(
    env,
    { dbPath: options.dbPathFlag, databaseUrl: options.databaseUrlFlag },
    options.scope ?? 'any',
  );
  const store = await openStore(target, {
    log,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.serverLock ? { serverLock: options.serverLock } : {}),
  });
  const newId = createIdFactory();
  const clock = systemClock;
  // a refused start must leave no events behind: the server announces its subscribers once it listens
  const bus = createBus({ newId, clock, log, holdAnnouncements: true });
  const writer = createTraceWriter({ store, log, lazyOpeningCommits: options.lazyOpeningCommits });
  bus.subscribe(writer.subscriber);
  // a server that dies of an error outside any request still commits what the writer holds
  const forgetFlush = flushOnFatalError(() => writer.flush());
  const checkpointer =
    options.backgroundCheckpoints && store.engine === 'sqlite'
      ? startCheckpointer(store, { log })
      : undefined;
  return {
    env,
    log,
    store,
    bus,
    writer,
    newId,
    clock,
    async close() {
      await writer.stop();
      forgetFlush();
      await checkpointer?.stop();
      await store.close();
    },
  };
}

/** What a one-shot store command needs: an existing store, a publisher for its audit events, a clock. */
export interface CommandRuntime {
  readonly store: Store;
  readonly bus: Pick<Bus, 'publish' | 'stamp' | 'deliverStored'>;
  readonly clock: Clock;
  /** Flushes and closes; throws store_error when an audit event could not be written. */
  close(): Promise<void>;
}

/**
 * Opens the store, which must exist (a mistyped --db-path is refused rather than created), with a
 * publisher that hands events straight to the trace writer: a one-shot command has no other subscriber,
 * so nothing is announced on a bus (as the key commands do).
 */
export async function openCommandRuntime(
  options: { dbPathFlag?: string; databaseUrlFlag?: string; env?: SvcEnv } = {},
): Promise<CommandRuntime> {
  const env = options.env ?? readEnv();
  const target = resolveStoreTarget(env, {
    dbPath: options.dbPathFlag,
    databaseUrl: options.databaseUrlFlag,
  });
  const store = await openStore(target, {
    mustExist: true,
    log: createLogger({ level: 'warn' }),
  });
  const log = createLogger({ level: 'error' });
  const writer = createTraceWriter({ store, log, maxAttempts: 3 });
  const newId = createIdFactory();
  const clock = systemClock;
  const failed: string[] = [];
  const publish = <T extends EventType>(input: EventInput<T>): Published<T> => {
    const event = createEnvelope(input, { newId, clock });
    const committed = writer.write(event).then((ok) => {
      if (!ok) failed.push(event.type);
    });
    return { event, committed };
  };
  let closed = false;
  return {
    store,
    bus: {
      publish,
      stamp: (input) => createEnvelope(input, { newId, clock }),
      deliverStored: () => undefined, // stored by its publisher, and nothing else listens here
    },
    clock,
    async close() {
      if (closed) return;
      closed = true;
      await writer.stop();
      await store.close();
      if (failed.length > 0) {
        throw new SvcError('store_error', {
          message: `The audit event ${failed.join(', ')} could not be written to the trace store ${store.path}; check that it is writable and run the command again.`,
        });
      }
    },
  };
}

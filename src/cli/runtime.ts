/**
 * @module What a command needs at run time, built in one place: env → paths → store → bus → trace writer.
 */
import { readEnv, type SvcEnv } from '../config/env.ts';
import { resolveDbPath } from '../config/paths.ts';
import { type Bus, createBus } from '../events/bus.ts';
import { createTraceWriter, type TraceWriter } from '../events/trace-writer.ts';
import { createIdFactory, type NewId } from '../lib/ids.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { type Clock, systemClock } from '../lib/time.ts';
import { openStore, type Store } from '../store/open.ts';

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
  scope?: 'gateway' | 'any';
  env?: SvcEnv;
  log?: Logger;
}

/** Opens the trace store and wires the bus to the trace writer (the first subscriber). */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const env = options.env ?? readEnv();
  const log = options.log ?? createLogger();
  const store = await openStore(resolveDbPath(env, options.dbPathFlag, options.scope ?? 'any'));
  const newId = createIdFactory();
  const clock = systemClock;
  const bus = createBus({ newId, clock, log });
  const writer = createTraceWriter({ store, log });
  bus.subscribe(writer.subscriber);
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
      await store.close();
    },
  };
}

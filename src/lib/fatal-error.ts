/**
 * @module What a long-running server (`svc gateway`, `svc serve`, `svc forward`) does with an error thrown
 * outside any request, an uncaught exception or an unhandled rejection: one JSON error line, the trace
 * writer's queue flushed (bounded by FATAL_FLUSH_MS), then exit 1. Node's default printed a raw stack
 * beside the JSON-lines log and exited at once, so opening events still queued for company were lost.
 * The line names the error's class (and code); its message only for a system error (a syscall's failure,
 * which carries no request content), its stack only with SVC_DEBUG=1: a message may quote a prompt or key.
 */
import { SvcError } from './errors.ts';
import type { Logger } from './log.ts';

/** How long the flush may take before the process exits anyway (a store that stopped answering). */
export const FATAL_FLUSH_MS = 5_000;

/**
 * Installs the handlers (once per process; a later call changes nothing). `testFault` is SVC_TEST_FAULT,
 * a hook for tests only: `throw` or `reject` makes SIGUSR2 throw, or reject a promise, outside any request;
 * any other value refuses the start (startup_refused), as a bad SVC_* setting does.
 */
export function installFatalErrorHandler(options: {
  log: Logger;
  debug: boolean;
  testFault?: string | undefined;
}): void {
  const fault = options.testFault;
  if (fault !== undefined && fault !== 'throw' && fault !== 'reject')
    throw new SvcError('startup_refused', {
      message: `SVC_TEST_FAULT must be throw or reject (a hook for tests only), not "${fault}"; unset it and start svc again.`,
    });
  if (installed) return;
  installed = true;
  const { log, debug } = options;
  const onFatal = (err: unknown, origin: string) => {
    if (stopping) return; // a second failure while the first one flushes: the exit is on its way
    stopping = true;
    log.error('unexpected error outside a request; stopping', { origin, ...describe(err, debug) });
    void flushAll().finally(() => process.exit(1));
  };
  process.on('uncaughtException', (err) => onFatal(err, 'uncaught_exception'));
  process.on('unhandledRejection', (reason) => onFatal(reason, 'unhandled_rejection'));
  if (fault !== undefined) armTestFault(fault);
}

/** Adds a flush (the trace writer's) run before a fatal error's exit; returns its removal. */
export function flushOnFatalError(flush: () => Promise<void>): () => void {
  flushes.add(flush);
  return () => flushes.delete(flush);
}

// --- internal ---

let installed = false;
let stopping = false;
const flushes = new Set<() => Promise<void>>();

async function flushAll(): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, FATAL_FLUSH_MS);
  });
  const all = Promise.allSettled([...flushes].map((f) => Promise.resolve().then(f)));
  await Promise.race([all, bound]);
  clearTimeout(timer);
}

function describe(err: unknown, debug: boolean): Record<string, unknown> {
  if (!(err instanceof Error)) return { error_class: err === null ? 'null' : typeof err };
  const e = err as NodeJS.ErrnoException;
  const fields: Record<string, unknown> = { error_class: e.name };
  if (typeof e.code === 'string') fields.code = e.code;
  // a system error's message is the syscall, its code and a path or address: no request content
  if (typeof e.syscall === 'string' && typeof e.errno === 'number') fields.message = e.message;
  if (debug) fields.stack = e.stack;
  return fields;
}

function armTestFault(kind: 'throw' | 'reject'): void {
  process.on('SIGUSR2', () => {
    const err = new Error(
      'SVC_TEST_FAULT: a fault outside any request (test hook; prompt text here must never be logged)',
    );
    if (kind === 'throw')
      setImmediate(() => {
        throw err;
      });
    else void Promise.reject(err);
  });
}

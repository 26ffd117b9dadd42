/**
 * @module The stop signals of every long-running command (gateway, serve, forward): the first SIGTERM or
 * SIGINT starts a graceful stop; during it, a second one asks to hurry and a third ends the process.
 * A signal that comes while the command is still loading or starting is held (holdStopSignals) rather
 * than left to Node's default action, which killed the process mid-start (exit 143, no log line).
 */

/** Thrown by a start step once a stop signal came: the start closes what it opened and ends cleanly. */
export class StopRequested extends Error {
  readonly signal: NodeJS.Signals;
  constructor(signal: NodeJS.Signals) {
    super(`stop requested by ${signal} during the start`);
    this.name = 'StopRequested';
    this.signal = signal;
  }
}

/**
 * From here on, SIGTERM and SIGINT are remembered instead of ending the process (a third one still ends it
 * at once, exit 128 + signal number, for a start that hangs). waitForStopSignal takes the remembered one
 * over; releaseStopSignals hands it back to Node's default action. Idempotent.
 */
export function holdStopSignals(): void {
  if (held) return;
  const state: Held = {
    received: 0,
    first: undefined,
    stop: new AbortController(),
    on: (signal) => {
      state.received += 1;
      state.first ??= signal;
      if (!state.stop.signal.aborted) state.stop.abort(new StopRequested(signal));
      if (state.received >= 3) process.exit(exitCodeOf(signal));
    },
  };
  held = state;
  process.on('SIGTERM', state.on);
  process.on('SIGINT', state.on);
}

/**
 * Stops holding. With `reraise` (a command that does not stop gracefully), a signal that came meanwhile
 * is raised again, so Node's default action ends the process as it would have without the hold.
 */
export async function releaseStopSignals(options: { reraise: boolean }): Promise<void> {
  if (!held) return;
  if (options.reraise) await turnTheLoop(); // a signal not delivered yet is dropped with its listener
  const state = takeHeld();
  if (options.reraise && state?.first !== undefined) process.kill(process.pid, state.first);
}

/** The stop signal held so far, if any (after letting Node deliver one that is pending). */
export async function heldStopSignal(): Promise<NodeJS.Signals | undefined> {
  await turnTheLoop();
  return held?.first;
}

/**
 * Aborted, with StopRequested as its reason, once a stop signal is held: a start step that may wait long
 * (a PostgreSQL connection attempt that hangs) is cut short by it instead of being waited out.
 * Undefined when signals are not held.
 */
export function heldStopAbortSignal(): AbortSignal | undefined {
  return held?.stop.signal;
}

/**
 * Runs `step` with a signal that a stop signal held while it runs aborts (as heldStopAbortSignal), and
 * that nothing aborts once it has returned: for a start step whose result outlives it (a store that
 * closes its connections on abort, when the steps after its open must not be cut short).
 */
export async function whileStopSignalHeld<T>(
  step: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  const stop = heldStopAbortSignal();
  if (!stop) return step(undefined);
  const during = new AbortController();
  const forward = () => during.abort(stop.reason);
  if (stop.aborted) forward();
  else stop.addEventListener('abort', forward, { once: true });
  try {
    return await step(during.signal);
  } finally {
    stop.removeEventListener('abort', forward);
  }
}

/** Throws StopRequested once a stop signal was held: a start checks between its slow steps. */
export async function assertNoStopSignal(): Promise<void> {
  const signal = await heldStopSignal();
  if (signal !== undefined) throw new StopRequested(signal);
}

/** Resolves with the first SIGTERM or SIGINT (a held one at once) and stops listening for both. */
export function waitForStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
    // the hold is let go only now: a signal Node has not delivered yet is dropped when the last listener
    // goes, so there is always one
    const state = takeHeld();
    if (state?.first !== undefined) on(state.first);
  });
}

/**
 * While a graceful stop runs: the next SIGTERM or SIGINT (a second Ctrl-C) calls `hurry`, which cuts the
 * drain short but still lets the stop flush what it owes; one more ends the process at once (exit 128 +
 * signal number), for a stop that hangs. Without this, the second signal killed the process with
 * Node's default action and nothing was flushed. Returns the function that stops listening.
 */
export function onRepeatedStopSignal(hurry: (signal: NodeJS.Signals) => void): () => void {
  let received = 0;
  const on = (signal: NodeJS.Signals) => {
    received += 1;
    if (received === 1) hurry(signal);
    else process.exit(exitCodeOf(signal));
  };
  process.on('SIGTERM', on);
  process.on('SIGINT', on);
  return () => {
    process.off('SIGTERM', on);
    process.off('SIGINT', on);
  };
}

// --- internal ---

interface Held {
  received: number;
  first: NodeJS.Signals | undefined;
  stop: AbortController;
  on: (signal: NodeJS.Signals) => void;
}

let held: Held | undefined;

function takeHeld(): Held | undefined {
  const state = held;
  if (!state) return undefined;
  held = undefined;
  process.off('SIGTERM', state.on);
  process.off('SIGINT', state.on);
  return state;
}

/**
 * Node delivers signals in the I/O phase of the event loop, which a start's synchronous steps (the store's
 * migrations) and its promise chains never reach: two setImmediate turns have one I/O phase between them.
 */
async function turnTheLoop(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
}

function exitCodeOf(signal: NodeJS.Signals): number {
  return 128 + (signal === 'SIGINT' ? 2 : 15);
}

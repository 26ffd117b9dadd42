/**
 * @module SIGHUP on `svc gateway` and `svc serve` re-reads routing.yaml (routing/reload-signal.ts). Node's
 * default action for it ends the process (exit 129), so a hangup that came before the reload listener was
 * installed (the start: loading the code, opening the store) or after it was removed (the stop, while the
 * trace store is flushed) ended the server, mid-start or before its events were written. From the first
 * moment of such a command to its end a hangup is held instead: one held during the start is acted on as
 * soon as the reload listener is installed (the policy the start read may predate the edit); one during the
 * stop is dropped.
 */

let held: { received: boolean; on: () => void } | undefined;

/** From here on, SIGHUP is remembered instead of ending the process. Idempotent. */
export function holdHangups(): void {
  if (held) return;
  const state = {
    received: false,
    on: () => {
      state.received = true;
    },
  };
  held = state;
  process.on('SIGHUP', state.on);
}

/** Whether a SIGHUP was held since holdHangups or the last call (then forgotten). */
export function takeHeldHangup(): boolean {
  if (!held?.received) return false;
  held.received = false;
  return true;
}

/**
 * Stops holding. With `reraise` (a command that does not reload on SIGHUP), a hangup that came meanwhile is
 * raised again, so Node's default action ends the process as it would have without the hold.
 */
export async function releaseHangups(options: { reraise: boolean }): Promise<void> {
  if (!held) return;
  // a signal not delivered yet would be dropped with its listener
  if (options.reraise) await new Promise((resolve) => setImmediate(resolve));
  const state = held;
  held = undefined;
  process.off('SIGHUP', state.on);
  if (options.reraise && state.received) process.kill(process.pid, 'SIGHUP');
}

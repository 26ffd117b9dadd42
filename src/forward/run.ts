/**
 * @module `svc forward` as a process: listen, forward until SIGTERM/SIGINT, then stop accepting, let open
 * connections finish within the drain deadline (a second signal cuts them off now) and return (exit 0).
 */
import type { Logger } from '../lib/log.ts';
import { onRepeatedStopSignal, waitForStopSignal } from '../lib/stop-signal.ts';
import type { HostPort } from './address.ts';
import { createForwarder } from './forward.ts';

export interface RunForwardOptions {
  listen: HostPort;
  target: HostPort;
  log: Logger;
  /** How long open connections may take to finish after SIGTERM/SIGINT (default 30 s, the gateway's drain). */
  drainMs?: number;
}

export const FORWARD_DRAIN_MS = 30_000;

/** Runs the forwarder; resolves once it has stopped after a signal. */
export async function runForward(options: RunForwardOptions): Promise<void> {
  const { log } = options;
  const drainMs = options.drainMs ?? FORWARD_DRAIN_MS;
  const forwarder = createForwarder({ target: options.target, log });
  await forwarder.listen(options.listen);
  const signal = await waitForStopSignal();
  log.info('forward stopping', { signal, connections: forwarder.activeConnections() });
  // a second SIGTERM/SIGINT (a second Ctrl-C) cuts the drain short and still ends with exit 0; a third
  // ends the process at once
  let hurried = false;
  const stopListening = onRepeatedStopSignal((second) => {
    hurried = true;
    log.warn('second stop signal; cutting off the open connections now', {
      signal: second,
      connections: forwarder.activeConnections(),
    });
    forwarder.cutOff();
  });
  const { forced } = await forwarder.close(drainMs);
  stopListening();
  if (forced && !hurried)
    log.warn('open connections were cut off after the drain deadline', { forced, drain_ms: drainMs });
  log.info('forward stopped');
}

// --- internal ---

/**
 * @module `svc forward` as a process: listen, forward until SIGTERM/SIGINT, then stop accepting, let open
 * connections finish within the drain deadline and return (the command exits 0).
 */
import type { Logger } from '../lib/log.ts';
import { waitForStopSignal } from '../lib/stop-signal.ts';
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
  const { forced } = await forwarder.close(drainMs);
  if (forced)
    log.warn('open connections were cut off after the drain deadline', { forced, drain_ms: drainMs });
  log.info('forward stopped');
}

// --- internal ---

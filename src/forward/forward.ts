/**
 * @module A plain TCP forwarder (the chart's sidecar: 0.0.0.0:8423 → 127.0.0.1:8422, spec 1 §Deployment
 * contract). Bytes are piped both ways untouched, so HTTP, SSE streaming and WebSocket upgrades pass through.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { errorMessage, SvcError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { formatHostPort, type HostPort } from './address.ts';

export interface ForwarderOptions {
  target: HostPort;
  log: Logger;
  /** How long an upstream connect may take before the client connection is dropped (default 10 s). */
  connectTimeoutMs?: number;
}

export interface Forwarder {
  /** Starts accepting on `at`; resolves with the bound address (port 0 picks a free port). */
  listen(at: HostPort): Promise<HostPort>;
  /** Connections currently open (client and upstream sockets not both closed). */
  activeConnections(): number;
  /** Stops accepting, lets open connections finish for up to `drainTimeoutMs`, then destroys the rest. */
  close(drainTimeoutMs: number): Promise<{ forced: number }>;
  /** Destroys the open connections now (a second stop signal): a drain under way ends at once. */
  cutOff(): void;
}

/** Creates a forwarder to `target`; nothing listens until `listen()`. */
export function createForwarder(options: ForwarderOptions): Forwarder {
  const { target, log } = options;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const active = new Set<Pair>();
  let onIdle: (() => void) | undefined;
  let forced = 0;
  const destroyAll = () => {
    forced += active.size;
    for (const p of active) p.destroy();
  };
  let seq = 0;
  // allowHalfOpen: a client FIN is passed upstream while the response keeps flowing back (half-close).
  const server: Server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    const pair = openPair(client, ++seq, { target, log, connectTimeoutMs }, () => {
      active.delete(pair);
      if (active.size === 0) onIdle?.();
    });
    active.add(pair);
  });

  return {
    listen: (at) => listenOn(server, at, target, log),
    activeConnections: () => active.size,
    async close(drainTimeoutMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if (active.size > 0) {
        log.info('draining connections', { connections: active.size, timeout_ms: drainTimeoutMs });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            destroyAll();
            resolve();
          }, drainTimeoutMs);
          onIdle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      await closed;
      return { forced };
    },
    cutOff: destroyAll,
  };
}

// --- internal ---

interface Pair {
  destroy(): void;
}

function listenOn(server: Server, at: HostPort, target: HostPort, log: Logger): Promise<HostPort> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => {
      reject(
        new SvcError('startup_refused', {
          message: `svc forward cannot listen on ${formatHostPort(at)} (${errorMessage(err)}); choose another --listen address.`,
          cause: err,
        }),
      );
    };
    server.once('error', onError);
    server.listen(at.port, at.host, () => {
      server.off('error', onError);
      server.on('error', (err) => log.error('listener error', { error: err }));
      const addr = server.address();
      const bound = typeof addr === 'object' && addr ? { host: addr.address, port: addr.port } : at;
      log.info('forwarding', { listen: formatHostPort(bound), target: formatHostPort(target) });
      resolve(bound);
    });
  });
}

/** Connects one client to the target and pipes both ways; `onClosed` runs once both sockets are closed. */
function openPair(
  client: Socket,
  id: number,
  deps: { target: HostPort; log: Logger; connectTimeoutMs: number },
  onClosed: () => void,
): Pair {
  const { target, log } = deps;
  const upstream = connect({ host: target.host, port: target.port, allowHalfOpen: true, noDelay: true });
  const peer = `${client.remoteAddress}:${client.remotePort}`;
  let failed = false;
  // A reset, not a FIN: the far side must see an abort (a client gone mid-stream stops the upstream call).
  const reset = (s: Socket) => {
    if (!s.destroyed) s.resetAndDestroy();
  };
  const destroy = () => {
    reset(client);
    reset(upstream);
  };
  const fail = (side: 'client' | 'upstream', err: Error & { code?: string }) => {
    if (failed) return;
    failed = true;
    const connected = !upstream.connecting && upstream.remoteAddress !== undefined;
    if (side === 'upstream' && !connected) {
      log.warn('upstream connect failed', {
        conn: id,
        target: formatHostPort(target),
        code: err.code,
        error: err,
      });
    } else {
      log.debug('connection aborted', { conn: id, side, code: err.code });
    }
    destroy();
  };

  upstream.setTimeout(deps.connectTimeoutMs, () =>
    fail('upstream', Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' })),
  );
  upstream.once('connect', () => upstream.setTimeout(0));
  client.on('error', (err) => fail('client', err));
  upstream.on('error', (err) => fail('upstream', err));
  // pipe() ends the destination when the source ends: each FIN crosses over on its own.
  client.pipe(upstream);
  upstream.pipe(client);

  let open = 2;
  const closed = () => {
    open--;
    if (open === 0) {
      log.debug('connection closed', {
        conn: id,
        peer,
        bytes_in: client.bytesRead,
        bytes_out: client.bytesWritten,
      });
      onClosed();
    }
  };
  // A side that closed cleanly has already passed its FIN on; make sure the other finishes writing and closes.
  client.once('close', () => {
    upstream.end();
    closed();
  });
  upstream.once('close', () => {
    client.end();
    closed();
  });
  log.debug('connection opened', { conn: id, peer });
  return { destroy };
}

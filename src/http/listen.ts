/**
 * @module Loopback-only listening (spec 1 §What the service does, 6), bounds on how long a client may
 * take to send its request, and graceful stop: stop accepting, let in-flight requests finish within a
 * deadline, close idle keep-alive sockets and connections that sent no request, then force the rest.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createAdaptorServer } from '@hono/node-server';
import { errorMessage, SvcError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { onRepeatedStopSignal } from '../lib/stop-signal.ts';
import { answerClientError, answerUnreadableTarget, type RefusalOptions } from './client-refusals.ts';
import { isLoopbackName } from './host-check.ts';
import { cutOff } from './stop-cut-off.ts';

export type { RefusalOptions } from './client-refusals.ts';
export { parsePort } from './port.ts';

export const LOOPBACK_HOST = '127.0.0.1';

/** A loopback address is kept; `localhost` and every other value become 127.0.0.1 (non-loopback: warned). */
export function resolveLoopbackHost(requested: string | undefined, log: Logger): string {
  if (!requested) return LOOPBACK_HOST;
  const bare = requested.trim().replace(/^\[|\]$/g, '');
  if (bare === '::1' || (isLoopbackName(bare) && /^127\./.test(bare))) return bare;
  if (!isLoopbackName(bare)) {
    log.warn(`host ${requested} is not a loopback address; binding ${LOOPBACK_HOST} instead`, {
      requested_host: requested,
      host: LOOPBACK_HOST,
    });
  }
  return LOOPBACK_HOST;
}

/**
 * How long a client may take to send its request headers / its whole request (Node's `headersTimeout` /
 * `requestTimeout`); past either it gets 408 and a closed socket. Responses are not bound by them.
 */
export interface ClientTimeouts {
  headersMs: number;
  requestMs: number;
}

/** SVC_GATEWAY_HEADERS_TIMEOUT_MS / SVC_GATEWAY_REQUEST_TIMEOUT_MS defaults (issue 17: slow clients). */
export const DEFAULT_CLIENT_TIMEOUTS: ClientTimeouts = { headersMs: 10_000, requestMs: 60_000 };

export interface Listening {
  readonly server: Server;
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** Requests currently being answered. */
  readonly inFlight: number;
  /**
   * Stops accepting, waits for in-flight requests up to `graceMs`, then closes every socket. With
   * `answerWhileDraining`, the listener first stays open until the requests in flight at the call have
   * ended (or the deadline): new requests still reach the app, which answers them (the agent server: 503
   * `service_shutting_down`), each on a connection closed after its answer.
   */
  close(graceMs: number): Promise<{ forced: boolean }>;
  /** During close(): ends the wait now, so the requests still in flight are cut off (a second stop signal). */
  cutOff(): void;
}

/**
 * While a graceful stop runs, a second SIGTERM/SIGINT cuts the requests still in flight off (logged); the
 * stop goes on and flushes what it owes (DECISIONS §3), a third ends the process. Returns the unsubscribe.
 */
export function cutOffOnRepeatedStopSignal(server: Listening, log: Logger): () => void {
  return onRepeatedStopSignal((again) => {
    log.warn('second stop signal; cutting off the in-flight requests now', {
      signal: again,
      in_flight: server.inFlight,
    });
    server.cutOff();
  });
}

/**
 * Refuses the start, as listen() would, when `port` cannot be bound (in use, a privileged port): checked
 * before the server opens its store, so a refused start writes nothing there (no events, no recovered
 * turns). Port 0 (any free port) always binds. The probe is closed at once; listen() binds for real.
 */
export async function assertPortBindable(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err) => reject(cannotListen(host, port, err)));
    probe.listen({ host, port, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

export async function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  options: {
    host: string;
    port: number;
    clientTimeouts?: ClientTimeouts;
    /** The `upgrade` listener (WebSocket handshakes on the same port), attached before listening. */
    onUpgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
    /** close() answers new requests until the ones in flight have ended, instead of refusing connections. */
    answerWhileDraining?: boolean;
    /** How the requests Node refuses before the app sees them are answered and logged. */
    refusals?: RefusalOptions;
    /** The app's body limit: a request with `Expect: 100-continue` that declares more gets no `100 Continue`. */
    maxBodyBytes?: number;
  },
): Promise<Listening> {
  const timeouts = options.clientTimeouts ?? DEFAULT_CLIENT_TIMEOUTS;
  const server = createAdaptorServer({
    fetch,
    serverOptions: {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      // Node checks both only on this interval (default 30 s, which would let a 10 s limit run to 40 s)
      connectionsCheckingInterval: checkingIntervalMs(timeouts),
      // a request without Host reaches the app, whose Host check refuses it (403 with a body), not Node (bare 400)
      requireHostHeader: false,
    },
  }) as Server;
  refuseUnreadableHostsInTheApp(server, options.refusals ?? {});
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(err, socket as Socket, timeouts, options.refusals ?? {}),
  );
  if (options.onUpgrade) server.on('upgrade', options.onUpgrade);
  // Node answers an Expect other than 100-continue with a bare 417 (no body, id or log line); RFC 9110
  // lets a server ignore it, so the request is answered as if it had none
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    server.emit('request', req, res),
  );
  // Node sends 100 Continue to every such request: one whose declared body the app refuses unread (413)
  // gets its answer instead, so the client never uploads it, and the connection closes after the answer
  const maxBodyBytes = options.maxBodyBytes;
  if (maxBodyBytes !== undefined)
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      if (!(Number(req.headers['content-length']) > maxBodyBytes)) res.writeContinue();
      server.emit('request', req, res);
    });
  const open = new Set<ServerResponse>();
  const waiting = trackConnectionsWithoutRequest(server, open, options.onUpgrade !== undefined);
  let draining = false;
  const drain = createDrainDeadline();
  server.on('request', (_req, res) => {
    open.add(res);
    res.once('close', () => open.delete(res));
    if (draining) res.shouldKeepAlive = false; // each answer while draining ends its connection
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(cannotListen(options.host, options.port, err)));
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    server,
    host: options.host,
    port,
    url: `http://${hostForUrl}:${port}`,
    get inFlight() {
      return open.size;
    },
    async close(graceMs) {
      drain.start(graceMs);
      draining = true;
      // an answer not yet begun says Connection: close, so a keep-alive client opens a new connection
      // rather than sending its next request on a socket the stop is about to close (ECONNRESET)
      for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
      if (options.answerWhileDraining) await settled([...open], drain);
      return closeGracefully(
        server,
        waiting,
        () => open.size,
        drain,
        () => cutOff(open),
      );
    },
    cutOff() {
      drain.cutOff();
    },
  };
}

// --- internal ---

/**
 * A `Host` that @hono/node-server cannot turn into a URL as it is (`127.1`, `2130706433`, `[::ffff:127.0.0.1]`,
 * an empty value, a port above 65535, a space) was answered by the adapter itself: a bare 400 without the
 * error body, request id, version headers or request-log line. The adapter now builds the request's URL from
 * a stand-in name, while the app still reads the Host as sent (the headers come from `rawHeaders`), so the
 * Host check refuses it like any foreign name (403 `host_not_allowed`) and logs it.
 */
function refuseUnreadableHostsInTheApp(server: Server, refusals: RefusalOptions): void {
  const [adapter] = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  const readable = new Set<string>(); // the few Host values a server sees, each checked once
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (answerUnreadableTarget(req, res, refusals)) return;
    const host = req.headers.host;
    if (host === undefined || !readable.has(host)) {
      if (host !== undefined && hostReadsAsIs(host)) {
        if (readable.size < 256) readable.add(host);
      } else req.headers.host = UNREADABLE_HOST;
    }
    adapter(req, res);
  });
}

/** The adapter's stand-in for an unreadable Host: a reserved name (RFC 2606). */
const UNREADABLE_HOST = 'unreadable-host.invalid';

/** The adapter's own test: the Host parses as a URL authority whose hostname is the header as written. */
function hostReadsAsIs(host: string): boolean {
  if (host === '') return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}/`).hostname;
  } catch {
    return false;
  }
  return hostname.length === host.length || hostname === host.replace(/:\d+$/, '');
}

/** The end of a drain: `graceMs` after close() began, or earlier when cut off. */
interface DrainDeadline {
  start(graceMs: number): void;
  cutOff(): void;
  passed(): boolean;
  /** Resolves at the deadline or at the cut-off, whichever comes first. */
  reached(): Promise<void>;
}

function createDrainDeadline(): DrainDeadline {
  let deadline = Number.POSITIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  let reach: () => void = () => {};
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  const end = () => {
    clearTimeout(timer);
    deadline = Math.min(deadline, Date.now());
    reach();
  };
  return {
    start(graceMs) {
      deadline = Math.min(deadline, Date.now() + graceMs);
      timer = setTimeout(end, Math.max(0, deadline - Date.now())).unref(); // a finished drain exits now
    },
    cutOff: end,
    passed: () => Date.now() >= deadline,
    reached: () => reached,
  };
}

/** Resolves once every response has closed, or at the drain's deadline. */
async function settled(responses: ServerResponse[], drain: DrainDeadline): Promise<void> {
  const pending = responses.filter((res) => !res.closed);
  if (pending.length === 0) return;
  await Promise.race([
    Promise.all(pending.map((res) => new Promise((resolve) => res.once('close', resolve)))),
    drain.reached(),
  ]);
}

/** A tenth of the shorter timeout, within 50 ms to 1 s: the limit is enforced to within that much. */
function checkingIntervalMs(t: ClientTimeouts): number {
  return Math.max(50, Math.min(1000, Math.floor(Math.min(t.headersMs, t.requestMs) / 10)));
}

/**
 * Closes the connections that carry no request the app is answering (`open`): new ones that have sent no
 * request head (or part of one) and keep-alive ones between requests. Node's closeIdleConnections leaves a
 * connection that has not sent a whole head to the headers timeout, which server.close() stops checking,
 * so such a connection would hold a graceful stop for its whole deadline. An upgraded connection (a
 * WebSocket) is its handler's to close. Only connections are tracked here, nothing per request.
 */
function trackConnectionsWithoutRequest(
  server: Server,
  open: ReadonlySet<ServerResponse>,
  upgrades: boolean,
): () => void {
  const sockets = new Set<Socket>();
  function forget(this: Socket) {
    sockets.delete(this);
  }
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', forget);
  });
  if (upgrades)
    server.prependListener('upgrade', (req: IncomingMessage) => sockets.delete(req.socket as Socket));
  return () => {
    const busy = new Set<unknown>();
    for (const res of open) busy.add(res.socket);
    // one whose last answer is still being written is left for the next round
    for (const socket of sockets) if (!busy.has(socket) && socket.writableLength === 0) socket.destroy();
  };
}

async function closeGracefully(
  server: Server,
  closeWaiting: () => void,
  inFlight: () => number,
  drain: DrainDeadline,
  cutOff: () => Promise<void>,
): Promise<{ forced: boolean }> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  let forced = false;
  /** Set at the deadline: the cut-off responses are ending themselves; closed once they have. */
  let cutting: Promise<void> | undefined;
  let cut = false;
  // Keep-alive sockets become idle once their response ends; close them as they do.
  const timer = setInterval(() => {
    server.closeIdleConnections();
    closeWaiting();
    if (!drain.passed()) return;
    if (cutting === undefined) {
      forced = inFlight() > 0;
      cutting = cutOff().then(() => {
        cut = true;
      });
    }
    if (cut) server.closeAllConnections();
  }, 50);
  server.closeIdleConnections();
  closeWaiting();
  try {
    await closed;
  } finally {
    clearInterval(timer);
  }
  return { forced };
}

function cannotListen(host: string, port: number, err: unknown): SvcError {
  return new SvcError('startup_refused', {
    message: `Cannot listen on ${host}:${port}: ${errorMessage(err)}; choose another --port.`,
    cause: err,
  });
}

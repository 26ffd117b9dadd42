/**
 * @module The WebSocket stream of `svc serve` (spec 2 §WebSocket stream) on the REST port: the hub on the
 * bus, the handshake route GET /sessions/{id}/stream (attach token checked before the upgrade: 404 / 401 /
 * 403 with the JSON body), one connection per socket, the session-end close (1000, after its turn ended)
 * and the shutdown close (1001).
 */
import type { IncomingMessage } from 'node:http';
import { createNodeWebSocket } from '@hono/node-ws';
import type { Hono, MiddlewareHandler } from 'hono';
import type { WebSocket } from 'ws';
import type { Bus, Subscriber } from '../../events/bus.ts';
import type { EventEnvelope } from '../../events/envelope.ts';
import { SvcError } from '../../lib/errors.ts';
import type { NewId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/log.ts';
import type { Clock } from '../../lib/time.ts';
import type { AgentAppDeps } from '../app.ts';
import type { AgentEnv } from '../env.ts';
import { requireOpenSession, requireSession, workerSessionOfTurn } from '../sessions/store.ts';
import { type Connection, type ConnectionSocket, createConnection } from './connection.ts';
import { CLOSE, type CloseKind, closeReason, encodeFrame, MAX_CLIENT_FRAME_BYTES } from './frames.ts';
import { createStreamHub, STREAM_SUBSCRIBER } from './hub.ts';
import { createUpgradeListener, type UpgradeListener } from './upgrade.ts';

/** SVC_WS_QUEUE_LIMIT default (spec 2 §Limits). */
export const DEFAULT_WS_QUEUE_LIMIT = 1_000;
/** SVC_WS_PING_INTERVAL_MS default (spec 2 §Limits). */
export const DEFAULT_WS_PING_INTERVAL_MS = 30_000;
/** A session-end close waits at most this long for the session's turn to publish its end. */
export const SESSION_END_WAIT_MS = 10_000;
/** Shutdown waits at most this long for sockets to finish their close before cutting them. */
export const SHUTDOWN_CLOSE_WAIT_MS = 3_000;

const STREAM_PATH_RE = /^\/sessions\/[^/]+\/stream$/;

export interface StreamServerDeps {
  bus: Pick<Bus, 'publish'>;
  clock: Clock;
  newId: NewId;
  log: Logger;
  /** Commits every event the trace writer has queued (before a replay reads the store). */
  flush(): Promise<void>;
  queueLimit: number;
  pingIntervalMs: number;
}

export interface StreamServer {
  /** Register on the bus before anything publishes session events (spec 2 item 5). */
  readonly subscriber: Subscriber;
  /** Adds the handshake route to the agent app (createAgentApp calls it). */
  mount(app: Hono<AgentEnv>, deps: AgentAppDeps): void;
  /** The HTTP server's `upgrade` listener (after mount). */
  readonly upgrade: UpgradeListener;
  /** DELETE /sessions/{id}: close the session's sockets (and its workers') once its turn ended. */
  endSession(sessionId: string): void;
  /** Shutdown: close every socket with 1001 and wait (bounded) until they are gone. */
  closeAll(): Promise<void>;
  /** Open connections. */
  readonly size: number;
}

export function createStreamServer(deps: StreamServerDeps): StreamServer {
  const hub = createStreamHub((event) => encodeFrame({ type: 'event', event }));
  const sockets = new Map<Connection, { ws: WebSocket; gone: Promise<void> }>();
  const accepted = new WeakSet<IncomingMessage>();
  let upgrade: UpgradeListener | undefined;

  const overflowed = (sessionId: string) => (event: EventEnvelope | null, queued: number) => {
    deps.log.warn('websocket client too slow; closing it', { session_id: sessionId, queued });
    deps.bus.publish({
      type: 'bus.handler_warning',
      actor: 'bus',
      session_id: sessionId,
      turn_id: event?.turn_id ?? null,
      parent_event_id: event?.id ?? null,
      payload: {
        subscriber: STREAM_SUBSCRIBER,
        event_id: event?.id ?? null,
        event_type: event?.type ?? null,
        message:
          event === null
            ? `client_too_slow: more than ${deps.queueLimit} answers to its own frames (pongs, errors) queued for one connection; closed with 1008`
            : `client_too_slow: more than ${deps.queueLimit} events queued for one connection; closed with 1008`,
      },
    });
  };

  /** A stream handler that threw (@hono/node-ws would print the stack): one JSON line, its class only. */
  const handlerFailed = {
    onError: (err: unknown) =>
      deps.log.error('websocket handler failed', { error: err instanceof Error ? err.name : typeof err }),
  };

  function mount(app: Hono<AgentEnv>, appDeps: AgentAppDeps): void {
    const nodeWs = createNodeWebSocket({ app });
    // @hono/node-ws creates its server without options; ws reads maxPayload from here at each upgrade
    (nodeWs.wss.options as { maxPayload?: number }).maxPayload = MAX_CLIENT_FRAME_BYTES;
    upgrade = createUpgradeListener({
      request: (url, init, env) => app.request(url, init, env),
      isStreamPath: (pathname) => STREAM_PATH_RE.test(pathname),
      wss: nodeWs.wss,
      accepted,
      log: deps.log,
    });
    const cancel = (sessionId: string) => async (turnId: string, reason: string | null) => {
      // exactly the REST cancel (turns/routes.ts), which names the session: a turn of one of this
      // session's workers (shown here with include_worker_sessions) is cancelled on the worker session
      const session = await requireOpenSession(appDeps.db, sessionId);
      const engine = appDeps.engine;
      if (!engine)
        throw new SvcError('not_implemented', { message: 'Turns are not implemented in this build.' });
      try {
        await engine.cancel(session.id, turnId, reason);
      } catch (err) {
        if (!(err instanceof SvcError && err.code === 'turn_not_found')) throw err;
        const worker = await workerSessionOfTurn(appDeps.db, session.id, turnId);
        if (worker === undefined) throw err;
        await engine.cancel(worker, turnId, reason);
      }
    };
    app.get(
      '/sessions/:session_id/stream',
      handshake(appDeps, accepted),
      nodeWs.upgradeWebSocket((c) => {
        const sessionId = c.req.param('session_id') as string;
        let conn: Connection | undefined;
        let detach: (() => void) | undefined;
        let gone: () => void = () => {};
        return {
          onOpen(_evt, ctx) {
            const ws = ctx.raw as WebSocket;
            explainLibraryCloses(ws);
            // a frame ws refuses (over 64 KiB, bad UTF-8, a bad opcode): ws closes the socket itself. Not
            // handed to @hono/node-ws's onError, which builds a DOM ErrorEvent Node 24 lacks and printed the
            // ReferenceError's stack on stderr for each one. Only the code: a frame's text never goes to the log.
            ws.on('error', (err: NodeJS.ErrnoException) =>
              deps.log.debug('websocket error', { session_id: sessionId, code: err.code ?? err.name }),
            );
            conn = createConnection({
              sessionId,
              socket: corkable(ws),
              fence: hub.lastEventId,
              settledFence: () => (hub.isIdle(sessionId) ? hub.lastEventId : undefined),
              lastPublished: () => hub.lastEventId,
              queueLimit: deps.queueLimit,
              pingIntervalMs: deps.pingIntervalMs,
              store: { db: appDeps.db, flush: deps.flush, nowMs: () => deps.clock.nowUs() / 1000 },
              cancel: cancel(sessionId),
              overflowed: overflowed(sessionId),
              newNonce: () => deps.newId(),
              log: deps.log,
            });
            detach = hub.attach(conn);
            sockets.set(conn, { ws, gone: new Promise<void>((r) => (gone = r)) });
          },
          onMessage(evt) {
            conn?.receive(evt.data);
          },
          onClose() {
            detach?.();
            if (conn) {
              conn.closed();
              sockets.delete(conn);
            }
            gone();
          },
        };
      }, handlerFailed),
    );
  }

  function endSession(sessionId: string): void {
    for (const conn of hub.clientsUnder(sessionId)) {
      const close = () => (conn as Connection).close('sessionEnded', 'the session ended', true);
      const timer = setTimeout(close, SESSION_END_WAIT_MS);
      hub.whenIdle(conn.sessionId, () => {
        clearTimeout(timer);
        close();
      });
    }
  }

  const subscriber: Subscriber = {
    name: hub.subscriber.name,
    handle(event) {
      hub.subscriber.handle(event);
      // a worker session is ended once its one turn is over (delegate.ts), before its delegate end event:
      // its own sockets close like a DELETEd session's instead of waiting for events that never come
      if (event.type === 'delegate.completed' || event.type === 'delegate.failed') {
        const worker = (event.payload as { worker_session_id?: unknown }).worker_session_id;
        if (typeof worker === 'string') endSession(worker);
      }
    },
  };

  return {
    subscriber,
    mount,
    get upgrade() {
      if (!upgrade) throw new Error('stream server not mounted');
      return upgrade;
    },
    endSession,
    async closeAll() {
      const all = [...sockets];
      for (const [conn] of all) conn.close('shuttingDown', 'the server is shutting down', true);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(all.map(([, s]) => s.gone)),
        new Promise((r) => (timer = setTimeout(r, SHUTDOWN_CLOSE_WAIT_MS))),
      ]);
      clearTimeout(timer);
      for (const [, s] of sockets) s.ws.terminate();
    },
    get size() {
      return sockets.size;
    },
  };
}

// --- internal ---

/** The closes `ws` makes itself on a frame it refuses, with the message their JSON reason carries. */
const LIBRARY_CLOSES = new Map<number, { kind: CloseKind; message: string }>([
  [CLOSE.tooLarge.code, { kind: 'tooLarge', message: `a frame above ${MAX_CLIENT_FRAME_BYTES} bytes` }],
  [CLOSE.invalidText.code, { kind: 'invalidText', message: 'a text frame that is not valid UTF-8' }],
  [
    CLOSE.protocolError.code,
    { kind: 'protocolError', message: 'a frame that breaks the WebSocket protocol' },
  ],
]);

/**
 * `ws` closes a connection whose frame it refuses itself (past maxPayload 1009, bad UTF-8 1007, a protocol
 * error 1002) with an empty reason; every other close of this server carries a JSON `{code, message}`
 * reason, so those get one too.
 */
function explainLibraryCloses(ws: WebSocket): void {
  const close = ws.close.bind(ws);
  ws.close = (code?: number, reason?: string | Buffer) => {
    const known = code === undefined ? undefined : LIBRARY_CLOSES.get(code);
    return close(
      code,
      known && (reason === undefined || reason.length === 0)
        ? closeReason(known.kind, known.message)
        : reason,
    );
  };
}

/** The socket with cork/uncork of its TCP socket (ws keeps it in `_socket`; without it, frames go one by one). */
function corkable(ws: WebSocket): ConnectionSocket {
  const tcp = (ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
  return {
    send: (data, options, cb) => ws.send(data, options, cb),
    close: (code, reason) => ws.close(code, reason),
    cork: tcp ? () => tcp.cork() : undefined,
    uncork: tcp ? () => tcp.uncork() : undefined,
  };
}

/** spec 2 §Authentication: 426 without an upgrade, 404 for an unknown session, 401/403 for the token. */
function handshake(deps: AgentAppDeps, accepted: WeakSet<IncomingMessage>): MiddlewareHandler<AgentEnv> {
  return async function streamHandshake(c, next) {
    if (c.req.header('upgrade')?.toLowerCase() !== 'websocket')
      throw new SvcError('upgrade_required', {
        message:
          'This path is the WebSocket stream: open it with a WebSocket client (ws_url of GET /sessions/{id}).',
      });
    const session = await requireSession(deps.db, c.req.param('session_id') as string);
    const token = c.req.query('attach') ?? '';
    const outcome = deps.attachTokens.consume(token, session.id);
    if (outcome === 'wrong_session')
      throw new SvcError('attach_token_wrong_session', {
        message: `The attach token was issued for another session; GET /sessions/${session.id} for one of this session.`,
      });
    if (outcome !== 'ok')
      throw new SvcError('invalid_attach_token', {
        message: `The attach token is ${token === '' ? 'missing' : outcome === 'expired' ? 'expired' : 'unknown or already used'}; GET /sessions/${session.id} for a fresh one (single use, 60 s).`,
      });
    const incoming = c.env.incoming;
    if (!incoming)
      throw new SvcError('upgrade_required', { message: 'WebSocket upgrades need the Node server.' });
    accepted.add(incoming);
    await next();
  };
}

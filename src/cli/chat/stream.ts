/**
 * @module The WebSocket side of `svc chat`: attach with a fresh token, subscribe with preset:chat (a snapshot
 * first, which gives the cursor), answer server pings, and after a dropped socket reconnect with `since` =
 * the last event id received, so the server's exactly-once rule holds across the drop. A cursor the server
 * cannot replay falls back to a snapshot.
 */
import WebSocket from 'ws';
import type { EventEnvelope } from '../../events/envelope.ts';
import { SvcError } from '../../lib/errors.ts';
import type { ChatApi } from './api.ts';

/** Reconnect attempts after a drop (backoff 250 ms doubling to 4 s: about a minute in all). */
const MAX_RECONNECTS = 18;
/** A socket whose upgrade or subscription gets no answer in this long is given up (as a REST call is). */
export const STREAM_ANSWER_TIMEOUT_MS = 30_000;

export interface ChatStreamHandlers {
  onEvent(event: EventEnvelope): void;
  /** The snapshot of the first subscription (session fields, recent messages). */
  onSnapshot(snapshot: { session: Record<string, unknown>; messages: unknown[] }): void;
  /**
   * A socket subscribed again after a drop: the replay (persisted events after the cursor) follows, but
   * the streaming events sent meanwhile are gone (never stored).
   */
  onResubscribed(): void;
  /** Something the user should know (reconnecting, reconnected). */
  onNotice(text: string): void;
  /** The stream is over for good (session ended, server gone, refused). */
  onFatal(err: SvcError): void;
}

export interface ChatStream {
  /** Resolves once the first subscription is acknowledged. */
  readonly ready: Promise<void>;
  /**
   * Resolves true while (or once) a socket is subscribed, false once the stream is over: a turn submitted
   * during a reconnect would stream its text to nobody (streaming events are never replayed).
   */
  live(): Promise<boolean>;
  close(): void;
}

export function openChatStream(api: ChatApi, sessionId: string, handlers: ChatStreamHandlers): ChatStream {
  let lastEventId: string | null = null;
  let ws: WebSocket | undefined;
  let closing = false;
  let attempts = 0;
  /** Why the last reconnect found no server (the API's sentence: its URL and what to check). */
  let unreachable: SvcError | undefined;
  let first = true;
  let markReady: () => void = () => {};
  let failReady: (err: SvcError) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  ready.catch(() => {});
  let subscribed = false;
  const liveWaiters: Array<(live: boolean) => void> = [];
  const setLive = (live: boolean) => {
    subscribed = live;
    if (live || closing) for (const w of liveWaiters.splice(0)) w(live);
  };
  const fatal = (err: SvcError) => {
    if (closing) return;
    closing = true;
    failReady(err);
    setLive(false);
    handlers.onFatal(err);
  };

  const subscribe = (socket: WebSocket, snapshot: boolean) =>
    socket.send(
      JSON.stringify({
        type: 'subscribe',
        filter: 'preset:chat',
        since: snapshot ? null : lastEventId,
        snapshot,
      }),
    );

  const onFrame = (socket: WebSocket, frame: Record<string, any>) => {
    switch (frame.type) {
      case 'event':
        lastEventId = frame.event.id;
        handlers.onEvent(frame.event);
        return;
      case 'snapshot':
        lastEventId = frame.snapshot_at_event_id ?? lastEventId;
        if (first) {
          // the first subscription asks for a snapshot: it comes right after the ack
          first = false;
          handlers.onSnapshot(frame as never);
          markReady();
        }
        return;
      case 'subscribe_ack':
        attempts = 0;
        if (!first) {
          handlers.onNotice('reconnected');
          handlers.onResubscribed();
        }
        setLive(true);
        return;
      case 'subscribe_error':
        if (frame.code === 'cursor_expired' || frame.code === 'replay_too_large') {
          handlers.onNotice('some events could not be replayed; continuing from now');
          subscribe(socket, true);
        } else
          fatal(
            new SvcError('io_error', { message: `The stream refused the subscription: ${frame.message}` }),
          );
        return;
      case 'ping':
        socket.send(JSON.stringify({ type: 'pong', nonce: frame.nonce }));
        return;
      case 'error':
        handlers.onNotice(`stream: ${frame.message}`);
        return;
    }
  };

  const reconnect = (why: string) => {
    if (closing) return;
    if (attempts >= MAX_RECONNECTS) {
      const detail = unreachable ? unreachable.message.replace(/\.$/, '') : why;
      return fatal(
        new SvcError('io_error', {
          message: `Lost the connection to the agent server for a minute (${detail}); once it answers again, resume with \`svc chat --session ${sessionId}\`.`,
        }),
      );
    }
    const delay = Math.min(4000, 250 * 2 ** attempts);
    attempts++;
    if (attempts === 1) handlers.onNotice(`connection lost (${why}); reconnecting`);
    setTimeout(() => void connect(), delay);
  };

  async function connect(): Promise<void> {
    let url: string;
    try {
      url = (await api.getSession(sessionId)).ws_url;
      unreachable = undefined;
    } catch (err) {
      const code = (err as SvcError).details?.code;
      if (code === 'session_not_found' || first) return fatal(err as SvcError);
      unreachable = err as SvcError;
      return reconnect('the server does not answer');
    }
    if (closing) return;
    const socket = new WebSocket(url);
    ws = socket;
    /** The status of an upgrade the server (or a proxy) answered with something else than 101. */
    let refusedStatus: number | undefined;
    // a server (or proxy) that takes the connection and never answers the upgrade or the subscribe would
    // hold the chat for ever: no prompt at start, no end to the minute of reconnects
    let silent = false;
    const answerTimer = setTimeout(() => {
      silent = true;
      socket.terminate();
    }, STREAM_ANSWER_TIMEOUT_MS);
    socket.on('open', () => subscribe(socket, first));
    socket.on('message', (data) => {
      clearTimeout(answerTimer);
      try {
        onFrame(socket, JSON.parse(data.toString()));
      } catch {
        handlers.onNotice('stream: a frame that is not JSON was ignored');
      }
    });
    socket.on('unexpected-response', (_req, res) => {
      refusedStatus = res.statusCode;
      res.resume();
      socket.terminate();
    });
    socket.on('error', () => {}); // 'close' follows and decides
    socket.on('close', (code, reason) => {
      clearTimeout(answerTimer);
      if (ws !== socket || closing) return;
      setLive(false);
      const why = silent
        ? `no answer within ${STREAM_ANSWER_TIMEOUT_MS / 1000} seconds`
        : refusedStatus !== undefined
          ? `HTTP ${refusedStatus}`
          : (closeCode(reason.toString()) ?? `code ${code}`);
      if (why === 'session_ended')
        return fatal(
          new SvcError('io_error', {
            message: `Session ${sessionId} was ended on the server (DELETE /sessions/${sessionId}); start a new one with \`svc chat\` (without --session).`,
          }),
        );
      // the server answered REST a moment ago: a stream that never opened is no drop to wait out for a minute
      if (first)
        return fatal(
          new SvcError('io_error', {
            message: `The session's stream ${withoutToken(url)} could not be opened (${why}); check that \`svc serve\` is running there and that a proxy in front of it passes WebSocket upgrades.`,
          }),
        );
      reconnect(why);
    });
  }

  void connect();
  return {
    ready,
    live() {
      if (closing) return Promise.resolve(false);
      if (subscribed) return Promise.resolve(true);
      return new Promise((resolve) => liveWaiters.push(resolve));
    },
    close() {
      closing = true;
      setLive(false);
      ws?.close(1000);
    },
  };
}

// --- internal ---

/** The socket's URL without its attach token (a credential, single use as it is). */
function withoutToken(url: string): string {
  return url.split('?')[0];
}

function closeCode(reason: string): string | undefined {
  try {
    const parsed = JSON.parse(reason) as { code?: unknown };
    return typeof parsed.code === 'string' ? parsed.code : undefined;
  } catch {
    return undefined;
  }
}

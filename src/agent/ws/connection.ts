/**
 * @module One attached WebSocket (spec 2 §WebSocket stream): its queue starts at accept; `subscribe` (first
 * frame) sends the ack and the snapshot or replay, then the queue is drained past the last id sent and the
 * connection goes live. Inbound frames are handled one after another, in the order received, and decoded
 * (errors answered with an `error` frame, never thrown),
 * `cancel` is the REST cancel, ping/pong run both ways with a server ping after each idle interval and a
 * close after three unanswered. A backlog above the queue limit closes with 1008 client_too_slow.
 */
import type { EventEnvelope } from '../../events/envelope.ts';
import { errorMessage, isSvcError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { isStoreUnreachable } from '../../store/dialect.ts';
import { getSession } from '../sessions/store.ts';
import type { CompiledFilter } from './filter.ts';
import {
  type CancelFrame,
  CLOSE,
  type CloseKind,
  closeReason,
  decodeClientFrame,
  encodeFrame,
  type FrameError,
  type ServerFrame,
  type SubscribeFrame,
} from './frames.ts';
import type { Delivery, HubClient } from './hub.ts';
import { createOutbox, type FrameSocket } from './outbox.ts';
import { runSubscribe, type SubscribeContext } from './subscribe.ts';

/** Unanswered server pings before the connection is closed (spec 2 §Limits). */
export const MAX_UNANSWERED_PINGS = 3;
/** How long a closing connection may take to send what it still has queued (shutdown, session end). */
export const CLOSE_DRAIN_MS = 2_000;

export interface ConnectionSocket extends FrameSocket {
  close(code: number, reason: string): void;
}

export interface ConnectionDeps {
  sessionId: string;
  socket: ConnectionSocket;
  /** The hub's last event id at accept. */
  fence: string | null;
  /** The hub's last event id now when the session has no turn in flight, else undefined. */
  settledFence(): string | null | undefined;
  /** The hub's last event id now. */
  lastPublished(): string | null;
  queueLimit: number;
  pingIntervalMs: number;
  store: Pick<SubscribeContext, 'db' | 'flush' | 'nowMs'>;
  /** The REST cancel of this session's turn; throws its SvcError. */
  cancel(turnId: string, reason: string | null): Promise<void>;
  /**
   * The backlog overflowed at `event`, or with answers to the client's own frames (null), and the connection
   * was closed: bus.handler_warning is published for it (spec 2: a slow client triggers one).
   */
  overflowed(event: EventEnvelope | null, queued: number): void;
  newNonce(): string;
  log: Logger;
}

export interface Connection extends HubClient {
  /** One inbound message (text, or binary which is refused). */
  receive(data: unknown): void;
  /** Closes with one of the server's close codes; `drain` first sends what is queued (bounded). */
  close(kind: CloseKind, message: string, drain: boolean): void;
  /** The socket closed (either side): stop timers, drop the queue. */
  closed(): void;
}

type State = 'awaiting' | 'subscribing' | 'live' | 'closing' | 'closed';

export function createConnection(deps: ConnectionDeps): Connection {
  const outbox = createOutbox(deps.socket);
  let state: State = 'awaiting';
  let pending: Array<{ delivery: Delivery; encoded: () => Buffer }> = [];
  let filter: CompiledFilter | undefined;
  let lastSentId: string | null = null;
  let heardSinceTick = false;
  /** Frames other than pings went out since the last tick: the connection was not idle. */
  let sentSinceTick = false;
  let unanswered = 0;

  const send = (frame: ServerFrame) => {
    sentSinceTick = true;
    outbox.push(encodeFrame(frame), false);
  };
  const backlog = () => pending.length + outbox.liveQueued;
  /**
   * A frame answering one of the client's (pong, error): it counts against the queue limit like an event,
   * so a client that sends without reading (a ping flood) is closed as too slow instead of growing the queue.
   */
  const answer = (frame: ServerFrame) => {
    if (backlog() >= deps.queueLimit) {
      const queued = backlog();
      self.close('tooSlow', `more than ${deps.queueLimit} frames queued; reconnect with since`, false);
      return deps.overflowed(null, queued);
    }
    sentSinceTick = true;
    outbox.push(encodeFrame(frame), true);
  };
  const sendError = (e: FrameError) => answer({ type: 'error', code: e.code, message: e.message });

  // spec 2: a ping per interval when idle, i.e. nothing heard and nothing sent (a client that only reads a
  // busy stream is not pinged; one that stops reading is closed by the queue limit instead)
  const heartbeat = setInterval(() => {
    if (heardSinceTick || sentSinceTick) {
      heardSinceTick = false;
      sentSinceTick = false;
      unanswered = 0;
      return;
    }
    if (unanswered >= MAX_UNANSWERED_PINGS) {
      self.close('heartbeat', `${MAX_UNANSWERED_PINGS} pings went unanswered`, false);
      return;
    }
    unanswered++;
    outbox.push(encodeFrame({ type: 'ping', nonce: deps.newNonce() }), false); // not traffic of its own
  }, deps.pingIntervalMs);

  const subscribeContext: SubscribeContext = {
    ...deps.store,
    sessionId: deps.sessionId,
    fence: deps.fence,
    settledFence: deps.settledFence,
    lastPublished: deps.lastPublished,
    // a refused subscribe answers the client's frame (it may be sent again and again); the rest is bounded
    send: (frame) => (frame.type === 'subscribe_error' ? answer(frame) : send(frame)),
    drained: () => outbox.drained(),
    isOpen: () => state === 'subscribing',
  };

  async function subscribe(frame: SubscribeFrame): Promise<void> {
    state = 'subscribing';
    let outcome: Awaited<ReturnType<typeof runSubscribe>>;
    try {
      outcome = await runSubscribe(subscribeContext, frame);
    } catch (err) {
      deps.log.error('subscribe failed', { session_id: deps.sessionId, message: errorMessage(err) });
      outcome = { ok: false };
      if (state === 'subscribing') sendError(failureFrame(err, 'the subscription failed'));
    }
    if (state !== 'subscribing') return;
    if (!outcome.ok) {
      state = 'awaiting'; // the client may subscribe again (with snapshot: true); the queue keeps filling
      return;
    }
    filter = outcome.filter;
    lastSentId = outcome.lastSentId;
    const queued = pending;
    pending = [];
    state = 'live';
    for (const { delivery, encoded } of queued) forward(delivery, encoded);
    // an ended session sends nothing more: what was asked for went out, then the close a live one gets
    // (a session ended after this read is closed by DELETE's own endSession)
    if ((await getSession(deps.store.db, deps.sessionId))?.ended_at)
      self.close('sessionEnded', 'the session ended', true);
  }

  /** Live: the filter decides; ids at or below the last one sent were replayed already (the seam rule). */
  function forward(delivery: Delivery, encoded: () => Buffer): void {
    if (lastSentId !== null && delivery.event.id <= lastSentId) return;
    if (!filter!.matches(delivery.event, delivery.fromWorker)) return;
    sentSinceTick = true;
    outbox.push(encoded(), true);
  }

  async function cancel(frame: CancelFrame): Promise<void> {
    try {
      await deps.cancel(frame.turn_id, frame.reason ?? null);
    } catch (err) {
      if (state === 'closing' || state === 'closed') return;
      if (isSvcError(err)) sendError({ code: err.code, message: err.message });
      else {
        deps.log.error('cancel frame failed', { session_id: deps.sessionId, message: errorMessage(err) });
        sendError(failureFrame(err, 'the cancel failed'));
      }
    }
  }

  /** One inbound frame, answered once the frames before it were (subscribe and cancel are awaited). */
  async function handle(data: unknown): Promise<void> {
    if (state === 'closing' || state === 'closed') return;
    if (typeof data !== 'string')
      return sendError({ code: 'invalid_frame', message: 'frames are JSON text, not binary' });
    const decoded = decodeClientFrame(data);
    if ('error' in decoded) return sendError(decoded.error);
    const frame = decoded.frame;
    switch (frame.type) {
      case 'ping':
        return answer({ type: 'pong', nonce: frame.nonce });
      case 'pong':
        return;
      case 'subscribe':
        if (state !== 'awaiting')
          return sendError({ code: 'already_subscribed', message: 'this connection already subscribed' });
        return subscribe(frame);
      case 'cancel':
        if (state === 'awaiting')
          return sendError({ code: 'subscribe_required', message: 'send subscribe first' });
        return cancel(frame);
    }
  }

  // spec 2: frames are answered in the order received, so each waits for the one before it; frames waiting
  // count against the queue limit (a client that floods them while a subscription replays is too slow)
  let inbox: Promise<void> = Promise.resolve();
  let waiting = 0;

  const self: Connection = {
    sessionId: deps.sessionId,
    deliver(delivery, encoded) {
      if (state === 'closing' || state === 'closed') return;
      if (backlog() >= deps.queueLimit) {
        const queued = backlog();
        // closed first: the warning published next reaches this session's connections, this one included
        self.close('tooSlow', `more than ${deps.queueLimit} events queued; reconnect with since`, false);
        deps.overflowed(delivery.event, queued);
        return;
      }
      if (state === 'live') forward(delivery, encoded);
      else pending.push({ delivery, encoded });
    },
    receive(data) {
      if (state === 'closing' || state === 'closed') return;
      heardSinceTick = true;
      if (waiting + backlog() >= deps.queueLimit) {
        const queued = waiting + backlog();
        self.close('tooSlow', `more than ${deps.queueLimit} frames queued; reconnect with since`, false);
        return deps.overflowed(null, queued);
      }
      waiting++;
      inbox = inbox
        .then(() => handle(data))
        .catch((err) =>
          deps.log.error('frame handling failed', { session_id: deps.sessionId, message: errorMessage(err) }),
        )
        .finally(() => {
          waiting--;
        });
    },
    close(kind, message, drain) {
      if (state === 'closing' || state === 'closed') return;
      state = 'closing';
      clearInterval(heartbeat);
      pending = [];
      const { code } = CLOSE[kind];
      const finish = () => deps.socket.close(code, closeReason(kind, message));
      if (!drain) {
        outbox.drop();
        return finish();
      }
      const timer = setTimeout(() => outbox.drop(), CLOSE_DRAIN_MS);
      void outbox.drained().then(() => {
        clearTimeout(timer);
        finish();
      });
    },
    closed() {
      state = 'closed';
      clearInterval(heartbeat);
      pending = [];
      outbox.drop();
    },
  };
  return self;
}

// --- internal ---

/** The error frame for a subscribe or cancel that failed: store_unavailable while the store is away. */
function failureFrame(err: unknown, message: string): FrameError {
  return isStoreUnreachable(err)
    ? {
        code: 'store_unavailable',
        message: `${message}: the trace store cannot be reached; try again shortly`,
      }
    : { code: 'internal_error', message };
}

/**
 * @module A connection's outbound frames: handed to the socket while less than a window of bytes is unsent
 * (the send callback says when the kernel took them), the rest kept here in order. Frames queued in one turn
 * of the event loop leave together (corked: one write instead of one per frame, which is what lets a
 * connection catch up after a pause). Live events waiting here are counted, so the connection can close a
 * client whose backlog passes the queue limit; snapshot and replay frames are not (the replay is paged).
 */

/** Bytes handed to the socket and not yet written out, per connection. */
export const SEND_WINDOW_BYTES = 256 * 1024;
/** A corked batch is written out once it holds this much, without waiting for the end of the turn. */
export const BATCH_BYTES = 64 * 1024;

/** What the outbox needs of a WebSocket (the `ws` package's WebSocket has it). */
export interface FrameSocket {
  send(data: Buffer, options: { binary: boolean }, cb: (err?: Error) => void): void;
  /** Holds writes until `uncork` (optional: without it each frame is its own write). */
  cork?(): void;
  uncork?(): void;
}

export interface Outbox {
  /** Queues one text frame; `live` counts it against the queue limit until it is handed to the socket. */
  push(data: Buffer, live: boolean): void;
  /** Live frames not yet handed to the socket. */
  readonly liveQueued: number;
  /** Resolves once every queued frame was handed to the socket and written (or the outbox was dropped). */
  drained(): Promise<void>;
  /** Forgets every queued frame (a closing connection). */
  drop(): void;
}

export function createOutbox(socket: FrameSocket): Outbox {
  let items: Array<{ data: Buffer; live: boolean } | undefined> = [];
  let head = 0;
  let unsentBytes = 0;
  let liveQueued = 0;
  let dropped = false;
  let corked = false;
  let batched = 0;
  let waiters: Array<() => void> = [];

  const settle = () => {
    if (head < items.length || unsentBytes > 0) return;
    for (const w of waiters.splice(0)) w();
  };

  /** Hands frames to the socket while the window allows; the rest stay queued here. */
  const send = () => {
    while (!dropped && head < items.length && unsentBytes < SEND_WINDOW_BYTES) {
      const item = items[head]!;
      items[head++] = undefined;
      if (item.live) liveQueued--;
      const size = item.data.length;
      unsentBytes += size;
      socket.send(item.data, { binary: false }, () => {
        unsentBytes -= size;
        pump();
      });
    }
    if (head === items.length) {
      items = [];
      head = 0;
    } else if (head > 1024) {
      items = items.slice(head);
      head = 0;
    }
    settle();
  };

  /** After a write completed: what the window now allows, as one write. */
  const pump = () => {
    if (dropped || head === items.length) return settle();
    socket.cork?.();
    send();
    socket.uncork?.();
  };

  const uncork = () => {
    if (!corked) return;
    corked = false;
    batched = 0;
    socket.uncork?.();
  };

  return {
    push(data, live) {
      if (dropped) return;
      items.push({ data, live });
      if (live) liveQueued++;
      // frames pushed in one turn of the event loop leave in one write
      if (!corked && socket.cork) {
        corked = true;
        socket.cork();
        setImmediate(uncork);
      }
      send();
      batched += data.length;
      if (batched >= BATCH_BYTES) {
        // a burst: write what is batched now, so the socket's write callbacks keep the window moving
        uncork();
      }
    },
    get liveQueued() {
      return liveQueued;
    },
    drained() {
      if (dropped || (head === items.length && unsentBytes === 0)) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    drop() {
      dropped = true;
      items = [];
      head = 0;
      liveQueued = 0;
      const w = waiters;
      waiters = [];
      for (const fn of w) fn();
    },
  };
}

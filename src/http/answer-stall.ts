/**
 * @module A client that takes none of an answer already handed to its socket (its receive window full, the
 * connection left open) would hold the answer's bytes in memory for as long as it stays connected: Node
 * sets no write timeout. Once the answer is handed over, its socket is looked at every `stallMs`; when the
 * bytes still waiting for the kernel have not gone down since the last look, the connection is closed.
 * An answer the kernel took whole (`finish`) or a closed connection ends the watch.
 */
import type { ServerResponse } from 'node:http';

export function cutOffWhenStalled(
  outgoing: ServerResponse | undefined,
  stallMs: number,
  onCut: () => void,
): void {
  if (!outgoing || outgoing.writableFinished) return;
  let waiting = -1;
  const look = () => {
    const socket = outgoing.socket;
    if (outgoing.writableFinished || !socket || socket.destroyed) return;
    const now = socket.writableLength;
    if (now > 0 && now === waiting) {
      onCut();
      socket.destroy();
      return;
    }
    waiting = now;
    timer.refresh();
  };
  const timer = setTimeout(look, stallMs);
  timer.unref();
  const stop = () => clearTimeout(timer);
  outgoing.once('finish', stop);
  outgoing.once('close', stop);
}

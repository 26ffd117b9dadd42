/**
 * @module The first event of a 2xx stream, read before the caller gets the body (so before the gateway
 * commits its own 200): an upstream that answers 200 and then an error as its first event (Anthropic's
 * `overloaded_error`) failed before any byte reached the client, so the call is retried or answered with
 * the HTTP error an SDK can retry (DECISIONS §4, wire-formats §4). The bytes read are put back in front of
 * the body, which is then read exactly as before.
 */
import type { Readable } from 'node:stream';
import { createSseDecoder, type SseEvent } from '../lib/sse-decode.ts';

/** How far to look for the first event; an event larger than this is not peeked at. */
export const PEEK_MAX_BYTES = 64 * 1024;

/**
 * The first SSE event with data in `body`, or null when the body ends or passes `maxBytes` first, or
 * opens with a comment line: an upstream that keeps the connection alive that way while it works
 * (OpenRouter's `: OPENROUTER PROCESSING`) has started, and its client should get the answer's head now
 * rather than after the wait. Throws what the body throws (a reset, the idle timeout, an abort).
 */
export async function peekFirstEvent(body: Readable, maxBytes = PEEK_MAX_BYTES): Promise<SseEvent | null> {
  const decoder = createSseDecoder();
  const read: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const chunk = body.read() as Buffer | null;
      if (chunk === null) {
        if (body.readableEnded || body.destroyed) return null;
        await readableOrEnd(body);
        continue;
      }
      if (size === 0 && startsWithComment(chunk)) {
        read.push(chunk);
        size += chunk.length;
        return null;
      }
      read.push(chunk);
      size += chunk.length;
      const events = decoder.push(chunk);
      if (events.length > 0) return events[0]!;
      if (size >= maxBytes) return null;
    }
  } finally {
    // a body that ended or failed while peeking is read as such by the caller anyway
    if (read.length > 0 && !body.readableEnded && !body.destroyed)
      body.unshift(read.length === 1 ? read[0] : Buffer.concat(read, size));
  }
}

// --- internal ---

/** The first line is an SSE comment (`:`), after a UTF-8 byte order mark if any. */
function startsWithComment(chunk: Buffer): boolean {
  const at = chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
  return chunk[at] === 0x3a;
}

function readableOrEnd(body: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      off();
      resolve();
    };
    const failed = (err: unknown) => {
      off();
      reject(err);
    };
    const off = () => {
      body.off('readable', done);
      body.off('end', done);
      body.off('close', done);
      body.off('error', failed);
    };
    body.once('readable', done);
    body.once('end', done);
    body.once('close', done);
    body.once('error', failed);
  });
}

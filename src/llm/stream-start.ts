/**
 * @module The first event of a 2xx stream, read before the caller gets the body (so before the gateway
 * commits its own 200): an upstream that answers 200 and then an error as its first event (Anthropic's
 * `overloaded_error`) failed before any byte reached the client, so the call is retried or answered with
 * the HTTP error an SDK can retry (DECISIONS §4, wire-formats §4). The bytes read are handed back in front
 * of the body, which is then read exactly as before.
 */
import { Readable } from 'node:stream';
import { createSseDecoder, type SseEvent } from '../lib/sse-decode.ts';

/** How far to look for the first event; an event larger than this is not peeked at. */
export const PEEK_MAX_BYTES = 64 * 1024;
/** How long to wait for it: an upstream still silent after this has its answer's head sent on. */
export const PEEK_MAX_WAIT_MS = 10_000;
/**
 * How long to wait for the event after a first one that another completes (the Responses API's `error`,
 * then `response.failed` with the usage of what it read), which the API sends at once: an upstream that
 * sends nothing more within this is answered on its first event alone.
 */
export const PEEK_FOLLOW_MAX_WAIT_MS = 1_000;
/**
 * How far to look, at least, on a wire that opens with preamble events: the Responses API's
 * `response.created` and `response.in_progress` each repeat the request's instructions and tools (Codex
 * sends tens of KiB of them), and an overload error after them must still be seen before the client's 200.
 * A larger request looks further (preamblePeekBytes).
 */
export const PEEK_PREAMBLE_MAX_BYTES = 8 * 1024 * 1024;
/**
 * How many times the request's size the preamble can take: two events repeating what it sent, each echoed
 * text up to three times its request bytes once the upstream writes non-ASCII characters as \u escapes.
 */
const PREAMBLE_REQUEST_FACTOR = 6;

/**
 * How far to look past the preamble for a request of `requestBytes`: the preamble repeats the request, so
 * it is bounded by its size (PREAMBLE_REQUEST_FACTOR times it, PEEK_PREAMBLE_MAX_BYTES at least), and each
 * of its two events by the SSE event limit `maxEventBytes` (SVC_GATEWAY_MAX_SSE_LINE_BYTES: a larger one
 * fails the stream anyway), so what the look holds is never more than two such events and the first event
 * after them.
 */
export function preamblePeekBytes(requestBytes: number, maxEventBytes: number): number {
  const scaled = Math.max(PEEK_PREAMBLE_MAX_BYTES, PREAMBLE_REQUEST_FACTOR * requestBytes + PEEK_MAX_BYTES);
  // an event's data plus its `event:` line and framing
  const events = 2 * (maxEventBytes + 1024) + PEEK_MAX_BYTES;
  return Math.min(scaled, events);
}

export interface Peeked {
  /** The first SSE event with data, or null (none within the limits, or the body opened with a comment). */
  first: SseEvent | null;
  /**
   * The event right after `first` when `follow` asked for it and it arrived within the limits (the byte
   * bound, the wait, PEEK_FOLLOW_MAX_WAIT_MS), or null.
   */
  next: SseEvent | null;
  /** The body ended before it held any event: no event stream at all (a JSON answer, a proxy's page). */
  noEvents: boolean;
  /** `maxWaitMs` passed before the first event (not a comment, a size limit or the body's end). */
  waitedOut: boolean;
  /**
   * An event up to and including `first` (the preamble's too) whose data is not JSON, with the parser's
   * error: the stream is unreadable before anything of it could reach the client. Only events up to
   * UNREADABLE_CHECK_MAX_CHARS are looked at (a longer one is the stream decoder's to report).
   */
  unreadable?: SyntaxError;
  /** The body to read from now on: `body` with the bytes read put back, or a copy of them if it ended. */
  body: Readable;
}

/**
 * Looks for the first SSE event with data in `body`, past the events `preamble` names (the Responses API's
 * `response.created` / `response.in_progress`, which state nothing yet: its overload error comes after
 * them). Gives up (first: null) past `maxBytes` (`preambleMaxBytes` on a wire with a preamble), after
 * `maxWaitMs`, or when the body opens with a comment line: an upstream that keeps the connection alive
 * that way while it works (OpenRouter's `: OPENROUTER PROCESSING`) has started, and its client should get
 * the answer's head now rather than after the wait. A body that ends first yields its last event even
 * without the blank line after it, and one that ends without any event says so (`noEvents`). A first event
 * `follow` names is read with the one right after it (`next`), waited for at most PEEK_FOLLOW_MAX_WAIT_MS
 * (`followMaxWaitMs`) and within the same limits; nothing past that. Throws what the body throws (a reset,
 * the idle timeout, an abort).
 */
export async function peekFirstEvent(
  body: Readable,
  maxBytes = PEEK_MAX_BYTES,
  maxWaitMs = PEEK_MAX_WAIT_MS,
  preamble?: (e: SseEvent) => boolean,
  preambleMaxBytes = PEEK_PREAMBLE_MAX_BYTES,
  follow?: (first: SseEvent) => boolean,
  followMaxWaitMs = PEEK_FOLLOW_MAX_WAIT_MS,
): Promise<Peeked> {
  // until the first event past the preamble, which is all such a wire sends first
  const cap = preamble ? Math.max(maxBytes, preambleMaxBytes) : maxBytes;
  const decoder = createSseDecoder();
  const read: Buffer[] = [];
  let size = 0;
  // the events past the preamble: the first, and the one after it when `follow` asks for it
  const seen: SseEvent[] = [];
  let events = 0;
  let ended = false;
  let waitedOut = false;
  let unreadable: SyntaxError | undefined;
  const take = (decoded: SseEvent[]) => {
    events += decoded.length;
    for (const e of decoded) {
      // every event up to the first is read whatever the chunking: checking those alone is deterministic
      if (seen.length === 0 && unreadable === undefined) unreadable = unreadableData(e.data);
      if (seen.length > 0 || !preamble?.(e)) seen.push(e);
    }
  };
  let deadline = Date.now() + maxWaitMs;
  let following = false;
  // done once the first event is in, and the one after it when the first asks for it
  const done = (): boolean => {
    if (seen.length === 0) return false;
    if (following || !follow?.(seen[0]!)) return !following || seen.length > 1;
    following = true;
    deadline = Math.min(deadline, Date.now() + followMaxWaitMs);
    return seen.length > 1;
  };
  try {
    for (;;) {
      const chunk = body.read() as Buffer | null;
      if (chunk === null) {
        if (body.readableEnded || body.destroyed) {
          ended = true;
          take(decoder.end());
          break;
        }
        if (!(await readableOrEnd(body, deadline - Date.now()))) {
          waitedOut = !following; // waited long enough (for the event after the first: it has none)
          break;
        }
        continue;
      }
      read.push(chunk);
      size += chunk.length;
      if (size === chunk.length && startsWithComment(chunk)) break;
      take(decoder.push(chunk));
      if (done() || size >= cap) break;
    }
  } catch (err) {
    if (read.length > 0 && !body.readableEnded && !body.destroyed) body.unshift(Buffer.concat(read, size));
    throw err;
  }
  const first = seen[0] ?? null;
  const next = first !== null && (following || follow?.(first)) ? (seen[1] ?? null) : null;
  const noEvents = ended && events === 0;
  const found = { first, next, noEvents, waitedOut, ...(unreadable ? { unreadable } : {}) };
  const bytes = read.length === 1 ? read[0]! : Buffer.concat(read, size);
  if (size === 0) return { ...found, body };
  // an ended stream takes no bytes back: the reader gets a copy of them instead
  if (ended || body.readableEnded) return { ...found, body: Readable.from([bytes], { objectMode: false }) };
  body.unshift(bytes);
  return { ...found, body };
}

// --- internal ---

/**
 * Events up to this many characters are parsed by the look: the usual first events (message_start, a role
 * chunk, response.created) are a few hundred. A longer one (a Responses preamble repeating a large request's
 * instructions and tools) is left to the stream decoder, which reports it mid-stream, rather than parsed twice.
 */
const UNREADABLE_CHECK_MAX_CHARS = 65_536;

/** The parser's error when an event's data is not JSON (`[DONE]`, the OpenAI wire's end, is not data). */
function unreadableData(data: string): SyntaxError | undefined {
  if (data === '[DONE]' || data.trim() === '' || data.length > UNREADABLE_CHECK_MAX_CHARS) return undefined;
  try {
    JSON.parse(data);
    return undefined;
  } catch (err) {
    return err instanceof SyntaxError ? err : new SyntaxError(String(err));
  }
}

/** The first line is an SSE comment (`:`), after a UTF-8 byte order mark if any. */
function startsWithComment(chunk: Buffer): boolean {
  const at = chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
  return chunk[at] === 0x3a;
}

/** Resolves true when `body` has data or ended, false when `ms` passed first; rejects on its error. */
function readableOrEnd(body: Readable, ms: number): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(false);
  return new Promise((resolve, reject) => {
    const done = () => {
      off();
      resolve(true);
    };
    const failed = (err: unknown) => {
      off();
      reject(err);
    };
    const timer = setTimeout(() => {
      off();
      resolve(false);
    }, ms);
    const off = () => {
      clearTimeout(timer);
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

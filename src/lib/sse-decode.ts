/**
 * @module Layered server-sent-events decoder: bytes → lines → events. Robust to chunks split at any byte
 * (inside multi-byte UTF-8 characters and between `\r` and `\n`). Comment lines (`: OPENROUTER PROCESSING`)
 * are dropped, never turned into data (wire-formats §6 #23). Lines are cut on bytes (CR and LF never occur
 * inside a UTF-8 sequence), each byte is scanned once, and an unfinished line is kept as its chunks, so a
 * line of many megabytes costs linear time (issue 17: it was quadratic), up to a cap on its length.
 */
import { SvcError } from './errors.ts';

export interface SseEvent {
  /** The `event:` field; undefined when the event had none (OpenAI chunks). */
  event: string | undefined;
  /** `data:` lines joined with `\n`. */
  data: string;
  id: string | undefined;
}

export interface SseDecoderOptions {
  /** Longest line, and longest data of one event, in bytes; beyond it push() throws. Default: no limit. */
  maxLineBytes?: number;
}

/** Push-based decoder for callers that own the byte loop (the passthrough tap). */
export interface SseDecoder {
  /** Feeds bytes; returns the events completed by them. Throws SvcError('upstream_error') past the cap. */
  push(chunk: Uint8Array): SseEvent[];
  /** Flushes a final event not followed by a blank line. */
  end(): SseEvent[];
}

export function createSseDecoder(options: SseDecoderOptions = {}): SseDecoder {
  const max = options.maxLineBytes ?? Number.POSITIVE_INFINITY;
  /** The chunks (or their tails) of the line not ended yet, and their total size. */
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  // a `\r` ended the previous chunk: a leading `\n` in the next one belongs to it
  let pendingCr = false;
  let started = false;
  let event: string | undefined;
  let data: string | undefined;
  let dataBytes = 0;
  let id: string | undefined;

  const line = (bytes: Buffer, start: number, end: number, out: SseEvent[]) => {
    const size = pendingBytes + end - start;
    if (size === 0) {
      started = true;
      if (data !== undefined) out.push({ event, data, id });
      event = undefined;
      data = undefined;
      dataBytes = 0;
      return;
    }
    if (size > max) throw tooLong(max);
    let text =
      pendingBytes === 0 ? bytes.toString('utf8', start, end) : joinedText(pending, bytes, start, end);
    pending = [];
    pendingBytes = 0;
    if (!started) {
      started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a BOM opens the stream (WHATWG SSE)
    }
    const colon = text.indexOf(':');
    if (colon === 0) return; // comment
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      dataBytes += size;
      if (dataBytes > max) throw tooLong(max);
      data = data === undefined ? value : `${data}\n${value}`;
    } else if (field === 'event') event = value;
    else if (field === 'id') id = value;
  };

  return {
    push(chunk) {
      const out: SseEvent[] = [];
      const buf = bufferOf(chunk);
      const len = chunk.length;
      let pos = 0;
      if (pendingCr && len > 0) {
        if (chunk[0] === LF) pos = 1;
        pendingCr = false;
      }
      // positions are cached so a chunk of many lines is scanned once, not once per line
      let lf = chunk.indexOf(LF, pos);
      let cr = chunk.indexOf(CR, pos);
      while (pos < len) {
        if (lf !== -1 && lf < pos) lf = chunk.indexOf(LF, pos);
        if (cr !== -1 && cr < pos) cr = chunk.indexOf(CR, pos);
        let end: number;
        let next: number;
        if (cr >= 0 && (lf < 0 || cr < lf)) {
          end = cr;
          if (cr + 1 === len) {
            pendingCr = true;
            next = len;
          } else next = chunk[cr + 1] === LF ? cr + 2 : cr + 1;
        } else if (lf >= 0) {
          end = lf;
          next = lf + 1;
        } else break;
        line(buf, pos, end, out);
        pos = next;
      }
      if (pos < len) {
        pendingBytes += len - pos;
        if (pendingBytes > max) throw tooLong(max);
        pending.push(new Uint8Array(buf.subarray(pos))); // a copy: the caller may reuse its buffer
      }
      return out;
    },
    end() {
      const out: SseEvent[] = [];
      if (pendingBytes > 0) line(EMPTY, 0, 0, out);
      line(EMPTY, 0, 0, out);
      return out;
    },
  };
}

/** Decodes an SSE byte stream (e.g. an undici response body) into events. */
export async function* decodeSse(
  body: AsyncIterable<Uint8Array>,
  options: SseDecoderOptions = {},
): AsyncGenerator<SseEvent> {
  const decoder = createSseDecoder(options);
  for await (const chunk of body) yield* decoder.push(chunk);
  yield* decoder.end();
}

// --- internal ---

const LF = 10;
const CR = 13;
const EMPTY = Buffer.alloc(0);

/** A Buffer over the same memory (Buffer's UTF-8 slicing is the fastest decode of one line). */
function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function joinedText(pending: Uint8Array[], bytes: Buffer, start: number, end: number): string {
  const parts = start === end ? pending : [...pending, bytes.subarray(start, end)];
  return Buffer.concat(parts).toString('utf8');
}

function tooLong(max: number): SvcError {
  return new SvcError('upstream_error', {
    message: `the upstream sent an event-stream line or event longer than ${max} bytes`,
    details: { error_class: 'server_error' },
  });
}

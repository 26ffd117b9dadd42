/**
 * @module Layered server-sent-events decoder: bytes → lines → events. Robust to chunks split at any byte
 * (inside multi-byte UTF-8 characters and between `\r` and `\n`). Comment lines (`: OPENROUTER PROCESSING`)
 * are dropped, never turned into data (wire-formats §6 #23).
 */

export interface SseEvent {
  /** The `event:` field; undefined when the event had none (OpenAI chunks). */
  event: string | undefined;
  /** `data:` lines joined with `\n`. */
  data: string;
  id: string | undefined;
}

/** Push-based decoder for callers that own the byte loop (the passthrough tap). */
export interface SseDecoder {
  /** Feeds bytes; returns the events completed by them. */
  push(chunk: Uint8Array): SseEvent[];
  /** Flushes a final event not followed by a blank line. */
  end(): SseEvent[];
}

export function createSseDecoder(): SseDecoder {
  const utf8 = new TextDecoder('utf-8');
  let buf = '';
  // a `\r` ended the previous chunk: a leading `\n` in the next one belongs to it
  let pendingCr = false;
  let event: string | undefined;
  let data: string | undefined;
  let id: string | undefined;

  const line = (text: string, out: SseEvent[]) => {
    if (text === '') {
      if (data !== undefined) out.push({ event, data, id });
      event = undefined;
      data = undefined;
      return;
    }
    const colon = text.indexOf(':');
    if (colon === 0) return; // comment
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
    else if (field === 'event') event = value;
    else if (field === 'id') id = value;
  };

  const drain = (out: SseEvent[]) => {
    let pos = 0;
    const len = buf.length;
    if (pendingCr && len > 0) {
      if (buf.charCodeAt(0) === 10) pos = 1;
      pendingCr = false;
    }
    // positions are cached so a chunk of many lines is scanned once, not once per line
    let nl = buf.indexOf('\n', pos);
    let cr = buf.indexOf('\r', pos);
    while (pos < len) {
      if (nl !== -1 && nl < pos) nl = buf.indexOf('\n', pos);
      if (cr !== -1 && cr < pos) cr = buf.indexOf('\r', pos);
      let end: number;
      let next: number;
      if (cr >= 0 && (nl < 0 || cr < nl)) {
        end = cr;
        if (cr + 1 === len) {
          pendingCr = true;
          next = len;
        } else next = buf.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (nl >= 0) {
        end = nl;
        next = nl + 1;
      } else break;
      line(buf.slice(pos, end), out);
      pos = next;
    }
    buf = pos === 0 ? buf : buf.slice(pos);
  };

  return {
    push(chunk) {
      const out: SseEvent[] = [];
      buf += utf8.decode(chunk, { stream: true });
      drain(out);
      return out;
    },
    end() {
      const out: SseEvent[] = [];
      buf += utf8.decode();
      drain(out);
      if (buf !== '') line(buf, out);
      buf = '';
      line('', out);
      return out;
    },
  };
}

/** Decodes an SSE byte stream (e.g. an undici response body) into events. */
export async function* decodeSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = createSseDecoder();
  for await (const chunk of body) yield* decoder.push(chunk);
  yield* decoder.end();
}

/**
 * @module Same-shape fast path for streams: upstream bytes go to the client unchanged while an SSE decoder
 * and the adapter's stream decoder observe them on the side (usage, stop reason, TTFT). When frames must
 * change (model echo, dropping an unrequested usage chunk), it switches to frame mode and re-emits each
 * event's lines, editing JSON text in place rather than re-serialising it. In frame mode an event the
 * decoder cannot read (invalid JSON: not an upstream error frame, which the decoder throws as an SvcError)
 * is not re-emitted, nor anything after it, so the caller's error frame is the first thing a client's SDK
 * fails on rather than a SyntaxError of its own; nor is an upstream error frame refusing the gateway's key.
 */
import type { CanonicalStreamEvent } from '../canonical/stream.ts';
import { isSvcError } from '../lib/errors.ts';
import { createSseDecoder, type SseEvent } from '../lib/sse-decode.ts';
import type { StreamDecoder, TapOptions, TappedStream } from './adapter.ts';

/** Returns the frame text for an event, or null to drop it. */
export type FrameRewriter = (e: SseEvent) => string | null;

export function tapSse(
  body: AsyncIterable<Uint8Array>,
  decoder: StreamDecoder,
  rewrite: FrameRewriter | undefined,
  opts: TapOptions = {},
): TappedStream {
  let completed: CanonicalStreamEvent | undefined;
  let error: Error | undefined;
  /** The event the decoder could not read (not an upstream error frame): it and what follows are not re-emitted. */
  let unreadable: SseEvent | undefined;
  const observe = (events: CanonicalStreamEvent[]) => {
    for (const c of events) {
      if (c.type === 'message.complete') completed = c;
      opts.onEvent?.(c);
    }
  };
  const feed = (events: SseEvent[]) => {
    for (const ev of events) {
      if (error) return;
      try {
        observe(decoder.push(ev));
        opts.onFrame?.(ev);
      } catch (err) {
        error = err as Error;
        // the provider's own words about the gateway's key (OpenAI quotes a masked fragment of it) are
        // not forwarded either: the caller's error frame says it in the gateway's words
        if (!isSvcError(err) || opts.replaceErrorFrame || err.code === 'upstream_auth_failed')
          unreadable = ev;
      }
    }
  };
  const frames = (events: SseEvent[]): string => {
    let out = '';
    for (const ev of events) {
      if (ev === unreadable) break;
      out += rewrite!(ev) ?? '';
    }
    return out;
  };
  return {
    usage: () => decoder.usage(),
    stopReason: () => decoder.stopReason(),
    messageId: () => decoder.messageId(),
    hasContent: () => decoder.hasContent(),
    generatedQuarterTokens: () => decoder.generatedQuarterTokens(),
    usageFinal: () => decoder.usageFinal(),
    blockEnded: (index) => decoder.blockEnded(index),
    completed: () => completed,
    error: () => error,
    [Symbol.asyncIterator]: () =>
      tapChunks(body, opts.maxLineBytes, rewrite === undefined, {
        feed,
        frames,
        unreadable: () => unreadable !== undefined,
        end: () => {
          if (!error && !completed) {
            try {
              observe(decoder.end());
            } catch (err) {
              error = err as Error;
            }
          }
        },
      }),
  };
}

// --- internal ---

interface TapSteps {
  feed(events: SseEvent[]): void;
  frames(events: SseEvent[]): string;
  /** An event the decoder could not read was seen: nothing more is re-emitted. */
  unreadable(): boolean;
  end(): void;
}

/**
 * The tap's chunks. A generator declared once here, not a closure made per stream: V8 gives each generator
 * function its own initial map, allocated in the old generation and pointing back at the function, so a
 * per-stream generator closure kept everything its context reaches alive through young collections until
 * the next full one (15-22 KiB promoted per streamed request).
 */
async function* tapChunks(
  body: AsyncIterable<Uint8Array>,
  maxLineBytes: number | undefined,
  asIs: boolean,
  steps: TapSteps,
): AsyncGenerator<Uint8Array> {
  const sse = createSseDecoder({ maxLineBytes });
  const utf8 = new TextEncoder();
  for await (const chunk of body) {
    const events = sse.push(chunk);
    steps.feed(events);
    if (asIs) yield chunk;
    else {
      const text = steps.frames(events);
      if (text) yield utf8.encode(text);
    }
    // the upstream is not read further: the caller ends the client's stream with its error frame
    if (steps.unreadable()) return;
  }
  const rest = sse.end();
  steps.feed(rest);
  if (!asIs) {
    const text = steps.frames(rest);
    if (text) yield utf8.encode(text);
  }
  steps.end();
}

/** The SSE text of one event with `data` replaced (multi-line data keeps one `data:` line per line). */
export function formatFrame(e: SseEvent, data: string = e.data): string {
  const head = e.event !== undefined ? `event: ${e.event}\n` : '';
  const body =
    data.indexOf('\n') < 0
      ? `data: ${data}\n`
      : data
          .split('\n')
          .map((l) => `data: ${l}\n`)
          .join('');
  return `${head}${body}\n`;
}

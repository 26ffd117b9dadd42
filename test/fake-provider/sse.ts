/**
 * Response bodies with scripted timing and faults: SSE frame streams (drip, reset after N frames, malformed
 * or error frames) and chunked JSON bodies. Every body stops when the client goes away or the fake shuts down.
 */

import { setTimeout as delay } from 'node:timers/promises';
import type { FakeStep } from './script.ts';

/** Open bodies and hung requests register a stopper here so `close()` can end them. */
export type Tracker = { add(stop: () => void): () => void };

export type BodyOptions = {
  dripMs?: number;
  /** Frames (or chunks) sent before the connection is reset; undefined: end normally. */
  resetAfter?: number;
  /** Frames sent before the body falls silent with the connection open (until the client leaves). */
  stallAfter?: number;
  /** Frames sent before the body waits for `hold` (the fake's release()); false from it: the client left. */
  holdAfter?: number;
  hold?: () => Promise<boolean>;
  /** `count` copies of `frame` (a keep-alive comment) before the chunks, one every `everyMs`. */
  lead?: { frame: string; count: number; everyMs: number };
  signal: AbortSignal;
  tracker: Tracker;
  /** Destroys the connection (node server); without it the body stream errors instead (in-process). */
  destroy?: () => void;
};

/**
 * The chunks actually sent: frames cut at the first fault and ended by the malformed or error frame it asks
 * for, without the terminal frame (always the last one), cut in the middle of a frame, or followed by a data
 * line that never ends.
 */
export function scriptFrames(
  frames: string[],
  plan: FakeStep,
  faultFrames: { malformed: string; error: (status: number, after: number) => string; openText: string },
): string[] {
  if (plan.malformed !== undefined) return [...frames.slice(0, plan.malformed), faultFrames.malformed];
  if (plan.streamError !== undefined)
    return [
      ...frames.slice(0, plan.streamErrorAfter ?? 2),
      faultFrames.error(plan.streamError, plan.streamErrorAfter ?? 2),
    ];
  if (plan.oversize !== undefined)
    return [...frames.slice(0, 2), ...endlessLine(faultFrames.openText, plan.oversize)];
  if (plan.noTerminal) return frames.slice(0, -1);
  if (plan.cutShort) {
    // a clean end in the middle of the answer's middle frame: half its JSON, no line end
    const at = Math.floor(frames.length / 2);
    return [...frames.slice(0, at), frames[at].slice(0, Math.ceil(frames[at].length / 2))];
  }
  return frames;
}

/** `prefix` followed by text up to `bytes` in total, in 64 KiB chunks, with no line end. */
export function endlessLine(prefix: string, bytes: number): string[] {
  const piece = 'x'.repeat(CHUNK);
  const out = [prefix];
  for (let left = bytes - prefix.length; left > 0; left -= CHUNK)
    out.push(left >= CHUNK ? piece : 'x'.repeat(left));
  return out;
}

/** One SSE event: optional `event:` line, one `data:` line, blank line. */
export function sseFrame(data: unknown, event?: string): string {
  const json = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${json}\n\n`;
}

/** A byte stream of `chunks`, each delayed by `dripMs`, erroring (connection reset) after `resetAfter`. */
export function chunkStream(chunks: string[], options: BodyOptions): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const stopped = new AbortController();
  const signal = AbortSignal.any([stopped.signal, options.signal]);
  let untrack = () => {};
  let sent = 0;
  let led = 0;
  let held = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      untrack = options.tracker.add(() => {
        stopped.abort();
        fail(controller, options, 'fake provider: closed');
      });
    },
    async pull(controller) {
      try {
        const { lead } = options;
        if (lead !== undefined && led < lead.count) {
          await delay(lead.everyMs, undefined, { signal });
          controller.enqueue(encoder.encode(lead.frame));
          led++;
          return;
        }
        if (options.resetAfter !== undefined && sent >= options.resetAfter) {
          // Let the frames already written reach the socket before it is destroyed.
          await delay(20, undefined, { signal });
          untrack();
          fail(controller, options, 'fake provider: connection reset');
          return;
        }
        if (options.stallAfter !== undefined && sent >= options.stallAfter) {
          // an idle stream: nothing more, the connection open, until the client leaves or the fake closes
          await new Promise((_, reject) => signal.addEventListener('abort', reject, { once: true }));
        }
        if (options.holdAfter !== undefined && sent >= options.holdAfter && !held && options.hold) {
          held = true;
          if (!(await options.hold())) throw new Error('fake provider: client left while held');
        }
        if (sent >= chunks.length) {
          untrack();
          controller.close();
          return;
        }
        if (options.dripMs) await delay(options.dripMs, undefined, { signal });
        controller.enqueue(encoder.encode(chunks[sent]));
        sent++;
      } catch {
        // Aborted by the client or by shutdown: end the body so an in-process reader is not left waiting.
        untrack();
        fail(controller, options, 'fake provider: aborted');
      }
    },
    cancel() {
      stopped.abort();
      untrack();
    },
  });
}

/** Splits a body into four pieces so `drip` and `reset-after` have something to act on (a large one: 64 KiB pieces). */
export function splitBody(body: string): string[] {
  const size = body.length > 4 * CHUNK ? CHUNK : Math.ceil(body.length / 4);
  const out: string[] = [];
  for (let i = 0; i < body.length; i += size) out.push(body.slice(i, i + size));
  return out;
}

/** Resolves after `ms`, or early when `signal` aborts; never rejects. */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch {}
}

// --- internal ---

const CHUNK = 64 * 1024;

/** Ends a body abruptly: a destroyed socket over HTTP (the server then cancels the body), else an errored body. */
function fail(
  controller: ReadableStreamDefaultController<Uint8Array>,
  options: BodyOptions,
  message: string,
): void {
  if (options.destroy) {
    options.destroy();
    return;
  }
  try {
    controller.error(new Error(message));
  } catch {}
}

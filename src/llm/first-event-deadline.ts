/**
 * @module The call's total time (SVC_GATEWAY_UPSTREAM_TIMEOUT_MS) over a stream whose head went on before
 * its first event: one that opened with keep-alive comments (OpenRouter's `: OPENROUTER PROCESSING`, sent
 * every 300 ms while the model has not started) or that the stream-start look gave up on. The comments keep
 * the idle timeout from firing, so without this bound such a stream could hold its client for ever; a model
 * that starts within the total time streams on as before, and past its first event only the idle timeout
 * applies (DECISIONS §4).
 */
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import { firstEventTimeout } from './call-failure.ts';

/**
 * `body` as read from now on: unchanged once a line that is no comment began (an event is under way); until
 * then, if `withinMs` passes first, the body fails with firstEventTimeout() (a TimeoutError: the call's
 * `timeout`) and the upstream connection is dropped.
 */
export function untilFirstEvent(body: Readable, withinMs: number): Readable {
  const watch = new FirstEventWatch(withinMs);
  // a failure of either side destroys both: the reader's stop or the deadline drops the connection
  return pipeline(body, watch, ignore);
}

// --- internal ---

const COLON = 0x3a;
const LF = 0x0a;
const CR = 0x0d;
/** A UTF-8 byte order mark's bytes, which may open the body. */
const BOM = new Set([0xef, 0xbb, 0xbf]);

class FirstEventWatch extends Transform {
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private lineStart = true;
  private atBodyStart = true;

  constructor(withinMs: number) {
    super();
    this.timer = setTimeout(() => this.destroy(firstEventTimeout()), Math.max(0, withinMs));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (!this.started && this.eventBegins(chunk)) {
      this.started = true;
      clearTimeout(this.timer);
    }
    done(null, chunk);
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    clearTimeout(this.timer);
    done(err);
  }

  /** Whether `chunk` holds the start of a line that is no comment (nor blank). */
  private eventBegins(chunk: Buffer): boolean {
    for (const byte of chunk) {
      if (this.atBodyStart && BOM.has(byte)) continue;
      this.atBodyStart = false;
      if (byte === LF || byte === CR) {
        this.lineStart = true;
        continue;
      }
      if (this.lineStart && byte !== COLON) return true;
      this.lineStart = false;
    }
    return false;
  }
}

function ignore(): void {}

/**
 * @module A running call's stream: reads its SSE body as canonical events and closes the call exactly once
 * (completed on message.complete, failed on a read error or a truncated stream, cancelled on abort).
 */
import type { UpstreamFailure } from '../adapters/upstream-error.ts';
import type {
  CanonicalStream,
  CanonicalStreamEvent,
  MessageCompleteEvent,
  StreamProgress,
} from '../canonical/stream.ts';
import { SvcError } from '../lib/errors.ts';
import { decodeSse } from '../lib/sse-decode.ts';
import { classifyReadFailure } from './call-failure.ts';
import type { RunningCall } from './runner.ts';

export interface StreamOptions {
  /** performance.now() at the call's start (ttft); default: when the call was opened. */
  startedMs?: number;
  /**
   * false (gateway): llm.call_completed is committed before message.complete is yielded, so the client's
   * final byte never precedes a durable trace, and an abort closes the call at once as cancelled.
   * true (agent): message.complete is yielded first and the call is closed when the consumer asks for the
   * next event (spec 2 "Typical order"); on abort the stream just ends and the consumer calls `cancel`.
   */
  completeAfterYield?: boolean;
  /**
   * Runs just before a read failure closes the call as llm.call_failed: the agent closes its open message
   * there (tool.use_end, message.complete with stop_reason `error`), so the stream keeps spec 2's order.
   */
  beforeFail?: () => void;
  /** Committed together with the call's closing event (the gateway's turn.completed: one group commit). */
  alongside?: (end: { status: number; code: string | null }) => Promise<void>;
}

export interface CanonicalEventStream extends AsyncIterable<CanonicalStreamEvent>, StreamProgress {
  /** Time to first content, once seen (ms from `startedMs`). */
  ttftMs(): number | null;
}

export const TRUNCATED_STREAM = 'the upstream stream ended before the message was complete';

/** The SvcError a failure is answered with; `details.error_class` carries its class. */
export function failureError(f: UpstreamFailure): SvcError {
  return new SvcError(f.code, { message: f.message, details: { error_class: f.error_class } });
}

/** The stream `CallRunner.streamEvents` returns (see there). */
export function createEventStream(
  call: RunningCall,
  signal: AbortSignal,
  startedMs: number,
  maxLineBytes: number,
  options: StreamOptions,
): CanonicalEventStream {
  const completeAfterYield = options.completeAfterYield ?? false;
  const alongside = options.alongside ?? (async () => {});
  const adapter = call.routed.adapter;
  const canonical = adapter.decodeStream(decodeSse(call.response.body, { maxLineBytes }));
  /** Time to first content once seen; completed: the call was completed here, on the stream's message.complete. */
  const seen = { ttft: null as number | null, completed: false };
  // agent order: the caller publishes its cancellation events (tool.use_end, message.complete) first and
  // then closes the call itself with `call.cancel`; the gateway's call is closed the moment its client leaves
  const cancel = () => {
    if (!completeAfterYield && !call.closed) call.cancel(call.unfinishedUsage(canonical), seen.ttft);
  };
  const iterable = events({
    call,
    signal,
    startedMs,
    options,
    completeAfterYield,
    alongside,
    adapter,
    canonical,
    cancel,
    seen,
  });
  return {
    [Symbol.asyncIterator]: () => iterable,
    usage: () => canonical.usage(),
    stopReason: () => canonical.stopReason(),
    messageId: () => canonical.messageId(),
    hasContent: () => canonical.hasContent(),
    generatedQuarterTokens: () => canonical.generatedQuarterTokens(),
    usageFinal: () => canonical.usageFinal(),
    blockEnded: (index) => canonical.blockEnded(index),
    ttftMs: () => seen.ttft,
  };
}

// --- internal ---

/**
 * What a stream's events read. The generator is declared once, never as a closure made per call: V8 gives
 * each generator function its own initial map, allocated in the old generation and pointing back at the
 * function, whose context then reached the whole call and kept it through young collections until the next
 * full one.
 */
interface EventRun {
  call: RunningCall;
  signal: AbortSignal;
  startedMs: number;
  options: StreamOptions;
  completeAfterYield: boolean;
  alongside: NonNullable<StreamOptions['alongside']>;
  adapter: RunningCall['routed']['adapter'];
  canonical: CanonicalStream;
  cancel: () => void;
  seen: { ttft: number | null; completed: boolean };
}

async function* events(run: EventRun): AsyncGenerator<CanonicalStreamEvent> {
  const {
    call,
    signal,
    startedMs,
    options,
    completeAfterYield,
    alongside,
    adapter,
    canonical,
    cancel,
    seen,
  } = run;
  signal.addEventListener('abort', cancel, { once: true });
  try {
    for await (const e of canonical) {
      if (seen.ttft === null && canonical.hasContent())
        seen.ttft = Math.round((performance.now() - startedMs) * 1000) / 1000;
      const done = e.type === 'message.complete' && !call.closed ? e : null;
      const closeCall = (m: MessageCompleteEvent) => {
        seen.completed = true;
        return Promise.all([
          call.complete({ usage: m.usage, stopReason: m.stop_reason, ttftMs: seen.ttft }).published.committed,
          alongside({ status: 200, code: null }),
        ]);
      };
      if (done && !completeAfterYield) await closeCall(done);
      yield e;
      if (signal.aborted) return;
      if (done && completeAfterYield && !call.closed) await closeCall(done);
    }
  } catch (err) {
    // the answer was whole and its call completed (billed): a connection reset after the final event
    // (message_stop, [DONE], response.completed) ends the stream as its end would have
    if (seen.completed && !signal.aborted) return;
    if (signal.aborted || call.closed) {
      cancel();
      throw err;
    }
    const failure = classifyReadFailure(adapter, err, signal);
    options.beforeFail?.();
    await Promise.all([
      call.fail(failure, call.unfinishedUsage(canonical)).committed,
      alongside({ status: 200, code: failure.code }),
    ]);
    throw failureError(failure);
  } finally {
    signal.removeEventListener('abort', cancel);
    if (signal.aborted) cancel();
  }
  if (!call.closed) {
    const failure = classifyReadFailure(
      adapter,
      new SvcError('upstream_error', {
        message: TRUNCATED_STREAM,
        details: { error_class: 'server_error' },
      }),
      signal,
    );
    options.beforeFail?.();
    await Promise.all([
      call.fail(failure, call.unfinishedUsage(canonical)).committed,
      alongside({ status: 200, code: failure.code }),
    ]);
    throw failureError(failure);
  }
}

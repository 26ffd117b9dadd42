/**
 * @module The streaming answer of one gateway call. Same wire: the upstream bytes pass through the
 * adapter's tap (frames edited in place only for the model echo). Cross wire: upstream SSE → canonical
 * events → the inbound shape's encoder. Either way the chunk that carries the end of the message is held
 * until the call's events are committed (the final byte is never sent before the trace is durable), a
 * failure mid-stream ends the client's stream with an error frame in its own shape, and a client that
 * leaves aborts the upstream at once and closes the call as `cancelled` with the usage seen so far.
 * The upstream is read only as fast as the client takes the answer (a chunk at a time); a client that takes
 * nothing for the stream idle timeout is cut off like one that left, so it never holds the upstream open.
 */
import type { Adapter, SameWireOps, TappedStream } from '../adapters/adapter.ts';
import type { UpstreamFailure } from '../adapters/upstream-error.ts';
import type { CanonicalUsage, StopReason } from '../canonical/response.ts';
import type { CanonicalStreamEvent, StreamProgress } from '../canonical/stream.ts';
import type { Published } from '../events/bus.ts';
import { stopCutOffError } from '../http/stop-cut-off.ts';
import { isSvcError, SvcError } from '../lib/errors.ts';
import { classifyReadFailure } from '../llm/call-failure.ts';
import { type CanonicalEventStream, failureError } from '../llm/call-stream.ts';
import type { CallRunner, RunningCall } from '../llm/runner.ts';
import { SSE_CONTENT_TYPE, streamAnswer } from './answer.ts';
import { type InboundShape, TRUNCATED } from './shapes/shape.ts';

export interface StreamResponseInput {
  /** The running call (closed here exactly once: completed, failed or cancelled). */
  call: RunningCall;
  runner: CallRunner;
  shape: InboundShape;
  /** The adapter's wire that speaks the client's shape (bytes pass through its tap); null: translated. */
  sameWire: SameWireOps | null;
  /** The client's request body (a shape may echo its fields in the stream). */
  request?: Record<string, unknown>;
  /** The model name the client sent (echoed in every frame). */
  requestedModel: string;
  includeUsage: boolean;
  /** The gateway's input-token estimate, stated where a client's shape wants a count before the upstream's. */
  inputTokensEstimate: number;
  /** Longest upstream SSE line (or event data) read; past it the call fails as upstream_error. */
  maxSseLineBytes: number;
  /** The client's request signal: aborted when it disconnects. */
  signal: AbortSignal;
  /**
   * Aborted when the gateway's stop cuts the stream off (its drain deadline, a second signal): the stream
   * ends with the client's error frame (`service_shutting_down`) and its call is closed as cancelled.
   */
  stopSignal?: AbortSignal;
  /**
   * Longest time the client may leave a chunk untaken (its socket full, SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS);
   * past it the client is cut off and the call closed as cancelled.
   */
  clientStallMs: number;
  /** Called once when a stalled client is cut off. */
  onClientStall?: () => void;
  startedMs: number;
  /** The answer's headers (lowercase names; the stream's own are added to this object: answer.ts). */
  headers: Record<string, string>;
  /** The gateway turn: turn.completed is committed with the call's closing event. */
  turn: { finish(status: number, errorCode: string | null): Published };
  /** Responses: the id base of the response and its items (the gateway's request id). */
  idBase?: string;
  /**
   * Responses streams: the final response object, once complete and committed (kept for follow-ups); same
   * wire, the one the upstream's terminal frame carried, with that frame's data as it came (`text`). Never
   * called for a stream that failed.
   */
  onResponse?: (response: Record<string, unknown>, text?: string) => void;
}

const SSE_HEADERS = { 'content-type': SSE_CONTENT_TYPE, 'cache-control': 'no-cache' };

export function createStreamResponse(input: StreamResponseInput): Response {
  const state = { done: false, ttft: null as number | null };
  const source = input.sameWire ? passthrough(input, input.sameWire, state) : translated(input, state);
  const iterator = source.chunks[Symbol.asyncIterator]();
  const cancel = () => {
    if (state.done) return;
    state.done = true;
    if (!input.call.closed) input.call.cancel(input.call.unfinishedUsage(source.progress), state.ttft);
    input.turn.finish(499, 'cancelled');
  };
  input.signal.addEventListener('abort', cancel, { once: true });
  // the stop ends the upstream body with its own failure, which the stream turns into the call's closing
  // event and the client's error frame like any upstream failure (an answer already complete goes out whole)
  const stopped = () => {
    if (!state.done) input.call.response.body.destroy(stopCutOffError('stream'));
  };
  input.stopSignal?.addEventListener('abort', stopped, { once: true });
  // armed while a chunk waits for the client to take it (the server's write did not drain), never while the
  // upstream is awaited: that silence is the upstream's idle timeout. One timer per stream, re-armed with
  // refresh() at each chunk (a new timer per chunk cost about 7x as much); a firing while disarmed is ignored
  let armed = false;
  let stall: NodeJS.Timeout | undefined;
  const stalled = () => {
    if (!armed) return;
    cancel();
    input.onClientStall?.();
    streamController?.error(new Error('the client took no part of the stream in time'));
    void iterator.return?.(undefined).catch(() => {});
  };
  let streamController: ReadableStreamDefaultController<Uint8Array> | undefined;
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        streamController = controller;
      },
      async pull(controller) {
        armed = false;
        try {
          const next = await iterator.next();
          if (next.done) {
            input.signal.removeEventListener('abort', cancel);
            input.stopSignal?.removeEventListener('abort', stopped);
            clearTimeout(stall);
            controller.close();
          } else {
            controller.enqueue(next.value);
            armed = true;
            if (stall === undefined) stall = setTimeout(stalled, input.clientStallMs);
            else stall.refresh();
          }
        } catch (err) {
          // only reachable when the client is already gone; nothing more can be sent
          clearTimeout(stall);
          cancel();
          controller.error(err);
        }
      },
      cancel() {
        armed = false;
        clearTimeout(stall);
        cancel();
        void iterator.return?.(undefined).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  return streamAnswer(stream, input.headers, SSE_HEADERS);
}

// --- internal ---

interface Source {
  chunks: AsyncIterable<Uint8Array>;
  progress: StreamProgress;
}

type State = { done: boolean; ttft: number | null };

/** How the same-wire path closes the call and the turn together (one group commit). */
function ends(input: StreamResponseInput) {
  return {
    ok: async (usage: CanonicalUsage, stopReason: StopReason | null, ttftMs: number | null) => {
      const { published } = input.call.complete({ usage, stopReason, ttftMs });
      await Promise.all([published.committed, input.turn.finish(200, null).committed]);
    },
    failed: async (failure: UpstreamFailure, usage?: CanonicalUsage) => {
      await Promise.all([
        input.call.fail(failure, usage).committed,
        input.turn.finish(200, failure.code).committed,
      ]);
    },
  };
}

const utf8 = new TextEncoder();

function markTtft(input: StreamResponseInput, state: State, progress: StreamProgress): void {
  if (state.ttft === null && progress.hasContent())
    state.ttft = Math.round((performance.now() - input.startedMs) * 1000) / 1000;
}

/** Same wire: upstream bytes through the adapter's tap; the chunk that ends the message waits for commit. */
function passthrough(input: StreamResponseInput, wire: SameWireOps, state: State): Source {
  const adapter = input.call.routed.adapter;
  const end = ends(input);
  const cut = input.shape.createPassthroughEnd?.(input.requestedModel);
  const ok = async (done: CanonicalStreamEvent & { type: 'message.complete' }) => {
    await end.ok(done.usage, done.stop_reason, state.ttft);
    const terminal = input.onResponse && cut?.completed();
    if (!terminal) return;
    const { response } = JSON.parse(terminal) as { response?: Record<string, unknown> };
    if (response) input.onResponse?.(response, terminal);
  };
  // OpenRouter's error chunk is no OpenAI error frame (the Vercel AI SDK reads it as an answer that ended): ours
  // goes in its place
  const ownErrorFrame = adapter.name === 'openrouter';
  const errorFrames = (failure: UpstreamFailure) =>
    utf8.encode(
      cut ? cut.encodeError(failureError(failure)) : input.shape.encodeStreamError(failureError(failure)),
    );
  const tapped = wire.tapStream(input.call.response.body, {
    model: input.requestedModel,
    includeUsageChunk: input.includeUsage,
    maxLineBytes: input.maxSseLineBytes,
    ...(cut ? { onFrame: (e) => cut.observe(e) } : {}),
    replaceErrorFrame: ownErrorFrame,
  });
  const run = { input, state, tapped, adapter, end, ok, ownErrorFrame, errorFrames };
  return { chunks: passthroughChunks(run), progress: tapped };
}

/** Cross wire: the runner's canonical events re-encoded in the client's shape; message.complete waits for commit. */
function translated(input: StreamResponseInput, state: State): Source {
  const canonical = input.runner.streamEvents(input.call, input.signal, {
    startedMs: input.startedMs,
    alongside: (e) => input.turn.finish(e.status, e.code).committed,
  });
  return { chunks: translatedChunks(canonical, input, state), progress: canonical };
}

/**
 * The stream's generators are declared once at module level, never as closures made per request: V8 gives
 * each generator function its own initial map, allocated in the old generation and pointing back at the
 * function, whose context then reached the whole request and kept it through young collections until the
 * next full one (15-22 KiB promoted per streamed request, 100-350 us of GC pause).
 */

interface PassthroughRun {
  input: StreamResponseInput;
  state: State;
  tapped: TappedStream;
  adapter: Adapter;
  end: ReturnType<typeof ends>;
  ok: (done: CanonicalStreamEvent & { type: 'message.complete' }) => Promise<void>;
  ownErrorFrame: boolean;
  errorFrames: (failure: UpstreamFailure) => Uint8Array;
}

async function* passthroughChunks(run: PassthroughRun): AsyncGenerator<Uint8Array> {
  const { input, state, tapped, adapter, end, ok, ownErrorFrame, errorFrames } = run;
  let forwardedError = false;
  try {
    for await (const chunk of tapped) {
      markTtft(input, state, tapped);
      if (!state.done) {
        const completed = tapped.completed();
        const error = tapped.error();
        if (completed?.type === 'message.complete') {
          state.done = true;
          await ok(completed);
        } else if (error) {
          state.done = true;
          const failure = classifyReadFailure(adapter, error, input.signal);
          await end.failed(failure, input.call.unfinishedUsage(tapped));
          if (!isSvcError(error) || ownErrorFrame || failure.error_class === 'authentication') {
            // a frame the decoder could not read, not an error frame of the upstream's (or one not in the
            // client's shape, or the provider's words about the gateway's key): send ours and stop
            yield chunk;
            yield errorFrames(failure);
            return;
          }
          // the upstream's own error frame is in this chunk: it reaches the client in its shape as is
          forwardedError = true;
        }
      }
      yield chunk;
    }
  } catch (err) {
    if (state.done || input.signal.aborted) return;
    state.done = true;
    const failure = classifyReadFailure(adapter, err, input.signal);
    await end.failed(failure, input.call.unfinishedUsage(tapped));
    yield errorFrames(failure);
    return;
  }
  if (state.done) return;
  state.done = true;
  const completed = tapped.completed();
  if (completed?.type === 'message.complete') {
    await ok(completed);
    return;
  }
  const err = tapped.error() ?? new SvcError('upstream_error', { message: TRUNCATED });
  const failure = classifyReadFailure(adapter, err, input.signal);
  await end.failed(failure, input.call.unfinishedUsage(tapped));
  if (!forwardedError) yield errorFrames(failure);
}

async function* gated(
  canonical: CanonicalEventStream,
  input: StreamResponseInput,
  state: State,
): AsyncGenerator<CanonicalStreamEvent> {
  try {
    for await (const e of canonical) {
      state.ttft = canonical.ttftMs();
      if (e.type === 'message.complete') state.done = true;
      yield e;
    }
  } catch (err) {
    // the runner closed the call (and the turn with it); the encoder turns this into the shape's error frame
    if (!input.signal.aborted) state.done = true;
    throw err;
  }
}
async function* translatedChunks(
  canonical: CanonicalEventStream,
  input: StreamResponseInput,
  state: State,
): AsyncGenerator<Uint8Array> {
  const frames = input.shape.encodeStream(gated(canonical, input, state), {
    model: input.requestedModel,
    include_usage: input.includeUsage,
    input_tokens_estimate: input.inputTokensEstimate,
    request: input.request,
    idBase: input.idBase,
    onResponse: input.onResponse,
    blockEnded: (index) => canonical.blockEnded(index),
  });
  for await (const text of frames) yield utf8.encode(text);
  if (!state.done && !input.signal.aborted && !input.call.closed) {
    // the encoder stopped without the call being closed (it caught a failure of its own): close it
    state.done = true;
    await ends(input).failed(
      {
        error_class: 'server_error',
        code: 'internal_error',
        status: null,
        message: 'the gateway could not encode the stream',
        retryable: false,
      },
      input.call.unfinishedUsage(canonical),
    );
  }
}

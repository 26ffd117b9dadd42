/**
 * @module The streaming answer of one gateway call. Same wire: the upstream bytes pass through the
 * adapter's tap (frames edited in place only for the model echo). Cross wire: upstream SSE → canonical
 * events → the inbound shape's encoder. Either way the chunk that carries the end of the message is held
 * until the call's events are committed (the final byte is never sent before the trace is durable), a
 * failure mid-stream ends the client's stream with an error frame in its own shape, and a client that
 * leaves aborts the upstream at once and closes the call as `cancelled` with the usage seen so far.
 */
import type { Adapter } from '../adapters/adapter.ts';
import type { UpstreamFailure } from '../adapters/upstream-error.ts';
import type { CanonicalUsage, StopReason } from '../canonical/response.ts';
import type { CanonicalStreamEvent, StreamProgress } from '../canonical/stream.ts';
import { isSvcError, SvcError } from '../lib/errors.ts';
import { decodeSse } from '../lib/sse-decode.ts';
import { classifyReadFailure } from '../llm/call.ts';
import { type InboundShape, TRUNCATED } from './shapes/shape.ts';

export interface StreamEnds {
  /** The message completed: publish and commit its events (resolves when durable). */
  ok(usage: CanonicalUsage, stopReason: StopReason | null, ttftMs: number | null): Promise<void>;
  /** The upstream failed mid-stream: publish and commit llm.call_failed. */
  failed(failure: UpstreamFailure): Promise<void>;
  /** The client left: close the call as cancelled with the partial usage (fire and forget). */
  cancelled(usage: CanonicalUsage, ttftMs: number | null): void;
}

export interface StreamResponseInput {
  adapter: Adapter;
  shape: InboundShape;
  /** True when the upstream speaks the client's wire (bytes pass through the tap). */
  sameWire: boolean;
  body: AsyncIterable<Uint8Array>;
  /** The model name the client sent (echoed in every frame). */
  requestedModel: string;
  includeUsage: boolean;
  /** The gateway's input-token estimate, stated where a client's shape wants a count before the upstream's. */
  inputTokensEstimate: number;
  /** Longest upstream SSE line (or event data) read; past it the call fails as upstream_error. */
  maxSseLineBytes: number;
  /** The client's request signal: aborted when it disconnects. */
  signal: AbortSignal;
  startedMs: number;
  headers: Record<string, string>;
  ends: StreamEnds;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

export function createStreamResponse(input: StreamResponseInput): Response {
  const state = { done: false, ttft: null as number | null };
  const source = input.sameWire ? passthrough(input, state) : translated(input, state);
  const iterator = source.chunks[Symbol.asyncIterator]();
  const cancel = () => {
    if (state.done) return;
    state.done = true;
    input.ends.cancelled(source.progress.usage(), state.ttft);
  };
  input.signal.addEventListener('abort', cancel, { once: true });
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await iterator.next();
          if (next.done) {
            input.signal.removeEventListener('abort', cancel);
            controller.close();
          } else controller.enqueue(next.value);
        } catch (err) {
          // only reachable when the client is already gone; nothing more can be sent
          cancel();
          controller.error(err);
        }
      },
      cancel() {
        cancel();
        void iterator.return?.(undefined).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(stream, { status: 200, headers: { ...input.headers, ...SSE_HEADERS } });
}

// --- internal ---

interface Source {
  chunks: AsyncIterable<Uint8Array>;
  progress: StreamProgress;
}

type State = { done: boolean; ttft: number | null };

const utf8 = new TextEncoder();

function markTtft(input: StreamResponseInput, state: State, progress: StreamProgress): void {
  if (state.ttft === null && progress.hasContent())
    state.ttft = Math.round((performance.now() - input.startedMs) * 1000) / 1000;
}

/** Same wire: upstream bytes through the adapter's tap; the chunk that ends the message waits for commit. */
function passthrough(input: StreamResponseInput, state: State): Source {
  const tapped = input.adapter.tapStream(input.body, {
    model: input.requestedModel,
    includeUsageChunk: input.includeUsage,
    maxLineBytes: input.maxSseLineBytes,
  });
  async function* chunks(): AsyncGenerator<Uint8Array> {
    let forwardedError = false;
    try {
      for await (const chunk of tapped) {
        markTtft(input, state, tapped);
        if (!state.done) {
          const completed = tapped.completed();
          const error = tapped.error();
          if (completed?.type === 'message.complete') {
            state.done = true;
            await input.ends.ok(completed.usage, completed.stop_reason, state.ttft);
          } else if (error) {
            state.done = true;
            const failure = classifyReadFailure(input.adapter, error, input.signal);
            await input.ends.failed(failure);
            if (!isSvcError(error)) {
              // a frame the decoder could not read, not an error frame of the upstream's: send ours and stop
              yield chunk;
              yield utf8.encode(input.shape.encodeStreamError(failureError(failure)));
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
      const failure = classifyReadFailure(input.adapter, err, input.signal);
      await input.ends.failed(failure);
      yield utf8.encode(input.shape.encodeStreamError(failureError(failure)));
      return;
    }
    if (state.done) return;
    state.done = true;
    const completed = tapped.completed();
    if (completed?.type === 'message.complete') {
      await input.ends.ok(completed.usage, completed.stop_reason, state.ttft);
      return;
    }
    const err = tapped.error() ?? new SvcError('upstream_error', { message: TRUNCATED });
    const failure = classifyReadFailure(input.adapter, err, input.signal);
    await input.ends.failed(failure);
    if (!forwardedError) yield utf8.encode(input.shape.encodeStreamError(failureError(failure)));
  }
  return { chunks: chunks(), progress: tapped };
}

/** Cross wire: canonical events re-encoded in the client's shape; message.complete waits for commit. */
function translated(input: StreamResponseInput, state: State): Source {
  const canonical = input.adapter.decodeStream(
    decodeSse(input.body, { maxLineBytes: input.maxSseLineBytes }),
  );
  async function* gated(): AsyncGenerator<CanonicalStreamEvent> {
    try {
      for await (const e of canonical) {
        markTtft(input, state, canonical);
        if (e.type === 'message.complete' && !state.done) {
          state.done = true;
          await input.ends.ok(e.usage, e.stop_reason, state.ttft);
        }
        yield e;
      }
    } catch (err) {
      if (!state.done && !input.signal.aborted) {
        state.done = true;
        const failure = classifyReadFailure(input.adapter, err, input.signal);
        await input.ends.failed(failure);
        throw failureError(failure); // the encoder turns it into this shape's error frame
      }
      throw err;
    }
    if (!state.done) {
      // ended without message.complete: the encoder writes the truncation error frame after this
      state.done = true;
      await input.ends.failed(
        classifyReadFailure(
          input.adapter,
          new SvcError('upstream_error', { message: TRUNCATED, details: { error_class: 'server_error' } }),
          input.signal,
        ),
      );
    }
  }
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const frames = input.shape.encodeStream(gated(), {
      model: input.requestedModel,
      include_usage: input.includeUsage,
      input_tokens_estimate: input.inputTokensEstimate,
    });
    for await (const text of frames) yield utf8.encode(text);
    if (!state.done && !input.signal.aborted) {
      // the encoder stopped without the call being closed (it caught a failure of its own): close it
      state.done = true;
      await input.ends.failed({
        error_class: 'server_error',
        code: 'internal_error',
        status: null,
        message: 'the gateway could not encode the stream',
        retryable: false,
      });
    }
  }
  return { chunks: chunks(), progress: canonical };
}

function failureError(f: UpstreamFailure): SvcError {
  return new SvcError(f.code, { message: f.message, details: { error_class: f.error_class } });
}

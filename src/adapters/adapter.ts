/**
 * @module The adapter contract: one upstream wire behind pure functions. Adapters build the HTTP request
 * (URL, headers with the key given at creation, body), decode responses and SSE into canonical form, and
 * classify failures; the transport (llm/upstream.ts) and retries live elsewhere.
 */
import type { Wire } from '../canonical/message.ts';
import type { CanonicalRequest } from '../canonical/request.ts';
import type { CanonicalResponse, CanonicalUsage } from '../canonical/response.ts';
import type { CanonicalStream, CanonicalStreamEvent, StreamProgress } from '../canonical/stream.ts';
import type { SseEvent } from '../lib/sse-decode.ts';
import type { AdapterName } from './names.ts';
import type { UpstreamFailure } from './upstream-error.ts';

export interface AdapterConfig {
  /** Base URL: Anthropic root (`https://api.anthropic.com`), OpenAI/OpenRouter base incl. `/v1`. */
  baseUrl: string;
  apiKey: string;
  /** max_tokens when the request has none (Anthropic requires one; wire-formats §6 #22). Default 8192. */
  defaultMaxTokens?: number;
  /** Extra headers on every upstream request (OpenRouter attribution, proxies). */
  headers?: Record<string, string>;
}

/** A ready-to-send upstream request. */
export interface UpstreamCall {
  url: string;
  headers: Record<string, string>;
  body: string;
  /**
   * The paid service tier the request asks for (models.yaml `service_tiers`: OpenAI `service_tier`, Anthropic
   * fast mode): the call's price when the answer names no tier of its own (models/pricing.ts priceCall).
   */
  serviceTier?: string;
}

/** Same-shape fast path input: the client body as received and as parsed (already validated). */
export interface PassthroughInput {
  bodyText: string;
  body: Record<string, unknown>;
  upstreamModel: string;
  stream: boolean;
  /** Client headers meaningful to this wire (`anthropic-version`, `anthropic-beta`). */
  headers?: Record<string, string>;
  /**
   * Set when the client wrote the body for another model than the one that serves it (a native-name rule, an
   * alias): the Anthropic wire fits max_tokens, thinking and effort to the routed model (anthropic/fit-model.ts).
   */
  fitTo?: { maxOutputTokens: number };
}

export interface TapOptions {
  /** Rewrite `model` in the frames to this name (the requested model, spec 1). Switches to frame mode. */
  model?: string;
  /** OpenAI wire: forward the usage-only chunk (client asked include_usage). Default true. */
  includeUsageChunk?: boolean;
  /** Longest SSE line (or event data) accepted, in bytes; past it the tap throws upstream_error. */
  maxLineBytes?: number;
  /** Called for every canonical event observed on the side. */
  onEvent?: (e: CanonicalStreamEvent) => void;
  /** Called for every upstream SSE event the decoder read (as received, before any rewrite). */
  onFrame?: (e: SseEvent) => void;
  /**
   * The upstream's in-stream error frame is not forwarded either (nor anything after it): the caller ends the
   * client's stream with its own error frame, as for a frame the decoder could not read. For OpenRouter, whose
   * error chunk (`error` beside `choices` that finished with "error") is no OpenAI error frame.
   */
  replaceErrorFrame?: boolean;
}

/** Upstream bytes passed through (unchanged in byte mode) while canonical events are observed. */
export interface TappedStream extends AsyncIterable<Uint8Array>, StreamProgress {
  /** The final message.complete, once seen. */
  completed(): CanonicalStreamEvent | undefined;
  /** The upstream's in-stream error (already forwarded to the client in its own shape), if any. */
  error(): Error | undefined;
}

/** Push-based decoder of one upstream SSE stream. */
export interface StreamDecoder extends StreamProgress {
  /** Canonical events for one SSE event; throws SvcError on an upstream error event. */
  push(e: SseEvent): CanonicalStreamEvent[];
  /** End of body: completes, or throws SvcError('upstream_error') when the message was cut (§6 #24). */
  end(): CanonicalStreamEvent[];
}

/** A 2xx answer whose body is an error in place of the response (OpenRouter, wire-formats §3). */
export interface EmbeddedError {
  failure: UpstreamFailure;
  /** What the body says the provider billed (a generation that failed once begun), when it says so. */
  usage?: CanonicalUsage;
}

/** What a same-wire client needs of an adapter: its bytes forwarded, the answer read, the stream tapped. */
export type SameWireOps = Pick<
  Adapter,
  'encodePassthrough' | 'decodeResponse' | 'tapStream' | 'classifyResponseBody'
>;

export interface Adapter {
  readonly name: AdapterName;
  readonly wire: Wire;
  /** The provider's second wire, the OpenAI Responses API (`openai_responses`), when it serves one. */
  readonly responses?: SameWireOps;
  /** CanonicalRequest → upstream request for `upstreamModel` (the model name without the adapter prefix). */
  encodeRequest(req: CanonicalRequest, upstreamModel: string): UpstreamCall;
  /** Same-shape fast path: the client body with only `model` replaced (and stream usage ensured). */
  encodePassthrough(input: PassthroughInput): UpstreamCall;
  /**
   * Anthropic wire: `POST /v1/messages/count_tokens` with the client body, only `model` replaced. Absent on
   * wires with no token-counting endpoint (the gateway then estimates).
   */
  encodeCountTokens?(input: PassthroughInput): UpstreamCall;
  /** Upstream 200 JSON body → CanonicalResponse (throws SvcError for an error embedded in a 200). */
  decodeResponse(body: unknown): CanonicalResponse;
  /**
   * A 2xx non-streaming body, parsed (the call parses it once; a body that is no JSON is not asked about) →
   * the error it holds instead of the response, classified as the provider's HTTP answer of that status (so
   * retried and answered alike); null for any other body. Absent on wires that never answer an error with a
   * 2xx.
   */
  classifyResponseBody?(body: unknown, headers: HeaderGetter): EmbeddedError | null;
  /** Upstream SSE events → canonical events, with usage readable at any time (cancellation). */
  decodeStream(events: AsyncIterable<SseEvent>): CanonicalStream;
  createStreamDecoder(): StreamDecoder;
  /** Same-shape fast path for streams: yields the upstream bytes, observing canonical events on the side. */
  tapStream(body: AsyncIterable<Uint8Array>, opts?: TapOptions): TappedStream;
  /**
   * The first event of a 2xx stream → a failure when the upstream opened its stream with an error (it then
   * failed before its first byte, and is retried like an HTTP error), with the usage that event states (the
   * prompt a failed generation read, billed); null for a stream that started. `headers` are the 2xx head's
   * (an error that names its HTTP status is classed as that answer). `next` is the event right after a
   * `first` that streamStartFollows names, when it came (null or absent: none, the failure as `first` says).
   */
  classifyStreamStart(first: SseEvent, headers: HeaderGetter, next?: SseEvent | null): EmbeddedError | null;
  /**
   * A first event whose failure the next event completes (the Responses API's `error`, then
   * `response.failed` stating the usage of what it read): the look reads that one event more, briefly.
   */
  streamStartFollows?(first: SseEvent): boolean;
  /**
   * An opening event that states nothing yet (the Responses API's `response.created`): the stream's first
   * event for classifyStreamStart is the one after these, and none is sent on before it is seen.
   */
  isStreamPreamble?(e: SseEvent): boolean;
  /** Non-2xx upstream response → failure class, gateway code and retry hint. */
  classifyResponse(status: number, headers: HeaderGetter, bodyText: string): UpstreamFailure;
  /** Thrown transport error (undici, abort) → failure. */
  classifyNetworkError(err: unknown): UpstreamFailure;
}

export type HeaderGetter = (name: string) => string | undefined;

/** Drives a StreamDecoder over decoded SSE events as an async iterable with progress accessors. */
export function runStreamDecoder(events: AsyncIterable<SseEvent>, decoder: StreamDecoder): CanonicalStream {
  return {
    usage: () => decoder.usage(),
    stopReason: () => decoder.stopReason(),
    messageId: () => decoder.messageId(),
    hasContent: () => decoder.hasContent(),
    generatedQuarterTokens: () => decoder.generatedQuarterTokens(),
    usageFinal: () => decoder.usageFinal(),
    blockEnded: (index) => decoder.blockEnded(index),
    [Symbol.asyncIterator]: () => decodeAll(events, decoder),
  };
}

/**
 * runStreamDecoder's events: declared once, not a generator closure made per stream (V8 gives each generator
 * function an initial map in the old generation pointing back at the function, which kept the stream's
 * objects through young collections).
 */
async function* decodeAll(
  events: AsyncIterable<SseEvent>,
  decoder: StreamDecoder,
): AsyncGenerator<CanonicalStreamEvent> {
  for await (const e of events) yield* decoder.push(e);
  yield* decoder.end();
}

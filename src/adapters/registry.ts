/**
 * @module Adapter factories and the registry by name. Keys and base URLs are passed in here (from config),
 * never taken from a client request.
 */
import { decodeSse } from '../lib/sse-decode.ts';
import { type Adapter, type AdapterConfig, runStreamDecoder } from './adapter.ts';
import {
  classifyAnthropicResponse,
  classifyAnthropicResponseBody,
  classifyAnthropicStreamStart,
} from './anthropic/errors.ts';
import { fitToModel } from './anthropic/fit-model.ts';
import {
  encodeAnthropicCountTokens,
  encodeAnthropicPassthrough,
  encodeAnthropicRequest,
} from './anthropic/request.ts';
import { decodeAnthropicResponse } from './anthropic/response.ts';
import { createAnthropicStreamDecoder, rewriteAnthropicFrame } from './anthropic/stream.ts';
import type { AdapterName } from './names.ts';
import { classifyOpenAIResponse } from './openai/errors.ts';
import { encodeOpenAIPassthrough, encodeOpenAIRequest } from './openai/request.ts';
import { classifyOpenAIResponseBody, decodeOpenAIResponse } from './openai/response.ts';
import {
  classifyResponsesBody,
  decodeResponsesObject,
  encodeResponsesPassthrough,
  rewriteResponsesFrame,
} from './openai/responses.ts';
import { createResponsesStreamDecoder } from './openai/responses-stream.ts';
import { createOpenAIStreamDecoder, rewriteOpenAIFrame } from './openai/stream.ts';
import {
  classifyOpenAIStreamStart,
  isOpenAIStreamPreamble,
  openAIStreamStartFollows,
} from './openai/stream-start.ts';
import { classifyOpenRouterResponse } from './openrouter/errors.ts';
import {
  encodeOpenRouterPassthrough,
  encodeOpenRouterRequest,
  type OpenRouterOptions,
} from './openrouter/request.ts';
import { tapSse } from './tap.ts';
import { classifyTransportError } from './upstream-error.ts';

export type { AdapterName };

export function createAnthropicAdapter(config: AdapterConfig): Adapter {
  return {
    name: 'anthropic',
    wire: 'anthropic',
    encodeRequest: (req, model) => encodeAnthropicRequest(req, model, config),
    encodePassthrough: (input) => encodeAnthropicPassthrough(fitToModel(input), config),
    encodeCountTokens: (input) => encodeAnthropicCountTokens(fitToModel(input), config),
    decodeResponse: decodeAnthropicResponse,
    createStreamDecoder: createAnthropicStreamDecoder,
    decodeStream: (events) => runStreamDecoder(events, createAnthropicStreamDecoder()),
    tapStream: (body, opts = {}) =>
      tapSse(
        body,
        createAnthropicStreamDecoder(),
        opts.model === undefined ? undefined : rewriteAnthropicFrame(opts.model),
        opts,
      ),
    classifyResponse: classifyAnthropicResponse,
    classifyResponseBody: classifyAnthropicResponseBody,
    classifyStreamStart: (first) => {
      const failure = classifyAnthropicStreamStart(first);
      return failure === null ? null : { failure };
    },
    classifyNetworkError: classifyTransportError,
  };
}

export function createOpenAIAdapter(config: AdapterConfig): Adapter {
  return {
    ...openaiWire('openai', {
      encodeRequest: (req, model) => encodeOpenAIRequest(req, model, config, { flavor: 'openai' }),
      encodePassthrough: (input) => encodeOpenAIPassthrough(input, config, { flavor: 'openai' }),
      classifyResponse: classifyOpenAIResponse,
    }),
    responses: {
      encodePassthrough: (input) => encodeResponsesPassthrough(input, config),
      decodeResponse: decodeResponsesObject,
      classifyResponseBody: classifyResponsesBody,
      tapStream: (body, opts = {}) =>
        tapSse(
          body,
          createResponsesStreamDecoder(),
          opts.model === undefined ? undefined : rewriteResponsesFrame(opts.model),
          opts,
        ),
    },
  };
}

export function createOpenRouterAdapter(config: AdapterConfig, opts: OpenRouterOptions = {}): Adapter {
  return openaiWire('openrouter', {
    encodeRequest: (req, model) => encodeOpenRouterRequest(req, model, config, opts),
    encodePassthrough: (input) => encodeOpenRouterPassthrough(input, config, opts),
    classifyResponse: classifyOpenRouterResponse,
  });
}

/** Adapters for the providers that have a key (DECISIONS §4: no key → provider_unavailable). */
export function createAdapters(
  configs: Partial<Record<AdapterName, AdapterConfig>>,
  openrouter: OpenRouterOptions = {},
): Partial<Record<AdapterName, Adapter>> {
  const out: Partial<Record<AdapterName, Adapter>> = {};
  if (configs.anthropic?.apiKey) out.anthropic = createAnthropicAdapter(configs.anthropic);
  if (configs.openai?.apiKey) out.openai = createOpenAIAdapter(configs.openai);
  if (configs.openrouter?.apiKey) out.openrouter = createOpenRouterAdapter(configs.openrouter, openrouter);
  return out;
}

/** Decodes an upstream SSE body with `adapter` (convenience for the non-tap path). */
export function decodeUpstreamStream(adapter: Adapter, body: AsyncIterable<Uint8Array>) {
  return adapter.decodeStream(decodeSse(body));
}

// --- internal ---

function openaiWire(
  name: 'openai' | 'openrouter',
  parts: Pick<Adapter, 'encodeRequest' | 'encodePassthrough' | 'classifyResponse'>,
): Adapter {
  return {
    name,
    wire: 'openai',
    ...parts,
    decodeResponse: decodeOpenAIResponse,
    classifyResponseBody: classifyOpenAIResponseBody(parts.classifyResponse),
    createStreamDecoder: createOpenAIStreamDecoder,
    decodeStream: (events) => runStreamDecoder(events, createOpenAIStreamDecoder()),
    tapStream: (body, opts = {}) => {
      const include = opts.includeUsageChunk ?? true;
      const rewrite =
        opts.model === undefined && include ? undefined : rewriteOpenAIFrame(opts.model, include);
      return tapSse(body, createOpenAIStreamDecoder(), rewrite, opts);
    },
    classifyStreamStart: classifyOpenAIStreamStart(parts.classifyResponse),
    isStreamPreamble: isOpenAIStreamPreamble,
    streamStartFollows: openAIStreamStartFollows,
    classifyNetworkError: classifyTransportError,
  };
}

/**
 * @module CanonicalRequest → OpenRouter request: the OpenAI mapping plus OpenRouter's differences
 * (wire-formats §3): `max_tokens`, `top_k`, `reasoning` object, `reasoning_details` replay, `cache_control`
 * on parts, a default `provider` routing object, attribution headers.
 */
import type { CanonicalRequest } from '../../canonical/request.ts';
import type { AdapterConfig, PassthroughInput, UpstreamCall } from '../adapter.ts';
import { encodeOpenAIPassthrough, encodeOpenAIRequest } from '../openai/request.ts';

export interface OpenRouterOptions {
  /** `HTTP-Referer`: the app URL OpenRouter attributes usage to. */
  referer?: string;
  /** `X-OpenRouter-Title` (and legacy `X-Title`): the app name. */
  title?: string;
  /** Default `provider` routing object (`order`, `allow_fallbacks`, `sort`, …) when the client sent none. */
  provider?: Record<string, unknown>;
}

export function encodeOpenRouterRequest(
  req: CanonicalRequest,
  model: string,
  config: AdapterConfig,
  opts: OpenRouterOptions = {},
): UpstreamCall {
  return encodeOpenAIRequest(req, model, withAttribution(config, opts), {
    flavor: 'openrouter',
    provider: opts.provider,
  });
}

export function encodeOpenRouterPassthrough(
  input: PassthroughInput,
  config: AdapterConfig,
  opts: OpenRouterOptions = {},
): UpstreamCall {
  return encodeOpenAIPassthrough(input, withAttribution(config, opts), {
    flavor: 'openrouter',
    provider: opts.provider,
  });
}

// --- internal ---

function withAttribution(config: AdapterConfig, opts: OpenRouterOptions): AdapterConfig {
  const headers: Record<string, string> = { ...config.headers };
  if (opts.referer) headers['http-referer'] = opts.referer;
  if (opts.title) {
    headers['x-openrouter-title'] = opts.title;
    headers['x-title'] = opts.title;
  }
  return { ...config, headers };
}

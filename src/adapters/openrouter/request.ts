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

/**
 * OpenRouter's own model routing fields (`models`: a fallback list, `route`) would let a client be served
 * by models the gateway did not route to — outside a key's allowed_models and priced as another model —
 * so the gateway, which did the routing, removes them (the body is re-serialised only in that case).
 */
export const OPENROUTER_ROUTING_FIELDS = ['models', 'route'] as const;

export function encodeOpenRouterPassthrough(
  input: PassthroughInput,
  config: AdapterConfig,
  opts: OpenRouterOptions = {},
): UpstreamCall {
  if (OPENROUTER_ROUTING_FIELDS.some((f) => input.body[f] !== undefined)) {
    const body = { ...input.body };
    for (const f of OPENROUTER_ROUTING_FIELDS) delete body[f];
    input = { ...input, body, bodyText: JSON.stringify(body) };
  }
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

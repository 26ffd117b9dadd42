/**
 * @module Request parameters a translation has no equivalent for and that change no answer's shape: the
 * translated call leaves them out and says so (wire-formats §5.1 last row: "drop with a warning header/log")
 * in the `svc-dropped-params` response header and the request log line. What would change the answer's shape
 * (log probabilities, audio output, web search, n > 1, MCP servers) is a 400 instead (the adapters' encoders).
 * Fields that only steer one provider's own storage or caching (`store`, `metadata`, `prompt_cache_key`) are
 * left out without a word; on the same wire every field is forwarded as sent.
 */
import type { AdapterName } from '../adapters/names.ts';
import type { InboundShape } from '../events/catalog.ts';

/** Response header listing the request parameters a translated call was sent without. */
export const DROPPED_PARAMS_HEADER = 'svc-dropped-params';

/** OpenAI sampling and serving knobs the Messages API does not take (Chat Completions). */
const CHAT_NOT_FOR_CLAUDE = [
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
  'service_tier',
  'prediction',
  'verbosity',
] as const;

/** Anthropic sampling and serving knobs the Chat Completions API of OpenAI does not take. */
const MESSAGES_NOT_FOR_OPENAI = ['top_k', 'service_tier', 'inference_geo', 'speed'] as const;

/**
 * Per inbound shape, per adapter of another wire: the parameters left out (dotted for nested fields). The
 * Responses API shares `service_tier` and (under `text`) `verbosity` with Chat Completions.
 */
const NOT_TRANSLATED: Record<InboundShape, Partial<Record<AdapterName, readonly string[]>>> = {
  openai: { anthropic: CHAT_NOT_FOR_CLAUDE },
  openai_responses: {
    anthropic: ['service_tier', 'text.verbosity'],
    openrouter: ['service_tier', 'text.verbosity'],
  },
  anthropic: {
    openai: MESSAGES_NOT_FOR_OPENAI,
    // OpenRouter takes top_k
    openrouter: MESSAGES_NOT_FOR_OPENAI.filter((name) => name !== 'top_k'),
  },
};

/** The parameters of a translated `body` (of `shape`) that a call to a model on `adapter` is sent without. */
export function droppedParams(
  body: Record<string, unknown>,
  shape: InboundShape,
  adapter: AdapterName,
): string[] {
  return (NOT_TRANSLATED[shape][adapter] ?? []).filter((name) => valueAt(body, name) != null);
}

function valueAt(body: Record<string, unknown>, path: string): unknown {
  let value: unknown = body;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * @module A model's long-context window (models.yaml `long_context`): which window a request gets, and which
 * prices a call pays. Anthropic opens Claude Sonnet 4 / 4.5's 1M-token window only for a request whose
 * `anthropic-beta` header names `context-1m-2025-08-07`; without it the window stays 200,000 tokens. A
 * `long_context` without a beta is a price step every request meets (Claude Haiku 5.5, GPT-6.2 Sol). A call
 * whose whole input (uncached, cache reads, cache writes) exceeds the threshold is billed whole, input and
 * output, at the long-context rates.
 */
import type { CanonicalRequest } from '../canonical/request.ts';
import type { LongContext, ModelEntry, ModelPrices } from './model-schema.ts';

/** The `anthropic-beta` values of a request from an Anthropic client (none from any other wire). */
export function anthropicBetasOf(req: CanonicalRequest): readonly string[] {
  const header =
    req.passthrough?.wire === 'anthropic' ? req.passthrough.headers['anthropic-beta'] : undefined;
  return header ? parseBetas(header) : NONE;
}

/** `anthropic-beta` is a comma-separated list (several header lines arrive joined by ", "). */
export function parseBetas(header: string): readonly string[] {
  return header
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
}

/** The model's long-context window when the request's betas open it (a step without a beta: always), else null. */
export function openedLongContext(
  model: ModelEntry,
  betas: readonly string[] | undefined,
): LongContext | null {
  const long = model.long_context;
  if (!long) return null;
  return long.beta === null || betas?.includes(long.beta) ? long : null;
}

/** The context window a request with these betas gets on the model. */
export function contextWindowOf(model: ModelEntry, betas: readonly string[] | undefined): number {
  return openedLongContext(model, betas)?.max_context_tokens ?? model.capabilities.max_context_tokens;
}

/**
 * The prices of a call that sent `inputTokens` in all (cached or not): the long-context prices when the model
 * has them and the input exceeds their threshold (only a request the window was opened for, or any request
 * on a step without a beta, can), else the standard ones.
 */
export function pricesForInput(model: ModelEntry, inputTokens: number): ModelPrices | null {
  const long = model.long_context;
  if (long?.prices && inputTokens > long.above_input_tokens) return long.prices;
  return model.prices;
}

const NONE: readonly string[] = [];

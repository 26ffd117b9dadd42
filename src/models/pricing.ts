/**
 * @module Exact call cost from the price table: tokens × USD per million tokens, in decimal
 * arithmetic (DECISIONS §3), plus the worst case a budget reservation must hold (of token-bound.ts); a
 * call above a model's long-context threshold is priced whole at its long-context rates.
 */
import { add, compare, type Decimal, formatDecimal, mul, parseDecimal, ZERO } from '../lib/decimal.ts';
import { pricesForInput } from './long-context.ts';
import type { ModelEntry, ModelPrices, ServiceTier } from './model-schema.ts';
import type { ModelRegistry } from './registry.ts';
import type { TokenBound } from './token-bound.ts';

/** Token counts as stamped on llm.call_completed (`input_tokens` is uncached input only). */
export interface PricedUsage {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  /** The part of cache_creation_input_tokens written for one hour (priced at cache_write_1h). */
  cache_creation_1h_input_tokens?: number | null;
  /** Server-side web searches the provider ran for the call (priced at web_search per 1,000). */
  web_search_requests?: number | null;
  /** The service tier the provider says the call ran at (`priority`, `fast`…; `default`, `standard`: none). */
  service_tier?: string | null;
}

export interface CallCost {
  /** Decimal string with at least 6 fraction digits, exact (`0.000450`). */
  cost_usd: string;
  cost: Decimal;
  /** False when the model has no prices: cost is "0" and the caller must report it loudly. */
  priced: boolean;
  pricing_version: string;
  /** The paid service tier whose prices the call was billed at (`priority`, `flex`, `fast`); absent: standard. */
  service_tier?: string;
}

const PER_TOKEN = parseDecimal('0.000001');
const PER_THOUSAND = parseDecimal('0.001');

/**
 * Cost of one finished call under the current table: at the prices of the paid service tier it ran at (the
 * tier the provider's answer names, else `askedTier`, the one the request asked for) when the model has
 * them; else at the model's long-context prices when its whole input (uncached + cache read + cache write)
 * exceeds their threshold, else at its standard prices. `tier` overrides the window for token sums of many
 * calls, whose total says nothing of any one call.
 */
export function priceCall(
  registry: ModelRegistry,
  modelId: string,
  usage: PricedUsage,
  tier?: 'standard' | 'long',
  askedTier?: string,
): CallCost {
  const entry = registry.get(modelId);
  if (!entry?.prices) return unpriced(registry);
  const served = usage.service_tier ?? askedTier;
  const paid = tierPrices(entry, served);
  const prices =
    paid ??
    (tier === undefined
      ? pricesForInput(entry, totalInput(usage))
      : tier === 'long'
        ? (entry.long_context?.prices ?? entry.prices)
        : entry.prices);
  if (!prices) return unpriced(registry);
  const p = parsedPrices(prices);
  let total = ZERO;
  total = add(total, mul(tokens(usage.input_tokens), p.input));
  total = add(total, mul(tokens(usage.cached_input_tokens), p.cache_read));
  const written = usage.cache_creation_input_tokens ?? 0;
  const hour = Math.min(written, usage.cache_creation_1h_input_tokens ?? 0);
  total = add(total, mul(tokens(written - hour), p.cache_write));
  total = add(total, mul(tokens(hour), p.cache_write_1h));
  total = add(total, mul(tokens(usage.output_tokens), p.output));
  const searches = mul(tokens(usage.web_search_requests), p.web_search);
  const cost = priced(registry, add(mul(total, PER_TOKEN), mul(searches, PER_THOUSAND)));
  if (paid) cost.service_tier = served;
  return cost;
}

/**
 * The most a call can cost: every input token of the bound at the dearest input rate (plain, cache read,
 * cache write, and the one-hour write when the request asks for it) and every output token at the output
 * rate. Those are the long-context rates when the request opens the model's long-context window and the
 * bound's input exceeds their threshold, and those of the paid service tier the request asks for
 * (`askedTier`) when the model has them. Used to reserve budget before the call.
 */
export function worstCaseCost(
  registry: ModelRegistry,
  modelId: string,
  bound: TokenBound,
  askedTier?: string,
): CallCost {
  const entry = registry.get(modelId);
  if (!entry?.prices) return unpriced(registry);
  const p = parsedPrices(
    tierPrices(entry, askedTier) ??
      (bound.longContext ? pricesForInput(entry, bound.inputTokens)! : entry.prices),
  );
  const rates = [p.cache_read, p.cache_write, ...(bound.hourCache ? [p.cache_write_1h] : [])];
  const maxIn = rates.reduce((a, b) => (compare(b, a) > 0 ? b : a), p.input);
  const total = add(mul(tokens(bound.inputTokens), maxIn), mul(tokens(bound.outputTokens), p.output));
  return priced(registry, mul(total, PER_TOKEN));
}

/** The model's prices for a paid service tier (`priority`, `flex`, `fast`), or null (standard, unknown). */
export function tierPrices(entry: ModelEntry, serviceTier: string | null | undefined): ModelPrices | null {
  if (!serviceTier || !entry.service_tiers) return null;
  return Object.hasOwn(entry.service_tiers, serviceTier)
    ? (entry.service_tiers[serviceTier as ServiceTier] ?? null)
    : null;
}

// --- internal ---

interface ParsedPrices {
  input: Decimal;
  output: Decimal;
  cache_read: Decimal;
  cache_write: Decimal;
  cache_write_1h: Decimal;
  web_search: Decimal;
}

// Parsed once per price object: the table is immutable, so the hot path never re-parses text.
const parsedCache = new WeakMap<ModelPrices, ParsedPrices>();

function parsedPrices(prices: ModelPrices): ParsedPrices {
  let p = parsedCache.get(prices);
  if (!p) {
    p = {
      input: parseDecimal(prices.input),
      output: parseDecimal(prices.output),
      cache_read: parseDecimal(prices.cache_read),
      cache_write: parseDecimal(prices.cache_write),
      cache_write_1h: parseDecimal(prices.cache_write_1h),
      web_search: parseDecimal(prices.web_search),
    };
    parsedCache.set(prices, p);
  }
  return p;
}

/** Input tokens of the call, cached or not: what a long-context threshold is compared with. */
export function totalInput(usage: PricedUsage): number {
  const n = (v: number | null | undefined) =>
    v !== null && v !== undefined && Number.isFinite(v) && v > 0 ? v : 0;
  return n(usage.input_tokens) + n(usage.cached_input_tokens) + n(usage.cache_creation_input_tokens);
}

function tokens(n: number | null | undefined): Decimal {
  if (n === null || n === undefined || !Number.isFinite(n) || n <= 0) return ZERO;
  return { units: BigInt(Math.trunc(n)), scale: 0 };
}

function priced(registry: ModelRegistry, cost: Decimal): CallCost {
  return { cost_usd: formatDecimal(cost), cost, priced: true, pricing_version: registry.pricingVersion };
}

function unpriced(registry: ModelRegistry): CallCost {
  return { cost_usd: '0', cost: ZERO, priced: false, pricing_version: registry.pricingVersion };
}

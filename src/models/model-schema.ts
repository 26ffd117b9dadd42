/**
 * @module The shape of models.yaml (DECISIONS §2, spec 2 §Model entry): per model the canonical id,
 * adapter, tier, aliases, can_delegate, capabilities and prices in USD per million tokens.
 */
import * as v from 'valibot';

import { type AdapterName, PROVIDERS } from '../adapters/names.ts';

/** The adapters a model may name: the provider set of adapters/names.ts. */
export const ADAPTERS = PROVIDERS;
export type { AdapterName };

export const TIERS = ['fast', 'balanced', 'deep'] as const;
export type Tier = (typeof TIERS)[number];

/** `<adapter>:<model_name>`; only the first colon separates (`openrouter:x/y:free` is valid). */
export const CANONICAL_ID_RE = new RegExp(`^(${ADAPTERS.join('|')}):(\\S+)$`);

const PRICE_MESSAGE = 'must be a non-negative decimal number of USD per million tokens, such as 3 or 0.30';

/**
 * A price is a YAML integer or a plain decimal kept as its source text by config-yaml.ts, so
 * `0.30` never becomes a float. The output is always a decimal string.
 */
export const PriceSchema = v.pipe(
  v.union(
    [
      v.pipe(v.number(), v.safeInteger(PRICE_MESSAGE), v.minValue(0, PRICE_MESSAGE)),
      v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/, PRICE_MESSAGE)),
    ],
    PRICE_MESSAGE,
  ),
  v.transform((value) => String(value)),
);

export const PricesSchema = v.strictObject({
  input: PriceSchema,
  output: PriceSchema,
  /** Defaults to `input` when absent. */
  cache_read: v.optional(PriceSchema),
  /** Defaults to `input` when absent (OpenAI-style caches charge no write premium). */
  cache_write: v.optional(PriceSchema),
  /**
   * Cache writes with a one-hour lifetime (Anthropic `cache_control.ttl: "1h"`); defaults to twice
   * `input`, Anthropic's rate for them (five-minute writes are `cache_write`).
   */
  cache_write_1h: v.optional(PriceSchema),
  /**
   * Server-side web searches, USD per 1,000 (Anthropic `usage.server_tool_use.web_search_requests`, OpenAI
   * `web_search_call` items); defaults to 10, both providers' list price, on anthropic and openai models
   * and to 0 on openrouter ones (their searches are not counted).
   */
  web_search: v.optional(PriceSchema),
});

const TokenCountSchema = v.pipe(
  v.number('must be an integer'),
  v.safeInteger('must be an integer'),
  v.minValue(1, 'must be at least 1'),
);

export const CapabilitiesSchema = v.strictObject({
  supports_images: v.boolean('must be true or false'),
  supports_tools: v.boolean('must be true or false'),
  max_context_tokens: TokenCountSchema,
  max_output_tokens: TokenCountSchema,
});

/**
 * Prices above a long-context threshold (USD per million tokens): `input` and `output` required, the cache
 * rates defaulting as in `prices` (read and five-minute write to `input`, one-hour write to twice `input`).
 */
export const LongContextPricesSchema = v.strictObject({
  input: PriceSchema,
  output: PriceSchema,
  cache_read: v.optional(PriceSchema),
  cache_write: v.optional(PriceSchema),
  cache_write_1h: v.optional(PriceSchema),
});

/**
 * Either a larger context window the provider opens for a request naming a beta (Anthropic's `anthropic-beta:
 * context-1m-2025-08-07`: `max_context_tokens` and `beta`), or, without `beta`, a price step within the
 * model's own window that every call meets by its input size alone (Claude Haiku 5.5 above 100,000 prompt
 * tokens, GPT-6.2 Sol above 272,000: `above_input_tokens` and `prices` required). Either way a call whose
 * whole input (uncached, cache reads and cache writes) exceeds `above_input_tokens` (default: the model's
 * standard max_context_tokens) costs `prices`; without `prices` such a call costs the standard prices.
 */
export const LongContextSchema = v.strictObject({
  max_context_tokens: v.optional(TokenCountSchema),
  beta: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.regex(/^[A-Za-z0-9._-]+$/, 'must be one anthropic-beta value, such as context-1m-2025-08-07'),
    ),
  ),
  above_input_tokens: v.optional(TokenCountSchema),
  prices: v.optional(LongContextPricesSchema),
});

/**
 * The paid service tiers a request may ask for, by the provider's wire value: OpenAI `service_tier`
 * `"priority"` and `"flex"`, Anthropic fast mode (`speed: "fast"`).
 */
export const SERVICE_TIERS = ['priority', 'flex', 'fast'] as const;
export type ServiceTier = (typeof SERVICE_TIERS)[number];

/**
 * Per paid service tier, the prices of a call the provider ran at it (rates as in `long_context.prices`). A
 * request asking for a tier the model has no prices for is sent at the standard tier (the gateway leaves the
 * field out and names it in svc-dropped-params).
 */
export const ServiceTiersSchema = v.strictObject(
  Object.fromEntries(SERVICE_TIERS.map((tier) => [tier, v.optional(LongContextPricesSchema)])) as Record<
    ServiceTier,
    v.OptionalSchema<typeof LongContextPricesSchema, undefined>
  >,
);

export const AliasSchema = v.pipe(
  v.string('must be a string'),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be letters, digits, ".", "_" or "-" (no colon)'),
);

export const ModelSchema = v.strictObject({
  id: v.pipe(
    v.string('must be a string'),
    v.regex(
      CANONICAL_ID_RE,
      'must be a canonical id <adapter>:<model_name> with adapter anthropic, openai or openrouter',
    ),
  ),
  /** Optional; when present it must equal the id's prefix. */
  adapter: v.optional(v.picklist(ADAPTERS, 'must be anthropic, openai or openrouter')),
  tier: v.picklist(TIERS, 'must be fast, balanced or deep'),
  aliases: v.optional(v.array(AliasSchema, 'must be a list of strings'), []),
  can_delegate: v.optional(v.boolean('must be true or false'), false),
  capabilities: CapabilitiesSchema,
  /** Absent: the model is unpriced and its calls cost "0" with `priced: false`. */
  prices: v.optional(PricesSchema),
  /** Absent: the model has one context window and one set of prices. */
  long_context: v.optional(LongContextSchema),
  /** Absent: every call costs the standard (or long-context) prices, and a paid tier is never asked for. */
  service_tiers: v.optional(ServiceTiersSchema),
});

export const ModelsFileSchema = v.strictObject({
  pricing_version: v.pipe(
    v.union([v.string(), v.number()], 'must be a string'),
    v.transform(String),
    v.minLength(1, 'must not be empty'),
  ),
  models: v.pipe(
    v.array(ModelSchema, 'must be a list of models'),
    v.minLength(1, 'must list at least one model'),
  ),
});

export type ModelsFile = v.InferOutput<typeof ModelsFileSchema>;
export type Capabilities = v.InferOutput<typeof CapabilitiesSchema>;

/** Prices in USD per million tokens, decimal strings, defaults filled in. */
export interface ModelPrices {
  input: string;
  output: string;
  cache_read: string;
  cache_write: string;
  cache_write_1h: string;
  /** USD per 1,000 server-side web searches. */
  web_search: string;
}

/** A model's long-context window or price step, defaults filled in (prices null: the standard prices apply). */
export interface LongContext {
  /** The window the beta opens; without a beta, the model's own (capabilities.max_context_tokens). */
  max_context_tokens: number;
  /** The `anthropic-beta` value that opens the window; null: a price step every request meets by its size. */
  beta: string | null;
  /** A call whose input, cached or not, exceeds this many tokens is priced at `prices`. */
  above_input_tokens: number;
  prices: ModelPrices | null;
}

/** One registry entry; the first six fields are the spec 2 model entry (minus availability). */
export interface ModelEntry {
  id: string;
  adapter: AdapterName;
  tier: Tier;
  can_delegate: boolean;
  aliases: string[];
  capabilities: Capabilities;
  /** The provider's own name for the model: the id after the first colon. */
  model_name: string;
  prices: ModelPrices | null;
  /** The larger window a beta opens, with its prices; null when the model has none. */
  long_context: LongContext | null;
  /** Prices of the paid service tiers the model has them for (defaults filled in); null when none. */
  service_tiers: Partial<Record<ServiceTier, ModelPrices>> | null;
}

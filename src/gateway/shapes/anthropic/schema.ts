/**
 * @module valibot schemas of the Anthropic Messages request (wire-formats §1.3–1.6). Loose objects: unknown
 * fields are kept, only the types the gateway relies on are checked.
 */
import * as v from 'valibot';
import { ModelNameSchema } from '../shape.ts';

const Int = v.pipe(v.number(), v.integer());

export const CacheControlSchema = v.looseObject({
  type: v.literal('ephemeral'),
  ttl: v.optional(v.picklist(['5m', '1h'])),
});

export const TextBlockSchema = v.looseObject({
  type: v.literal('text'),
  text: v.string(),
  cache_control: v.nullish(CacheControlSchema),
});

export const ImageBlockSchema = v.looseObject({
  type: v.literal('image'),
  source: v.looseObject({
    type: v.string(),
    media_type: v.optional(v.string()),
    data: v.optional(v.string()),
    url: v.optional(v.string()),
  }),
  cache_control: v.nullish(CacheControlSchema),
});

export const ToolUseBlockSchema = v.looseObject({
  type: v.literal('tool_use'),
  id: v.string(),
  name: v.string(),
  input: v.record(v.string(), v.unknown()),
  cache_control: v.nullish(CacheControlSchema),
});

export const ToolResultBlockSchema = v.looseObject({
  type: v.literal('tool_result'),
  tool_use_id: v.string(),
  content: v.optional(v.union([v.string(), v.array(v.looseObject({ type: v.string() }))])),
  is_error: v.optional(v.boolean()),
  cache_control: v.nullish(CacheControlSchema),
});

export const ThinkingBlockSchema = v.looseObject({
  type: v.literal('thinking'),
  thinking: v.string(),
  signature: v.optional(v.string()),
});

export const RedactedThinkingBlockSchema = v.looseObject({
  type: v.literal('redacted_thinking'),
  data: v.string(),
});

export const BlockHeadSchema = v.looseObject({ type: v.string() });

export const MessageSchema = v.looseObject({
  role: v.picklist(['user', 'assistant', 'system']),
  content: v.union([v.string(), v.array(BlockHeadSchema)]),
});

export const ToolSchema = v.looseObject({
  name: v.string(),
  type: v.optional(v.string()),
  description: v.optional(v.string()),
  input_schema: v.optional(v.record(v.string(), v.unknown())),
  strict: v.optional(v.boolean()),
  cache_control: v.nullish(CacheControlSchema),
});

const Parallel = { disable_parallel_tool_use: v.optional(v.boolean()) };
export const ToolChoiceSchema = v.variant('type', [
  v.looseObject({ type: v.literal('auto'), ...Parallel }),
  v.looseObject({ type: v.literal('any'), ...Parallel }),
  v.looseObject({ type: v.literal('tool'), name: v.string(), ...Parallel }),
  v.looseObject({ type: v.literal('none') }),
]);

export const ThinkingSchema = v.looseObject({
  type: v.picklist(['enabled', 'adaptive', 'disabled', 'between_tools']),
  budget_tokens: v.optional(Int),
  // the API adds display modes (Claude Code's stream-json mode asks for `updates`): any string reaches an
  // Anthropic model as sent; a translation keeps only the two it can map
  display: v.optional(v.string()),
});

/** A structured-output format (`{type: "json_schema", schema}`). */
export const OutputFormatSchema = v.looseObject({
  type: v.string(),
  schema: v.optional(v.record(v.string(), v.unknown())),
});

export const OutputConfigSchema = v.looseObject({
  effort: v.optional(v.picklist(['low', 'medium', 'high', 'xhigh', 'max'])),
  format: v.optional(OutputFormatSchema),
});

/** Top level: what `validate` checks on the fast path too. */
export const AnthropicRequestSchema = v.looseObject({
  model: ModelNameSchema,
  max_tokens: v.pipe(Int, v.minValue(0)),
  messages: v.array(MessageSchema),
  system: v.optional(v.union([v.string(), v.array(TextBlockSchema)])),
  stop_sequences: v.optional(v.array(v.string())),
  stream: v.optional(v.boolean()),
  temperature: v.optional(v.number()),
  top_p: v.optional(v.number()),
  top_k: v.optional(Int),
  tools: v.optional(v.array(ToolSchema)),
  tool_choice: v.optional(ToolChoiceSchema),
  thinking: v.optional(ThinkingSchema),
  metadata: v.optional(v.looseObject({ user_id: v.nullish(v.string()) })),
  output_config: v.optional(OutputConfigSchema),
  // the beta's top-level form, deprecated for output_config.format but still sent by the SDK's beta API
  output_format: v.nullish(OutputFormatSchema),
});
export type AnthropicRequest = v.InferOutput<typeof AnthropicRequestSchema>;

/** Fields decode maps into the canonical request; all others travel as passthrough. */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'metadata',
  'output_config',
  'output_format',
]);

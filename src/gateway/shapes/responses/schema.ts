/**
 * @module valibot schemas of the OpenAI Responses API request (`POST /v1/responses`; openai-node
 * `ResponseCreateParams`). Loose objects: unknown fields are kept and reach an OpenAI model unchanged.
 * Input items are checked by `type` in decode.ts, so a new item type is a clear 400 only where it must
 * be translated.
 */
import * as v from 'valibot';
import { REASONING_EFFORTS } from '../../../canonical/request.ts';
import { ModelNameSchema } from '../shape.ts';

const Int = v.pipe(v.number(), v.integer());

export const ItemSchema = v.looseObject({ type: v.optional(v.string()) });

/** A message item: `{role, content}` with or without `type: "message"` (EasyInputMessage). */
export const MessageItemSchema = v.looseObject({
  type: v.optional(v.literal('message')),
  role: v.picklist(['user', 'assistant', 'system', 'developer']),
  content: v.union([v.string(), v.array(v.looseObject({ type: v.string() }))]),
  id: v.optional(v.string()),
});

export const InputTextSchema = v.looseObject({ type: v.string(), text: v.string() });
export const InputImageSchema = v.looseObject({
  type: v.literal('input_image'),
  image_url: v.optional(v.nullable(v.string())),
  file_id: v.optional(v.nullable(v.string())),
  // `original` and null are in the API too (Codex's view_image asks for `original`): an OpenAI model gets
  // them as sent, a translation keeps only the levels chat models know
  detail: v.nullish(v.string()),
});

export const FunctionCallSchema = v.looseObject({
  type: v.literal('function_call'),
  call_id: v.string(),
  name: v.string(),
  /** Set when the function is a member of a `namespace` tool. */
  namespace: v.nullish(v.string()),
  arguments: v.string(),
  id: v.optional(v.string()),
});

export const FunctionCallOutputSchema = v.looseObject({
  type: v.literal('function_call_output'),
  call_id: v.string(),
  output: v.union([v.string(), v.array(v.looseObject({ type: v.string() }))]),
});

/**
 * A call of a custom tool (free-text input: Codex's apply_patch, its code-mode exec) and its output, replayed
 * in the history; translated as a function's call whose input is `{input: <text>}`.
 */
export const CustomToolCallSchema = v.looseObject({
  type: v.literal('custom_tool_call'),
  call_id: v.string(),
  name: v.string(),
  namespace: v.nullish(v.string()),
  input: v.string(),
});

export const CustomToolCallOutputSchema = v.looseObject({
  type: v.literal('custom_tool_call_output'),
  call_id: v.string(),
  output: v.union([v.string(), v.array(v.looseObject({ type: v.string() }))]),
});

export const ReasoningItemSchema = v.looseObject({
  type: v.literal('reasoning'),
  id: v.optional(v.string()),
  summary: v.optional(v.array(v.looseObject({ type: v.string(), text: v.optional(v.string()) }))),
  content: v.nullish(v.array(v.looseObject({ type: v.string(), text: v.optional(v.string()) }))),
  encrypted_content: v.nullish(v.string()),
});

export const ToolSchema = v.looseObject({
  type: v.string(),
  name: v.optional(v.string()),
  description: v.nullish(v.string()),
  parameters: v.nullish(v.record(v.string(), v.unknown())),
  strict: v.nullish(v.boolean()),
});

/** A `namespace` tool: function (or custom) tools grouped under one name (openai-node `NamespaceTool`). */
export const NamespaceToolSchema = v.looseObject({
  type: v.literal('namespace'),
  name: v.string(),
  description: v.nullish(v.string()),
  tools: v.array(ToolSchema),
});

export const ToolChoiceSchema = v.union([
  v.picklist(['auto', 'none', 'required']),
  v.looseObject({ type: v.literal('function'), name: v.string() }),
  v.looseObject({
    type: v.literal('allowed_tools'),
    mode: v.picklist(['auto', 'required']),
    tools: v.array(v.looseObject({})),
  }),
  v.looseObject({ type: v.string() }),
]);

export const TextFormatSchema = v.variant('type', [
  v.looseObject({ type: v.literal('text') }),
  v.looseObject({ type: v.literal('json_object') }),
  v.looseObject({
    type: v.literal('json_schema'),
    name: v.optional(v.string()),
    description: v.optional(v.string()),
    schema: v.record(v.string(), v.unknown()),
    strict: v.nullish(v.boolean()),
  }),
]);

/** Top level: what `validate` checks on the fast path too. */
export const ResponsesRequestSchema = v.looseObject({
  model: ModelNameSchema,
  input: v.union([v.string(), v.array(ItemSchema)]),
  instructions: v.nullish(v.string()),
  max_output_tokens: v.nullish(v.pipe(Int, v.minValue(1))),
  temperature: v.nullish(v.number()),
  top_p: v.nullish(v.number()),
  stream: v.nullish(v.boolean()),
  store: v.nullish(v.boolean()),
  previous_response_id: v.nullish(v.string()),
  tools: v.optional(v.array(ToolSchema)),
  tool_choice: v.optional(ToolChoiceSchema),
  parallel_tool_calls: v.nullish(v.boolean()),
  reasoning: v.nullish(
    v.looseObject({
      effort: v.nullish(v.picklist(REASONING_EFFORTS)),
      summary: v.nullish(v.string()),
    }),
  ),
  text: v.nullish(v.looseObject({ format: v.optional(TextFormatSchema) })),
  include: v.nullish(v.array(v.string())),
  user: v.optional(v.string()),
  safety_identifier: v.optional(v.string()),
});
export type ResponsesRequest = v.InferOutput<typeof ResponsesRequestSchema>;

/**
 * Fields decode maps into the canonical request; all others travel as passthrough (`previous_response_id`
 * among them: the budget's token bound reads it there, since OpenAI bills the response it names as input).
 */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'input',
  'instructions',
  'max_output_tokens',
  'temperature',
  'top_p',
  'stream',
  'store',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'reasoning',
  'text',
  'include',
  'user',
  'safety_identifier',
]);

/**
 * Top-level fields a translation reads elsewhere or leaves out by design: stored state and what only OpenAI
 * runs (refused by name in decode.ts's findOpenAIOnlyPart, or expanded from the gateway's own store), storage,
 * caching and client metadata (left out without a word), the knobs dropped-params.ts names, and
 * `max_tool_calls` (it caps OpenAI's built-in tools, which no other model runs). Any other field (one newer
 * than this gateway) is named in svc-dropped-params when a call is translated.
 */
export const TRANSLATION_HANDLED_FIELDS: ReadonlySet<string> = new Set([
  'previous_response_id',
  'conversation',
  'prompt',
  'background',
  'top_logprobs',
  'service_tier',
  'truncation',
  'max_tool_calls',
  'metadata',
  'client_metadata',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'stream_options',
]);

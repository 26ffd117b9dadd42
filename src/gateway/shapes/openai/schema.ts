/**
 * @module valibot schemas of the OpenAI Chat Completions request (wire-formats §2.2–2.4), plus the
 * OpenRouter extensions an OpenAI-shape client may send (`reasoning`, `reasoning_details`, `top_k`).
 * Loose objects: unknown fields are kept.
 */
import * as v from 'valibot';
import { REASONING_EFFORTS } from '../../../canonical/request.ts';
import { ModelNameSchema } from '../shape.ts';

const Int = v.pipe(v.number(), v.integer());

export const PartSchema = v.looseObject({ type: v.string() });
export const TextPartSchema = v.looseObject({ type: v.literal('text'), text: v.string() });
export const ImagePartSchema = v.looseObject({
  type: v.literal('image_url'),
  image_url: v.looseObject({ url: v.string(), detail: v.optional(v.picklist(['auto', 'low', 'high'])) }),
});

const Content = v.nullish(v.union([v.string(), v.array(PartSchema)]));

export const ToolCallSchema = v.looseObject({
  id: v.string(),
  type: v.optional(v.string()),
  function: v.optional(v.looseObject({ name: v.string(), arguments: v.optional(v.string()) })),
});

export const MessageSchema = v.looseObject({
  role: v.picklist(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: Content,
  tool_calls: v.nullish(v.array(ToolCallSchema)),
  tool_call_id: v.optional(v.string()),
  refusal: v.nullish(v.string()),
  reasoning: v.nullish(v.string()),
  reasoning_details: v.nullish(v.array(v.looseObject({ type: v.string() }))),
});

export const ToolSchema = v.looseObject({
  type: v.string(),
  function: v.optional(
    v.looseObject({
      name: v.string(),
      description: v.optional(v.string()),
      parameters: v.optional(v.record(v.string(), v.unknown())),
      strict: v.nullish(v.boolean()),
    }),
  ),
});

export const ToolChoiceSchema = v.union([
  v.picklist(['auto', 'none', 'required']),
  v.looseObject({ type: v.literal('function'), function: v.looseObject({ name: v.string() }) }),
  v.looseObject({ type: v.literal('custom'), custom: v.looseObject({ name: v.string() }) }),
  v.looseObject({
    type: v.literal('allowed_tools'),
    allowed_tools: v.looseObject({
      mode: v.picklist(['auto', 'required']),
      tools: v.array(v.looseObject({})),
    }),
  }),
]);

export const ResponseFormatSchema = v.variant('type', [
  v.looseObject({ type: v.literal('text') }),
  v.looseObject({ type: v.literal('json_object') }),
  v.looseObject({
    type: v.literal('json_schema'),
    json_schema: v.looseObject({
      name: v.optional(v.string()),
      description: v.optional(v.string()),
      schema: v.optional(v.record(v.string(), v.unknown())),
      strict: v.nullish(v.boolean()),
    }),
  }),
]);

/** Top level: what `validate` checks on the fast path too. */
export const OpenAIRequestSchema = v.looseObject({
  model: ModelNameSchema,
  messages: v.pipe(v.array(MessageSchema), v.minLength(1)),
  max_tokens: v.nullish(v.pipe(Int, v.minValue(0))),
  max_completion_tokens: v.nullish(v.pipe(Int, v.minValue(0))),
  temperature: v.nullish(v.number()),
  top_p: v.nullish(v.number()),
  top_k: v.nullish(Int),
  n: v.nullish(v.pipe(Int, v.minValue(1))),
  stop: v.nullish(v.union([v.string(), v.array(v.string())])),
  stream: v.nullish(v.boolean()),
  stream_options: v.nullish(v.looseObject({ include_usage: v.optional(v.boolean()) })),
  tools: v.optional(v.array(ToolSchema)),
  tool_choice: v.optional(ToolChoiceSchema),
  parallel_tool_calls: v.nullish(v.boolean()),
  response_format: v.optional(ResponseFormatSchema),
  user: v.optional(v.string()),
  safety_identifier: v.optional(v.string()),
  reasoning_effort: v.nullish(v.picklist(REASONING_EFFORTS)),
  reasoning: v.optional(
    v.looseObject({
      effort: v.optional(v.picklist(REASONING_EFFORTS)),
      max_tokens: v.optional(Int),
      enabled: v.optional(v.boolean()),
      exclude: v.optional(v.boolean()),
    }),
  ),
});
export type OpenAIRequest = v.InferOutput<typeof OpenAIRequestSchema>;
export type OpenAIMessage = OpenAIRequest['messages'][number];

/** Fields decode maps into the canonical request; all others travel as passthrough. */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'n',
  'stop',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'user',
  'safety_identifier',
  'reasoning_effort',
  'reasoning',
]);

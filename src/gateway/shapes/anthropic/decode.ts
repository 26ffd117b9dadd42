/**
 * @module Anthropic Messages request → CanonicalRequest. Validates with valibot (400 naming the field) and
 * keeps unknown top-level fields and unknown blocks for a same-wire upstream.
 */
import type * as v from 'valibot';
import type {
  CanonicalMessage,
  ContentBlock,
  ImageBlock,
  RawBlock,
  TextBlock,
} from '../../../canonical/message.ts';
import { unmarkSeal } from '../../../canonical/reasoning-origin.ts';
import type { CanonicalRequest, CanonicalTool, ToolChoice } from '../../../canonical/request.ts';
import { type InboundSummary, parseOrThrow, splitFields } from '../shape.ts';
import {
  type AnthropicRequest,
  AnthropicRequestSchema,
  ImageBlockSchema,
  KNOWN_FIELDS,
  RedactedThinkingBlockSchema,
  TextBlockSchema,
  ThinkingBlockSchema,
  ToolResultBlockSchema,
  ToolUseBlockSchema,
} from './schema.ts';
import { pickAnthropicHeaders } from './version.ts';

/** Top-level validation only (fast path): model, max_tokens, messages, and the other typed fields. */
export function validateAnthropicRequest(body: unknown): InboundSummary {
  const req = parseOrThrow(AnthropicRequestSchema, body);
  return { model: req.model, stream: req.stream === true, include_usage: true };
}

/** Full decode; `headers` supplies `anthropic-version`/`anthropic-beta` for a same-wire upstream. */
export function decodeAnthropicRequest(
  body: unknown,
  headers: Record<string, string | undefined> = {},
): CanonicalRequest {
  const req = parseOrThrow(AnthropicRequestSchema, body);
  const out: CanonicalRequest = {
    model: req.model,
    system: decodeSystem(req.system),
    messages: req.messages.map((m, i) => decodeMessage(m, i)),
    max_tokens: req.max_tokens,
    stream: req.stream === true,
    include_usage: true,
    passthrough: {
      wire: 'anthropic',
      fields: splitFields(req as Record<string, unknown>, KNOWN_FIELDS),
      headers: pickAnthropicHeaders(headers),
    },
  };
  if (req.tools) out.tools = req.tools.map((t, i) => decodeTool(t, `tools.${i}`));
  if (req.tool_choice) out.tool_choice = decodeToolChoice(req.tool_choice);
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.top_k !== undefined) out.top_k = req.top_k;
  if (req.stop_sequences) out.stop_sequences = req.stop_sequences;
  if (req.metadata?.user_id) out.user_id = req.metadata.user_id;
  if (req.thinking) {
    const t = req.thinking;
    // between_tools is a newer adaptive variant; other wires only know "model decides" (choice)
    out.thinking = { type: t.type === 'between_tools' ? 'adaptive' : t.type };
    if (t.budget_tokens !== undefined) out.thinking.budget_tokens = t.budget_tokens;
    if (t.display === 'summarized' || t.display === 'omitted') out.thinking.display = t.display;
  }
  const oc = req.output_config;
  if (oc?.effort) out.reasoning_effort = oc.effort;
  // the deprecated top-level `output_format` asks the same as `output_config.format`
  const format = oc?.format ?? req.output_format;
  if (format?.type === 'json_schema' && format.schema) {
    // Anthropic always constrains the answer to the schema: the strict form of OpenAI's json_schema
    out.response_format = { type: 'json_schema', schema: format.schema, strict: true };
  }
  return out;
}

// --- internal ---

type Msg = AnthropicRequest['messages'][number];
type Head = v.InferOutput<typeof import('./schema.ts').BlockHeadSchema>;

function decodeSystem(system: AnthropicRequest['system']): TextBlock[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  return system.map((b) => text(b.text, b.cache_control));
}

function decodeMessage(m: Msg, i: number): CanonicalMessage {
  const content =
    typeof m.content === 'string'
      ? [{ type: 'text', text: m.content } as TextBlock]
      : m.content.map((b, j) => decodeBlock(b, `messages.${i}.content.${j}`));
  return { role: m.role, content, at: `messages.${i}` };
}

function decodeBlock(b: Head, path: string): ContentBlock {
  switch (b.type) {
    case 'text': {
      // the common block is read as it is; any other is parsed, and the schema's 400 names what is wrong
      const t = isPlainText(b) ? b : parseOrThrow(TextBlockSchema, b, path);
      return text(t.text, t.cache_control);
    }
    case 'image':
      return decodeImage(b, path);
    case 'tool_use': {
      const t = isPlainToolUse(b) ? b : parseOrThrow(ToolUseBlockSchema, b, path);
      return { type: 'tool_use', id: t.id, name: t.name, input: t.input, ...cache(t.cache_control) };
    }
    case 'tool_result': {
      const t = isPlainToolResult(b) ? b : parseOrThrow(ToolResultBlockSchema, b, path);
      const content =
        t.content === undefined
          ? ''
          : typeof t.content === 'string'
            ? t.content
            : t.content.map(
                (c, k) => decodeBlock(c, `${path}.content.${k}`) as TextBlock | ImageBlock | RawBlock,
              );
      return {
        type: 'tool_result',
        tool_use_id: t.tool_use_id,
        content,
        ...(t.is_error !== undefined ? { is_error: t.is_error } : {}),
        ...cache(t.cache_control),
      };
    }
    case 'thinking': {
      const t = parseOrThrow(ThinkingBlockSchema, b, path);
      // the empty signature this gateway hands out for unsigned reasoning is none
      const { seal, origin } = unmarkSeal(t.signature ?? '');
      return {
        type: 'thinking',
        thinking: t.thinking,
        signature: seal || null,
        ...(origin ? { origin } : {}),
      };
    }
    case 'redacted_thinking': {
      const { seal, origin } = unmarkSeal(parseOrThrow(RedactedThinkingBlockSchema, b, path).data);
      return { type: 'redacted_thinking', data: seal, ...(origin ? { origin } : {}) };
    }
    default:
      return { type: 'raw', wire: 'anthropic', value: b, at: path };
  }
}

type TextBlockInput = v.InferOutput<typeof TextBlockSchema>;
type ToolResultBlock = v.InferOutput<typeof ToolResultBlockSchema>;
type ToolUseBlock = v.InferOutput<typeof ToolUseBlockSchema>;

/**
 * A text block TextBlockSchema takes as it is (its type is `text` already): a string and no cache_control or
 * a well-formed one, checked without a parse. Nearly every block of a Messages conversation (Claude Code
 * sends every turn as blocks) is read here, not parsed a second time after the request's own schema.
 */
function isPlainText(b: Head): b is Head & TextBlockInput {
  return typeof b.text === 'string' && isCacheControl(b.cache_control);
}

/**
 * A tool result ToolResultBlockSchema takes as it is, with text or no content (content blocks are parsed:
 * their schema copies them). The same fields are read from it as from the parsed one.
 */
function isPlainToolResult(b: Head): b is Head & ToolResultBlock {
  return (
    typeof b.tool_use_id === 'string' &&
    (b.content === undefined || typeof b.content === 'string') &&
    (b.is_error === undefined || typeof b.is_error === 'boolean') &&
    isCacheControl(b.cache_control)
  );
}

/**
 * A tool call ToolUseBlockSchema takes as it is: string id and name, an input that is a JSON object whose own
 * names the schema's record keeps whole (it copies all but `__proto__`, `prototype` and `constructor`, and
 * would read an array as an object of indexes), and no or a well-formed cache_control. Its input is then the
 * body's own object, which nothing changes (the encoders serialise it).
 */
function isPlainToolUse(b: Head): b is Head & ToolUseBlock {
  const input = b.input;
  return (
    typeof b.id === 'string' &&
    typeof b.name === 'string' &&
    typeof input === 'object' &&
    input !== null &&
    !Array.isArray(input) &&
    !Object.hasOwn(input, '__proto__') &&
    !Object.hasOwn(input, 'prototype') &&
    !Object.hasOwn(input, 'constructor') &&
    isCacheControl(b.cache_control)
  );
}

/** What CacheControlSchema takes, within a nullish member: none, or `ephemeral` with no or a known ttl. */
function isCacheControl(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== 'object') return false;
  const { type, ttl } = value as { type?: unknown; ttl?: unknown };
  return type === 'ephemeral' && (ttl === undefined || ttl === '5m' || ttl === '1h');
}

function decodeImage(b: Head, path: string): ContentBlock {
  const t = parseOrThrow(ImageBlockSchema, b, path);
  const s = t.source;
  if (s.type === 'base64' && s.data !== undefined) {
    return {
      type: 'image',
      source: { type: 'base64', media_type: s.media_type ?? '', data: s.data },
      ...cache(t.cache_control),
    };
  }
  if (s.type === 'url' && s.url !== undefined) {
    return { type: 'image', source: { type: 'url', url: s.url }, ...cache(t.cache_control) };
  }
  return { type: 'raw', wire: 'anthropic', value: b, at: path }; // file sources: Anthropic-only
}

function decodeTool(t: NonNullable<AnthropicRequest['tools']>[number], at: string): CanonicalTool {
  if (t.type !== undefined && t.type !== 'custom') return { type: 'raw', wire: 'anthropic', value: t, at };
  return {
    type: 'function',
    name: t.name,
    input_schema: t.input_schema ?? { type: 'object', properties: {} },
    ...(t.description !== undefined ? { description: t.description } : {}),
    ...(t.strict !== undefined ? { strict: t.strict } : {}),
    ...cache(t.cache_control),
  };
}

function decodeToolChoice(c: NonNullable<AnthropicRequest['tool_choice']>): ToolChoice {
  if (c.type === 'none') return { type: 'none' };
  const parallel =
    c.disable_parallel_tool_use !== undefined
      ? { disable_parallel_tool_use: c.disable_parallel_tool_use }
      : {};
  if (c.type === 'tool') return { type: 'tool', name: c.name, ...parallel };
  return { type: c.type, ...parallel };
}

function text(t: string, cc: { type: 'ephemeral'; ttl?: '5m' | '1h' } | null | undefined): TextBlock {
  return { type: 'text', text: t, ...cache(cc) };
}

function cache(cc: { type: 'ephemeral'; ttl?: '5m' | '1h' } | null | undefined) {
  return cc ? { cache_control: cc.ttl ? { type: cc.type, ttl: cc.ttl } : { type: cc.type } } : {};
}

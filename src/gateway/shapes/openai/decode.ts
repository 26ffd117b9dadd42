/**
 * @module OpenAI Chat Completions request → CanonicalRequest (wire-formats §5.1): leading system/developer
 * messages become `system`, `tool` messages become `tool_result` blocks in user turns, data-URL images become
 * base64 sources typed by their bytes. Unknown top-level fields travel as passthrough.
 */
import {
  type CanonicalMessage,
  type ContentBlock,
  type ImageBlock,
  type RawBlock,
  sniffImageMediaType,
  type TextBlock,
} from '../../../canonical/message.ts';
import { reasoningBlockOf } from '../../../canonical/reasoning-origin.ts';
import type { CanonicalRequest, CanonicalTool, ToolChoice } from '../../../canonical/request.ts';
import { parseToolInput } from '../../../canonical/stream.ts';
import { keepLastBreakpoints, withBreakpoint } from '../cache-breakpoints.ts';
import { type InboundSummary, invalid, parseOrThrow, splitFields } from '../shape.ts';
import { chatWebSearch } from '../web-search.ts';
import {
  ImagePartSchema,
  KNOWN_FIELDS,
  type OpenAIMessage,
  type OpenAIRequest,
  OpenAIRequestSchema,
  TextPartSchema,
} from './schema.ts';

export function validateOpenAIRequest(body: unknown): InboundSummary {
  const req = parseOrThrow(OpenAIRequestSchema, body);
  return {
    model: req.model,
    stream: req.stream === true,
    include_usage: req.stream_options?.include_usage === true,
  };
}

export function decodeOpenAIRequest(body: unknown): CanonicalRequest {
  const req = parseOrThrow(OpenAIRequestSchema, body);
  const { system, messages } = decodeMessages(req.messages);
  const out: CanonicalRequest = {
    model: req.model,
    system,
    messages,
    stream: req.stream === true,
    include_usage: req.stream_options?.include_usage === true,
    passthrough: {
      wire: 'openai',
      fields: splitFields(req as Record<string, unknown>, KNOWN_FIELDS),
      headers: {},
    },
  };
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max !== null && max !== undefined) out.max_tokens = max;
  if (req.temperature != null) out.temperature = req.temperature;
  if (req.top_p != null) out.top_p = req.top_p;
  if (req.top_k != null) out.top_k = req.top_k;
  if (req.n != null) out.n = req.n;
  if (req.stop != null) out.stop_sequences = typeof req.stop === 'string' ? [req.stop] : req.stop;
  const user = req.user ?? req.safety_identifier;
  if (user) out.user_id = user;
  const search = chatWebSearch((req as { web_search_options?: unknown }).web_search_options);
  if (search) out.web_search = search;
  decodeTools(req, out);
  decodeReasoning(req, out);
  const rf = req.response_format;
  if (rf?.type === 'json_schema') {
    const js = rf.json_schema;
    out.response_format = {
      type: 'json_schema',
      schema: js.schema ?? {},
      ...(js.name ? { name: js.name } : {}),
    };
    if (js.description) out.response_format.description = js.description;
    if (js.strict != null) out.response_format.strict = js.strict;
  } else if (rf) out.response_format = { type: rf.type };
  keepLastBreakpoints(out);
  return out;
}

/** `data:<mime>;base64,<data>` → base64 image source typed by its bytes (wire-formats §6 #19). */
export function decodeImageUrl(url: string, field: string): ImageBlock['source'] {
  if (!url.startsWith('data:')) return { type: 'url', url };
  const comma = url.indexOf(',');
  if (comma < 0 || url.lastIndexOf(';base64', comma) < 0) invalid(field, 'data URL images must be base64');
  const data = url.slice(comma + 1);
  const media_type = sniffImageMediaType(data);
  if (!media_type) invalid(field, 'image data is not JPEG, PNG, GIF or WebP');
  return { type: 'base64', media_type, data };
}

// --- internal ---

function decodeMessages(list: OpenAIMessage[]): { system: TextBlock[]; messages: CanonicalMessage[] } {
  const system: TextBlock[] = [];
  const messages: CanonicalMessage[] = [];
  let leading = true;
  list.forEach((m, i) => {
    const path = `messages.${i}`;
    if (m.role === 'system' || m.role === 'developer') {
      const blocks = textContent(m.content, path);
      if (leading) system.push(...blocks);
      else messages.push({ role: 'system', content: blocks, at: path });
      return;
    }
    leading = false;
    if (m.role === 'tool') {
      if (m.tool_call_id === undefined) invalid(`${path}.tool_call_id`, 'required for role tool');
      const content =
        m.content == null ? '' : typeof m.content === 'string' ? m.content : textContent(m.content, path);
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: m.tool_call_id, content }],
        at: path,
      });
    } else if (m.role === 'assistant')
      messages.push({ role: 'assistant', content: assistantContent(m, path), at: path });
    else if (m.role === 'user')
      messages.push({ role: 'user', content: userContent(m.content, path), at: path });
    else invalid(`${path}.role`, 'the deprecated function role is not supported');
  });
  return { system, messages };
}

function textContent(content: OpenAIMessage['content'], path: string): TextBlock[] {
  if (content == null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.map((p, j) => {
    return withCache({ type: 'text', text: textOf(p, path, j) }, p);
  });
}

function userContent(content: OpenAIMessage['content'], path: string): ContentBlock[] {
  if (content == null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p, j): ContentBlock => {
    const at = `${path}.content.${j}`;
    if (p.type === 'text') return withCache({ type: 'text', text: textOf(p, path, j) }, p);
    if (p.type === 'image_url') {
      const img = parseOrThrow(ImagePartSchema, p, at).image_url;
      const block: ImageBlock = { type: 'image', source: decodeImageUrl(img.url, `${at}.image_url.url`) };
      if (img.detail) block.detail = img.detail;
      return withCache(block, p);
    }
    // a PDF's breakpoint rides on the part, as cache_control, for the adapter that maps it to a document
    const value = p.type === 'file' ? withBreakpoint(p as Record<string, unknown>, p) : p;
    return { type: 'raw', wire: 'openai', value, at } satisfies RawBlock;
  });
}

/**
 * A text part's text, read as it is when the part is one TextPartSchema takes (type text, a string text: the
 * messages' schema has copied the part already), else parsed for its 400 naming `<path>.content.<j>`.
 */
function textOf(part: { type: string }, path: string, j: number): string {
  const text = (part as { text?: unknown }).text;
  if (part.type === 'text' && typeof text === 'string') return text;
  return parseOrThrow(TextPartSchema, part, `${path}.content.${j}`).text;
}

function assistantContent(m: OpenAIMessage, path: string): ContentBlock[] {
  const out: ContentBlock[] = [...decodeReasoningDetails(m)];
  if (typeof m.content === 'string') {
    if (m.content !== '') out.push({ type: 'text', text: m.content });
  } else if (m.content) {
    m.content.forEach((p, j) => {
      if (p.type === 'text') {
        const text = textOf(p, path, j);
        out.push(withBreakpoint({ type: 'text', text }, p));
      } else if (p.type === 'refusal' && typeof p.refusal === 'string')
        out.push({ type: 'text', text: p.refusal });
    });
  }
  if (m.refusal) out.push({ type: 'text', text: m.refusal });
  m.tool_calls?.forEach((c, j) => {
    if (!c.function) invalid(`${path}.tool_calls.${j}`, 'only function tool calls are supported');
    out.push({
      type: 'tool_use',
      id: c.id,
      name: c.function.name,
      input: parseToolInput(c.function.arguments ?? ''),
    });
  });
  return out;
}

/** OpenRouter-style `reasoning_details` replayed by the client keep Anthropic signatures valid. */
function decodeReasoningDetails(m: OpenAIMessage): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const d of m.reasoning_details ?? []) {
    const block = reasoningBlockOf(d);
    if (block) out.push(block);
  }
  if (out.length === 0 && m.reasoning) out.push({ type: 'thinking', thinking: m.reasoning, signature: null });
  return out;
}

function decodeTools(req: OpenAIRequest, out: CanonicalRequest): void {
  let tools: CanonicalTool[] | undefined = req.tools?.map((t, i): CanonicalTool => {
    if (t.type !== 'function' || !t.function)
      return { type: 'raw', wire: 'openai', value: t, at: `tools.${i}` };
    const f = t.function;
    const tool: CanonicalTool = {
      type: 'function',
      name: f.name,
      input_schema: f.parameters ?? { type: 'object', properties: {} },
    };
    if (f.description !== undefined) tool.description = f.description;
    if (f.strict != null) tool.strict = f.strict;
    return withCache(tool, t);
  });
  let choice: ToolChoice | undefined;
  const c = req.tool_choice;
  if (c === 'auto' || c === 'none') choice = { type: c };
  else if (c === 'required') choice = { type: 'any' };
  else if (c?.type === 'function') choice = { type: 'tool', name: c.function.name };
  else if (c?.type === 'custom') choice = { type: 'tool', name: c.custom.name };
  else if (c?.type === 'allowed_tools') {
    const allowed = new Set(c.allowed_tools.tools.map((t: any) => t.function?.name ?? t.name));
    tools = tools?.filter((t) => t.type !== 'function' || allowed.has(t.name));
    choice = { type: c.allowed_tools.mode === 'required' ? 'any' : 'auto' };
  }
  // parallel_tool_calls alone rides on `auto`, never a forced choice (wire-formats §6 #21)
  if (req.parallel_tool_calls === false && tools?.length) {
    choice ??= { type: 'auto' };
    if (choice.type !== 'none') choice.disable_parallel_tool_use = true;
  }
  if (tools) out.tools = tools;
  if (choice) out.tool_choice = choice;
}

function decodeReasoning(req: OpenAIRequest, out: CanonicalRequest): void {
  const effort = req.reasoning_effort ?? req.reasoning?.effort;
  if (effort) {
    out.reasoning_effort = effort;
    out.thinking = { type: effort === 'none' ? 'disabled' : 'adaptive' };
  }
  const r = req.reasoning;
  if (r?.max_tokens !== undefined) out.thinking = { type: 'enabled', budget_tokens: r.max_tokens };
  else if (r?.enabled === false) out.thinking = { type: 'disabled' };
  else if (r?.enabled === true && !out.thinking) out.thinking = { type: 'adaptive' };
}

/** The part's cache breakpoint on `block`: OpenRouter's `cache_control`, else OpenAI's `prompt_cache_breakpoint`. */
function withCache<T extends object>(block: T, part: Record<string, unknown>): T {
  const cc = part.cache_control as { type?: unknown; ttl?: unknown } | undefined;
  if (cc?.type !== 'ephemeral') return withBreakpoint(block, part);
  const ttl = cc.ttl === '5m' || cc.ttl === '1h' ? { ttl: cc.ttl } : {};
  return { ...block, cache_control: { type: 'ephemeral', ...ttl } };
}

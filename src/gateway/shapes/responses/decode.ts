/**
 * @module OpenAI Responses request → CanonicalRequest: `instructions` and leading system/developer items
 * become `system`; `input` (a string, or items: messages, `function_call`, `function_call_output`,
 * `reasoning`) becomes turns; flat function tools, `tool_choice`, `max_output_tokens`, `reasoning.effort`
 * and `text.format` map to their canonical fields. Items and tools only the Responses API knows (hosted
 * tools, `item_reference`, files) are kept raw: an OpenAI model receives them untouched (same wire), any
 * other adapter refuses them with a 400 naming their type (openai-only.ts finds them).
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
import { parseToolInput } from '../../../canonical/stream.ts';
import { keepLastBreakpoints, withBreakpoint } from '../cache-breakpoints.ts';
import { decodeImageUrl } from '../openai/decode.ts';
import { type InboundSummary, invalid, parseOrThrow, splitFields } from '../shape.ts';
import { responsesWebSearch } from '../web-search.ts';
import { REDACTED_REASONING_PREFIX } from './encode.ts';
import { droppedHostedTools, flatToolName, isDroppableHostedTool } from './namespaces.ts';
import {
  CustomToolCallOutputSchema,
  CustomToolCallSchema,
  FunctionCallOutputSchema,
  FunctionCallSchema,
  InputImageSchema,
  InputTextSchema,
  KNOWN_FIELDS,
  MessageItemSchema,
  NamespaceToolSchema,
  ReasoningItemSchema,
  type ResponsesRequest,
  ResponsesRequestSchema,
  type ToolSchema,
} from './schema.ts';

type ResponsesTool = v.InferOutput<typeof ToolSchema>;

/** Validation of the whole body: items are typed by `type`, so only a decode checks them. */
export function validateResponsesRequest(body: unknown): InboundSummary {
  const req = decodeResponsesRequest(body);
  return { model: req.model, stream: req.stream, include_usage: true };
}

export function decodeResponsesRequest(body: unknown): CanonicalRequest {
  const req = parseOrThrow(ResponsesRequestSchema, body);
  const system: TextBlock[] = req.instructions ? [{ type: 'text', text: req.instructions }] : [];
  const messages = decodeInput(req.input, system);
  const out: CanonicalRequest = {
    model: req.model,
    system,
    messages,
    stream: req.stream === true,
    include_usage: true, // a Responses stream always ends with its usage (response.completed)
    passthrough: {
      wire: 'openai_responses',
      fields: splitFields(req as Record<string, unknown>, KNOWN_FIELDS),
      headers: {},
    },
  };
  if (req.max_output_tokens != null) out.max_tokens = req.max_output_tokens;
  if (req.temperature != null) out.temperature = req.temperature;
  if (req.top_p != null) out.top_p = req.top_p;
  const user = req.safety_identifier ?? req.user;
  if (user) out.user_id = user;
  decodeTools(req, out);
  const hosted = droppedHostedTools(req as Record<string, unknown>);
  if (hosted.length > 0) out.hosted_tools = hosted;
  const search = responsesWebSearch(req.tools, req.tool_choice);
  if (search) out.web_search = search;
  const effort = req.reasoning?.effort;
  if (effort) {
    out.reasoning_effort = effort;
    out.thinking = { type: effort === 'none' ? 'disabled' : 'adaptive' };
  }
  const format = req.text?.format;
  if (format?.type === 'json_schema') {
    out.response_format = { type: 'json_schema', schema: format.schema };
    if (format.name) out.response_format.name = format.name;
    if (format.description) out.response_format.description = format.description;
    if (format.strict != null) out.response_format.strict = format.strict;
  } else if (format) out.response_format = { type: format.type };
  keepLastBreakpoints(out);
  return out;
}

// --- internal ---

const PDF_DATA_URL = /^data:application\/pdf;base64,/;

/**
 * An `input_file` holding a PDF inline (`file_data` as a data URL, as the Vercel AI SDK sends every PDF) as
 * the Chat Completions `file` part the chat path decodes, which every adapter maps (Anthropic: a base64
 * `document`); null for a file only OpenAI can resolve (`file_id`, `file_url`) or one that is not a PDF.
 */
export function inlinePdf(part: Record<string, unknown>): RawBlock | null {
  const data = part.file_data;
  if (typeof data !== 'string' || !PDF_DATA_URL.test(data)) return null;
  const file: Record<string, unknown> = { file_data: data };
  if (typeof part.filename === 'string' && part.filename !== '') file.filename = part.filename;
  return { type: 'raw', wire: 'openai', value: withBreakpoint({ type: 'file', file }, part) };
}

function decodeInput(input: ResponsesRequest['input'], system: TextBlock[]): CanonicalMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }];
  const messages: CanonicalMessage[] = [];
  let leading = true;
  let path = 'input';
  const push = (role: CanonicalMessage['role'], blocks: ContentBlock[]) => {
    if (role !== 'system') leading = false;
    const last = messages.at(-1);
    // adjacent items of one role are one turn (a text then its calls, a run of call outputs)
    if (last && last.role === role && role !== 'system') {
      last.content.push(...blocks);
      last.at = path;
    } else messages.push({ role, content: blocks, at: path });
  };
  input.forEach((item, i) => {
    path = `input.${i}`;
    const type = item.type ?? 'message';
    if (type === 'message') {
      const m = isPlainMessage(item) ? item : parseOrThrow(MessageItemSchema, item, path);
      if (m.role === 'system' || m.role === 'developer') {
        const blocks = textContent(m.content, path);
        if (leading) system.push(...blocks);
        else push('system', blocks);
      } else
        push(
          m.role,
          m.role === 'user' ? userContent(m.content, `${path}.content`) : textContent(m.content, path),
        );
    } else if (type === 'function_call') {
      const c = isPlainCall(item, 'arguments') ? item : parseOrThrow(FunctionCallSchema, item, path);
      const name = c.namespace ? flatToolName(c.namespace, c.name) : c.name;
      push('assistant', [{ type: 'tool_use', id: c.call_id, name, input: parseToolInput(c.arguments) }]);
    } else if (type === 'custom_tool_call') {
      const c = isPlainCall(item, 'input') ? item : parseOrThrow(CustomToolCallSchema, item, path);
      const name = c.namespace ? flatToolName(c.namespace, c.name) : c.name;
      push('assistant', [{ type: 'tool_use', id: c.call_id, name, input: { input: c.input } }]);
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const o = isPlainOutput(item)
        ? item
        : parseOrThrow(
            type === 'function_call_output' ? FunctionCallOutputSchema : CustomToolCallOutputSchema,
            item,
            path,
          );
      const content = typeof o.output === 'string' ? o.output : userContent(o.output, `${path}.output`);
      push('user', [{ type: 'tool_result', tool_use_id: o.call_id, content: toolResultContent(content) }]);
    } else if (type === 'reasoning') {
      const r = isPlainReasoning(item) ? item : parseOrThrow(ReasoningItemSchema, item, path);
      const sealed = r.encrypted_content ?? null;
      // a seal another family made comes back marked with its origin (canonical/reasoning-origin.ts)
      if (sealed?.startsWith(REDACTED_REASONING_PREFIX)) {
        const { seal, origin } = unmarkSeal(sealed.slice(REDACTED_REASONING_PREFIX.length));
        push('assistant', [{ type: 'redacted_thinking', data: seal, ...(origin ? { origin } : {}) }]);
        return;
      }
      const { seal, origin } = unmarkSeal(sealed ?? '');
      const parts = [...(r.summary ?? []), ...(r.content ?? [])].map((p) => p.text ?? '');
      push('assistant', [
        {
          type: 'thinking',
          thinking: parts.join('\n\n'),
          signature: seal || null,
          ...(origin ? { origin } : {}),
        },
      ]);
    } else if (type !== 'web_search_call') push('user', [raw(item)]);
    // a web search already run (OpenAI's, or a Claude model's as this gateway answered it) is left out: the
    // answer's text after it holds what it found, and no model takes a search call without its sealed results
  });
  return messages;
}

function textContent(content: string | Array<{ type: string }>, path: string): TextBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  const out: TextBlock[] = [];
  content.forEach((p, j) => {
    const at = `${path}.content.${j}`;
    if (p.type === 'refusal') {
      const refusal = (p as { refusal?: unknown }).refusal;
      if (typeof refusal === 'string' && refusal !== '') out.push({ type: 'text', text: refusal });
      return;
    }
    const text = textOf(p, at);
    if (text !== '') out.push(withBreakpoint({ type: 'text', text }, p));
  });
  return out;
}

/** A user message's content or a call's output of parts; `parts` is their path (`input.N.content`, `input.N.output`). */
function userContent(content: string | Array<{ type: string }>, parts: string): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p, j): ContentBlock => {
    const at = `${parts}.${j}`;
    if (p.type === 'input_text' || p.type === 'output_text')
      return withBreakpoint({ type: 'text', text: textOf(p, at) }, p);
    if (p.type === 'input_image') {
      const img = parseOrThrow(InputImageSchema, p, at);
      if (!img.image_url) return raw(p); // a file_id image: only OpenAI can resolve it
      const block: ImageBlock = { type: 'image', source: decodeImageUrl(img.image_url, `${at}.image_url`) };
      if (img.detail === 'auto' || img.detail === 'low' || img.detail === 'high') block.detail = img.detail;
      return withBreakpoint(block, p);
    }
    if (p.type === 'input_file') return inlinePdf(p) ?? raw(p);
    return raw(p);
  });
}

/** A text part's text: read as it is when a string (InputTextSchema's one check past the type), else its 400. */
function textOf(part: { type: string }, at: string): string {
  const text = (part as { text?: unknown }).text;
  return typeof text === 'string' ? text : parseOrThrow(InputTextSchema, part, at).text;
}

// Items the item schemas take as they are, checked without a parse (the top-level schema has checked the
// type already): most of a Codex conversation is such calls, outputs and text messages. Any other item is
// parsed, and its schema's 400 names what is wrong.

type Item = Record<string, unknown>;

const ROLES: ReadonlySet<unknown> = new Set(['user', 'assistant', 'system', 'developer']);

/**
 * A message MessageItemSchema takes whose content the decode reads the same uncopied: text, or parts that
 * are all input or output text (any other part is kept raw as the schema's copy wrote it).
 */
function isPlainMessage(item: Item): item is Item & v.InferOutput<typeof MessageItemSchema> {
  const content = item.content;
  return (
    ROLES.has(item.role) &&
    (item.id === undefined || typeof item.id === 'string') &&
    (typeof content === 'string' || (Array.isArray(content) && content.every(isTextPart)))
  );
}

function isTextPart(part: unknown): boolean {
  const p = part as { type?: unknown; text?: unknown } | null;
  return (
    typeof p === 'object' &&
    p !== null &&
    (p.type === 'input_text' || p.type === 'output_text') &&
    typeof p.text === 'string'
  );
}

/** A function call (`arguments`) or custom tool call (`input`) its schema takes: string fields, a nullish namespace. */
function isPlainCall(
  item: Item,
  payload: 'arguments' | 'input',
): item is Item & {
  call_id: string;
  name: string;
  namespace?: string | null;
  arguments: string;
  input: string;
} {
  return (
    typeof item.call_id === 'string' &&
    typeof item.name === 'string' &&
    (item.namespace == null || typeof item.namespace === 'string') &&
    typeof item[payload] === 'string' &&
    (payload === 'input' || item.id === undefined || typeof item.id === 'string')
  );
}

/**
 * A reasoning item ReasoningItemSchema takes (Codex replays one before every call): no or a string id, summary
 * and content lists of parts with a string type and no or a string text, no or a string encrypted_content.
 */
function isPlainReasoning(item: Item): item is Item & v.InferOutput<typeof ReasoningItemSchema> {
  return (
    (item.id === undefined || typeof item.id === 'string') &&
    (item.summary === undefined || isTextParts(item.summary)) &&
    (item.content == null || isTextParts(item.content)) &&
    (item.encrypted_content == null || typeof item.encrypted_content === 'string')
  );
}

function isTextParts(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.every((part) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      return (
        typeof p === 'object' &&
        p !== null &&
        typeof p.type === 'string' &&
        (p.text === undefined || typeof p.text === 'string')
      );
    })
  );
}

/** A call's output its schema takes with text (an output of parts is parsed: the decode reads their copies). */
function isPlainOutput(item: Item): item is Item & { call_id: string; output: string } {
  return typeof item.call_id === 'string' && typeof item.output === 'string';
}

function toolResultContent(
  content: string | ContentBlock[],
): string | Array<TextBlock | ImageBlock | RawBlock> {
  if (typeof content === 'string') return content;
  return content.filter(
    (b): b is TextBlock | ImageBlock | RawBlock =>
      b.type === 'text' || b.type === 'image' || b.type === 'raw',
  );
}

/**
 * Function tools as they are; a namespace's member functions flattened to `<namespace>__<name>`
 * (namespaces.ts); hosted web search left out (an OpenAI model gets the client's bytes, tools and all);
 * any other tool kept raw, for findOpenAIOnlyPart to refuse on another wire.
 */
function decodeTools(req: ResponsesRequest, out: CanonicalRequest): void {
  let tools: CanonicalTool[] | undefined = req.tools?.flatMap((t, i): CanonicalTool[] => {
    if (t.type === 'function') return [functionTool(t, `tools.${i}`)];
    if (isDroppableHostedTool(t.type)) return [];
    if (t.type === 'namespace') {
      const ns = parseOrThrow(NamespaceToolSchema, t, `tools.${i}`);
      return ns.tools.map((m, j) =>
        m.type === 'function'
          ? functionTool(m, `tools.${i}.tools.${j}`, ns.name)
          : { type: 'raw', wire: 'openai_responses', value: m },
      );
    }
    return [{ type: 'raw', wire: 'openai_responses', value: t }];
  });
  let choice: ToolChoice | undefined;
  const c = req.tool_choice;
  if (c === 'auto' || c === 'none') choice = { type: c };
  else if (c === 'required') choice = { type: 'any' };
  else if (c?.type === 'function' && typeof c.name === 'string') choice = { type: 'tool', name: c.name };
  else if (c?.type === 'allowed_tools' && Array.isArray(c.tools)) {
    const allowed = allowedFunctions(c.tools, tools);
    tools = tools?.filter((t) => t.type !== 'function' || allowed.has(t.name));
    choice = { type: c.mode === 'required' ? 'any' : 'auto' };
  }
  // parallel_tool_calls alone rides on `auto`, never a forced choice (wire-formats §6 #21)
  if (req.parallel_tool_calls === false && tools?.length) {
    choice ??= { type: 'auto' };
    if (choice.type !== 'none') choice.disable_parallel_tool_use = true;
  }
  if (tools) out.tools = tools;
  if (choice) out.tool_choice = choice;
}

/**
 * The canonical names of the function tools an `allowed_tools` choice lets the model call. One naming no
 * declared function is refused: left to the filter, a `required` choice over no tool at all became an answer
 * without a call.
 */
function allowedFunctions(entries: readonly unknown[], tools: CanonicalTool[] | undefined): Set<string> {
  const declared = tools?.flatMap((t) => (t.type === 'function' ? [t.name] : [])) ?? [];
  const allowed = new Set<string>();
  entries.forEach((entry, i) => {
    const e = entry as { type?: unknown; name?: unknown; namespace?: unknown };
    if (e?.type !== 'function' || typeof e.name !== 'string') return;
    const { name, namespace } = e;
    // a namespace's member, named with its namespace or alone
    const matches = declared.filter((d) =>
      typeof namespace === 'string'
        ? d === flatToolName(namespace, name)
        : d === name || d.endsWith(flatToolName('', name)),
    );
    if (matches.length === 0)
      invalid(`tool_choice.tools.${i}`, `names the function ${name}, which is not among tools`);
    for (const m of matches) allowed.add(m);
  });
  return allowed;
}

function functionTool(t: ResponsesTool, path: string, namespace?: string): CanonicalTool {
  if (!t.name) invalid(`${path}.name`, 'required for a function tool');
  const tool: CanonicalTool = {
    type: 'function',
    name: namespace ? flatToolName(namespace, t.name) : t.name,
    input_schema: t.parameters ?? { type: 'object', properties: {} },
  };
  if (t.description != null) tool.description = t.description;
  if (t.strict != null) tool.strict = t.strict;
  return tool;
}

function raw(value: Record<string, unknown>): RawBlock {
  return { type: 'raw', wire: 'openai_responses', value };
}

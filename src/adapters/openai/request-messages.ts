/**
 * @module CanonicalRequest conversation → OpenAI Chat Completions messages (wire-formats §5.1): the system
 * prompt first, one `tool` message per tool result right after the assistant turn (§6 #15, #16), images and
 * documents a tool returned moved to the user turn, images as data or https URLs; OpenRouter's cache
 * breakpoints and reasoning_details (§3). A block with no OpenAI form is refused, never dropped.
 */
import {
  type CanonicalMessage,
  type ContentBlock,
  type ImageBlock,
  isOpenAISealedReasoning,
  type RawBlock,
  type TextBlock,
  type ToolResultBlock,
} from '../../canonical/message.ts';
import {
  ownReasoningFormat,
  type ReasoningFormat,
  reasoningDetailOf,
  replayableTo,
} from '../../canonical/reasoning-origin.ts';
import type { CanonicalRequest } from '../../canonical/request.ts';
import { SvcError } from '../../lib/errors.ts';

/**
 * Canonical conversation → OpenAI messages (system first, tool messages before other user content). `model`
 * is the routed OpenRouter model, whose family's reasoning alone goes back to it.
 */
export function encodeOpenAIMessages(
  req: CanonicalRequest,
  router: boolean,
  model = '',
): Record<string, unknown>[] {
  const own = ownReasoningFormat(model);
  const out: Record<string, unknown>[] = [];
  if (req.system.length > 0) out.push({ role: 'system', content: textContent(req.system, router) });
  for (const m of req.messages) {
    if (m.role === 'system')
      out.push({ role: 'system', content: textContent(m.content.filter(isText), router) });
    else if (m.role === 'assistant') out.push(encodeAssistant(m, router, own));
    else encodeUser(m, router, out);
  }
  return out;
}

/** A 400 invalid_request naming the field (`details.param`) a model of this wire cannot take. */
export function reject(field: string, message: string): never {
  throw new SvcError('invalid_request', { message: `${field}: ${message}`, details: { param: field } });
}

// --- internal ---

function isText(b: ContentBlock): b is TextBlock {
  return b.type === 'text';
}

/** A string unless cache breakpoints must ride on parts (OpenRouter forwards them to Anthropic). */
function textContent(blocks: readonly TextBlock[], router: boolean): unknown {
  if (router && blocks.some((b) => b.cache_control)) return blocks.map((b) => textPart(b, router));
  return blocks.map((b) => b.text).join('\n\n');
}

/** The breakpoint of a tool result's last text block, if it has one. */
function cacheOfLast(content: ToolResultBlock['content']): TextBlock['cache_control'] {
  if (typeof content === 'string') return undefined;
  const last = content.at(-1);
  return last?.type === 'text' ? last.cache_control : undefined;
}

function textPart(b: TextBlock, router: boolean): Record<string, unknown> {
  return router && b.cache_control
    ? { type: 'text', text: b.text, cache_control: b.cache_control }
    : { type: 'text', text: b.text };
}

/**
 * An Anthropic `document`, `search_result` or `tool_reference` block in OpenAI terms: a base64 PDF as a
 * `file` part (OpenAI and OpenRouter read PDFs), plain text and content documents, search results and tool
 * references as text. A document's `context` (what the model is told about it) goes as text before it: a PDF's
 * as a text part of its own, a text document's after its title. Anything else (a PDF by URL or file id) is a
 * 400 naming it, never dropped.
 */
function documentParts(block: RawBlock): { text?: string; file?: Record<string, unknown> } {
  const value = block.value;
  const source = value.source as
    | { type?: string; media_type?: string; data?: unknown; content?: unknown }
    | undefined;
  const title = typeof value.title === 'string' && value.title !== '' ? `${value.title}\n` : '';
  const context = typeof value.context === 'string' && value.context !== '' ? value.context : undefined;
  const heading = `${title}${context === undefined ? '' : `${context}\n`}`;
  if (value.type === 'document' && source?.type === 'base64' && source.media_type === 'application/pdf') {
    // a title that already names a PDF file (the AI SDK sends the filename) gets no second extension
    const name = typeof value.title === 'string' && value.title !== '' ? value.title : 'document';
    const filename = /\.pdf$/i.test(name) ? name : `${name}.pdf`;
    return {
      ...(context === undefined ? {} : { text: context }),
      file: { type: 'file', file: { filename, file_data: `data:application/pdf;base64,${source.data}` } },
    };
  }
  if (value.type === 'document' && source?.type === 'text' && typeof source.data === 'string')
    return { text: `${heading}${source.data}` };
  if (value.type === 'document' && source?.type === 'content')
    return { text: `${heading}${textsOf(source.content)}` };
  // Claude Code's tool search answers with references to deferred tools, which Anthropic loads into the
  // model's tools; OpenAI has no deferred tools (the definition is already in `tools`), so a note says so
  if (value.type === 'tool_reference' && typeof value.tool_name === 'string')
    return { text: `Tool loaded: ${value.tool_name}` };
  if (value.type === 'search_result')
    return {
      text: `${title}${typeof value.source === 'string' ? `${value.source}\n` : ''}${textsOf(value.content)}`,
    };
  return reject(
    block.at ?? 'messages',
    `content block of type ${String(value.type)}${source?.type ? ` (source ${source.type})` : ''} has no OpenAI equivalent; send it as text or a base64 PDF`,
  );
}

function textsOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((c: { type?: string; text?: unknown }) =>
      c?.type === 'text' && typeof c.text === 'string' ? c.text : '',
    )
    .filter(Boolean)
    .join('\n');
}

function imagePart(b: ImageBlock): Record<string, unknown> {
  const url =
    b.source.type === 'base64' ? `data:${b.source.media_type};base64,${b.source.data}` : b.source.url;
  return { type: 'image_url', image_url: b.detail ? { url, detail: b.detail } : { url } };
}

function encodeAssistant(
  m: CanonicalMessage,
  router: boolean,
  own: ReasoningFormat,
): Record<string, unknown> {
  let text: string | null = null;
  let cache: TextBlock['cache_control'];
  const calls: unknown[] = [];
  const details: unknown[] = [];
  for (const b of m.content) {
    if (b.type === 'text') {
      text = (text ?? '') + b.text;
      cache = b.cache_control ?? cache;
    } else if (b.type === 'tool_use')
      calls.push({
        id: b.id,
        type: 'function',
        function: { name: b.name, arguments: JSON.stringify(b.input) },
      });
    // OpenAI's sealed reasoning (a Codex conversation served by an OpenAI model) opens only for the OpenAI
    // organization that sealed it, never through OpenRouter: left out, as on Claude; another family's
    // reasoning is left out too (OpenRouter hands it on, and Claude refuses a signature it did not issue)
    else if (b.type === 'thinking' && !(b.signature && isOpenAISealedReasoning(b.signature))) {
      if (replayableTo(b, own)) details.push(reasoningDetailOf(b));
    } else if (b.type === 'redacted_thinking' && replayableTo(b, own)) details.push(reasoningDetailOf(b));
    else if (b.type === 'raw' && b.wire === 'anthropic')
      reject(b.at ?? 'messages', `content block of type ${String(b.value.type)} has no OpenAI equivalent`);
  }
  const out: Record<string, unknown> = { role: 'assistant', content: text || (calls.length > 0 ? null : '') };
  // a breakpoint on assistant text reaches OpenRouter as a content part
  if (router && cache && text) out.content = [{ type: 'text', text, cache_control: cache }];
  if (calls.length > 0) out.tool_calls = calls;
  // OpenRouter keeps Anthropic signatures valid across tool turns through reasoning_details (wire-formats §3)
  if (router && details.length > 0) out.reasoning_details = details;
  return out;
}

/** Every tool_result becomes a `tool` message, first and in block order; images move to the user turn. */
function encodeUser(m: CanonicalMessage, router: boolean, out: Record<string, unknown>[]): void {
  const parts: Record<string, unknown>[] = [];
  for (const b of m.content) {
    if (b.type === 'tool_result') {
      let content: string;
      if (typeof b.content === 'string') content = b.content;
      else {
        const texts: string[] = [];
        for (const c of b.content) {
          if (c.type === 'text') texts.push(c.text);
          else if (c.type === 'image') {
            texts.push('[image attached in the next user message]');
            parts.push(imagePart(c));
          } else if (c.type === 'raw') {
            // a document or search result a tool returned (Claude Code reading a PDF): never dropped; a
            // Responses tool output's inline PDF arrives as a `file` part already
            const doc: { text?: string; file?: Record<string, unknown> } =
              c.wire === 'anthropic' ? documentParts(c) : { file: c.value };
            if (doc.text !== undefined) texts.push(doc.text);
            if (doc.file) {
              texts.push('[document attached in the next user message]');
              parts.push(doc.file);
            }
          }
        }
        content = texts.join('\n');
      }
      // no OpenAI field for is_error: annotate the text (choice)
      const text = b.is_error ? `Error: ${content}` : content;
      // OpenRouter takes Anthropic breakpoints on content parts: Claude Code's rolling one sits on the
      // last tool result, and without it a long tool loop is never read from the cache
      const cache = router ? (b.cache_control ?? cacheOfLast(b.content)) : undefined;
      out.push({
        role: 'tool',
        tool_call_id: b.tool_use_id,
        content: cache ? [{ type: 'text', text, cache_control: cache }] : text,
      });
    } else if (b.type === 'text') {
      if (b.text !== '') parts.push(textPart(b, router));
    } else if (b.type === 'image') parts.push(imagePart(b));
    else if (b.type === 'raw') {
      if (b.wire === 'openai') parts.push(b.value);
      else {
        const doc = documentParts(b);
        if (doc.text !== undefined) parts.push({ type: 'text', text: doc.text });
        if (doc.file) parts.push(doc.file);
      }
    }
  }
  if (parts.length === 0) return;
  const simple = parts.every((p) => p.type === 'text' && p.cache_control === undefined);
  out.push({ role: 'user', content: simple ? parts.map((p) => p.text).join('\n\n') : parts });
}

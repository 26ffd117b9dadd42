/**
 * @module CanonicalRequest conversation → Anthropic Messages turns (wire-formats §5.1): adjacent same-role
 * turns merged with tool results first (§1.4), empty text dropped (§6 #12), tool ids matching
 * `^[a-zA-Z0-9_-]+$` (§6 #14), only Claude's own sealed reasoning replayed, PDFs as base64 documents.
 * A block with no Anthropic form is refused with a 400 naming it, never dropped.
 */
import type { CanonicalMessage, ContentBlock, TextBlock } from '../../canonical/message.ts';
import { claudeSealed } from '../../canonical/reasoning-origin.ts';
import { SvcError } from '../../lib/errors.ts';

/**
 * Canonical messages → Anthropic turns: mid-conversation system turns folded into user text (choice),
 * adjacent same-role turns merged with tool results first (wire-formats §1.4), empty text dropped (§6 #12).
 */
export function encodeAnthropicMessages(messages: readonly CanonicalMessage[]): Record<string, unknown>[] {
  const turns: Array<{ role: 'user' | 'assistant'; results: unknown[]; rest: unknown[] }> = [];
  for (const m of messages) {
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    for (const b of m.content) {
      const enc = encodeBlock(b);
      if (enc === undefined) continue;
      // a message left empty (content "", only unsigned reasoning) opens no turn, so its neighbours of one
      // role still merge into one turn
      let turn = turns.at(-1);
      if (turn?.role !== role) {
        turn = { role, results: [], rest: [] };
        turns.push(turn);
      }
      if (b.type === 'tool_result') turn.results.push(enc);
      else turn.rest.push(enc);
    }
  }
  return turns.map((t) => ({ role: t.role, content: [...t.results, ...t.rest] }));
}

/**
 * A tool id Anthropic accepts. Valid ids are unchanged; others get invalid characters replaced plus a hash
 * of the original so `tool_use.id` and `tool_result.tool_use_id` map identically (wire-formats §6 #14).
 */
export function sanitizeToolId(id: string): string {
  if (/^[a-zA-Z0-9_-]+$/.test(id)) return id;
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_')}_${(h >>> 0).toString(16)}`;
}

/** The 400 invalid_request naming `field`. */
export function reject(field: string, message: string): never {
  throw new SvcError('invalid_request', { message: `${field}: ${message}`, details: { param: field } });
}

export function textBlock(b: TextBlock): Record<string, unknown> {
  return b.cache_control
    ? { type: 'text', text: b.text, cache_control: b.cache_control }
    : { type: 'text', text: b.text };
}

function encodeBlock(b: ContentBlock): unknown {
  switch (b.type) {
    case 'text':
      return b.text === '' ? undefined : textBlock(b);
    case 'image':
      return {
        type: 'image',
        source: b.source,
        ...(b.cache_control ? { cache_control: b.cache_control } : {}),
      };
    case 'tool_use':
      return {
        type: 'tool_use',
        id: sanitizeToolId(b.id),
        name: b.name,
        input: b.input,
        ...(b.cache_control ? { cache_control: b.cache_control } : {}),
      };
    case 'tool_result': {
      const content =
        typeof b.content === 'string' ? b.content : b.content.map(encodeBlock).filter((c) => c !== undefined);
      const out: Record<string, unknown> = {
        type: 'tool_result',
        tool_use_id: sanitizeToolId(b.tool_use_id),
        content,
      };
      if (b.is_error) out.is_error = true;
      if (b.cache_control) out.cache_control = b.cache_control;
      return out;
    }
    case 'thinking':
      // replayed unchanged, also signature-only blocks; unsigned reasoning from other models cannot be (§6 #18),
      // nor can another family's sealed reasoning (OpenAI's in a Codex conversation, an OpenRouter model's):
      // Claude refuses a signature it did not issue with a 400, and a tool turn left without its thinking then
      // goes without thinking
      return claudeSealed(b) ? { type: 'thinking', thinking: b.thinking, signature: b.signature } : undefined;
    case 'redacted_thinking':
      return claudeSealed(b) ? { type: 'redacted_thinking', data: b.data } : undefined;
    case 'raw':
      if (b.wire === 'anthropic') return b.value;
      return (
        pdfDocument(b.value) ??
        reject(b.at ?? 'messages', `content part of type ${String(b.value.type)} has no Anthropic equivalent`)
      );
  }
}

/** An OpenAI `file` part holding a PDF as a data URL → an Anthropic base64 `document` (wire-formats §5.1). */
function pdfDocument(part: Record<string, unknown>): Record<string, unknown> | undefined {
  const file =
    part.type === 'file' ? (part.file as { file_data?: unknown; filename?: unknown } | undefined) : undefined;
  const m =
    typeof file?.file_data === 'string' ? /^data:application\/pdf;base64,(.+)$/s.exec(file.file_data) : null;
  if (!m) return undefined;
  const doc: Record<string, unknown> = {
    type: 'document',
    source: { type: 'base64', media_type: 'application/pdf', data: m[1] },
  };
  if (typeof file?.filename === 'string' && file.filename !== '') doc.title = file.filename;
  // an OpenAI client's prompt_cache_breakpoint on the part (gateway/shapes/cache-breakpoints.ts)
  if (part.cache_control) doc.cache_control = part.cache_control;
  return doc;
}

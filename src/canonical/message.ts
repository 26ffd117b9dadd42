/**
 * @module Canonical messages and content blocks: the one conversation form that neither an inbound shape
 * nor an adapter owns. Block fields follow the richer wire (Anthropic) so nothing is lost in either direction.
 */
import type { ReasoningFormat } from './reasoning-origin.ts';

/** Prompt-cache breakpoint (Anthropic `cache_control`, OpenRouter on parts). */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
  /** The sources an answer's text cites (Anthropic `citations`, as sent): the whole block is the cited span. */
  citations?: readonly Record<string, unknown>[];
}

/**
 * A text block's citations of web pages as the spans of OpenAI's `url_citation` annotations: the whole block,
 * `start` code points into the text it is part of (a Chat message's text; 0 for a Responses `output_text`),
 * offsets in code points (a Python string's indices, not UTF-16 units). The web page is Anthropic's
 * `web_search_result_location` (web search), or a `search_result_location` whose source is an http(s) URL;
 * a citation of a document (`char_location`, `page_location`, `content_block_location`) has no such form.
 * A block without citations costs nothing.
 */
export function urlCitationSpans(
  b: TextBlock,
  start: number,
): { start_index: number; end_index: number; url: string; title: string }[] {
  if (!b.citations?.length) return [];
  const end = start + codePoints(b.text);
  return b.citations.flatMap((c) => {
    const url =
      c.type === 'web_search_result_location'
        ? c.url
        : c.type === 'search_result_location'
          ? c.source
          : undefined;
    if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return [];
    return [{ start_index: start, end_index: end, url, title: typeof c.title === 'string' ? c.title : '' }];
  });
}

/** The number of code points of `text`. */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export interface ImageBlock {
  type: 'image';
  source: ImageSource;
  /** OpenAI `image_url.detail`; no Anthropic equivalent. */
  detail?: 'auto' | 'low' | 'high';
  cache_control?: CacheControl;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | Array<TextBlock | ImageBlock | RawBlock>;
  is_error?: boolean;
  cache_control?: CacheControl;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  /** Opaque; must be replayed unchanged (wire-formats §1.4). Null when the upstream sent none. */
  signature: string | null;
  /** The model family that wrote it, when known (reasoning-origin.ts): only that family takes it back. */
  origin?: ReasoningFormat;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
  origin?: ReasoningFormat;
}

/**
 * A block only one wire understands (Anthropic `document`, server-tool blocks, OpenAI `input_audio`…).
 * Adapters of that wire forward `value` verbatim; others reject it with a 400 (wire-formats §6 #25).
 */
export interface RawBlock {
  type: 'raw';
  wire: Wire;
  value: Record<string, unknown>;
  /** Where the client sent it (`messages.2.content.0`), so a refusal names it; absent on blocks svc made. */
  at?: string;
}

export type ContentBlock =
  | TextBlock
  | ImageBlock
  | ToolUseBlock
  | ToolResultBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | RawBlock;

/** `system` appears only for mid-conversation system/developer turns; leading ones live in `request.system`. */
export type Role = 'user' | 'assistant' | 'system';

export interface CanonicalMessage {
  role: Role;
  content: ContentBlock[];
  /**
   * Where the client sent it (`messages.3`; on the Responses API the last input item merged into it), so a
   * refusal names it; absent on messages svc made.
   */
  at?: string;
}

/**
 * The wire formats: Anthropic Messages, OpenAI Chat Completions (OpenRouter speaks it too) and the OpenAI
 * Responses API (`openai_responses`, the OpenAI adapter's second wire).
 */
export type Wire = 'anthropic' | 'openai' | 'openai_responses';

/** Raised when a stored canonical message changes incompatibly (GET /server/version, spec 2). */
export const CANONICAL_MESSAGE_SCHEMA_VERSION = 1;

export const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

/**
 * Media type from the first bytes of base64 image data, or undefined when it is none of the four formats
 * Anthropic accepts. Used instead of a client-declared type, which may lie (wire-formats §6 #19).
 */
export function sniffImageMediaType(base64: string): string | undefined {
  const head = Buffer.from(base64.slice(0, 24), 'base64');
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47) return 'image/png';
  if (head[0] === 0x47 && head[1] === 0x49 && head[2] === 0x46 && head[3] === 0x38) return 'image/gif';
  if (head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP')
    return 'image/webp';
  return undefined;
}

/**
 * OpenAI's `encrypted_content` of a reasoning item is a Fernet token: version byte 0x80 and a 64-bit
 * timestamp whose first four bytes are zero until 2106, base64url `gAAAAA…`. A Claude thinking signature is
 * standard base64 of a protobuf message and never starts so (its first byte is a field tag, not 0x80).
 * OpenAI opens it only for the organization that sealed it, so no other provider's model can use it.
 */
export function isOpenAISealedReasoning(signature: string): boolean {
  return signature.startsWith('gAAAAA');
}

/** Concatenated text of the text blocks in `blocks`. */
export function joinText(blocks: readonly ContentBlock[], separator = ''): string {
  let out = '';
  let first = true;
  for (const b of blocks) {
    if (b.type !== 'text') continue;
    out += first ? b.text : separator + b.text;
    first = false;
  }
  return out;
}

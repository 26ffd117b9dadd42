/**
 * @module RouteFacts of one CanonicalRequest: images, tools, an input-size estimate and the text that
 * `text_matches` reads. Cheap by design (one walk over the blocks, no tokenizer): the estimate is
 * characters / 4 for text and JSON, plus a flat allowance per image, which is what the context-window
 * check and the `input_tokens_above` predicate need, not a bill (the bill uses the upstream's counts).
 */
import type { ContentBlock } from '../canonical/message.ts';
import type { CanonicalRequest, CanonicalTool } from '../canonical/request.ts';
import type { RouteFacts } from './facts.ts';

/** Tokens counted per image (a 1.15-megapixel image is ~1,600 tokens on either provider). */
export const IMAGE_TOKEN_ESTIMATE = 1_600;
const CHARS_PER_TOKEN = 4;

export interface RequestFactsInput {
  /** The key's workspace_path (gateway) or the session's workspace (agent). */
  workspacePath: string | null;
}

export function describeRequest(req: CanonicalRequest, input: RequestFactsInput): RouteFacts {
  let chars = 0;
  let images = 0;
  const count = (blocks: readonly ContentBlock[]) => {
    for (const b of blocks) {
      switch (b.type) {
        case 'text':
          chars += b.text.length;
          break;
        case 'image':
          images++;
          break;
        case 'tool_use':
          chars += b.name.length + JSON.stringify(b.input).length;
          break;
        case 'tool_result':
          if (typeof b.content === 'string') chars += b.content.length;
          else count(b.content);
          break;
        case 'thinking':
          chars += b.thinking.length;
          break;
        case 'redacted_thinking':
          chars += b.data.length;
          break;
        case 'raw':
          chars += JSON.stringify(b.value).length;
          break;
      }
    }
  };
  count(req.system);
  for (const m of req.messages) count(m.content);
  for (const t of req.tools ?? []) chars += JSON.stringify(t).length;
  return {
    requestedModel: req.model,
    hasImages: images > 0,
    hasTools: (req.tools?.length ?? 0) > 0,
    toolNames: (req.tools ?? []).map(toolName),
    messageCount: req.messages.length,
    estimatedInputTokens: Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKEN_ESTIMATE,
    maxOutputTokens: req.max_tokens ?? null,
    text: () => lastUserText(req),
    workspacePath: input.workspacePath,
    manualStickyModel: null,
    delegateModel: null,
  };
}

/** The text of the last user message (what `text_matches` predicates test). */
export function lastUserText(req: CanonicalRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i];
    if (m.role !== 'user') continue;
    let out = '';
    for (const b of m.content) if (b.type === 'text') out += out ? `\n${b.text}` : b.text;
    if (out) return out;
  }
  return '';
}

// --- internal ---

/** A function tool's name; a wire-specific tool's `name`, else its `type` (`web_search_20250305`). */
function toolName(t: CanonicalTool): string {
  if (t.type === 'function') return t.name;
  const v = t.value;
  return typeof v.name === 'string' ? v.name : typeof v.type === 'string' ? v.type : 'raw';
}

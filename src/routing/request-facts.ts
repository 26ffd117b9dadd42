/**
 * @module RouteFacts of one CanonicalRequest: images, tools, an input-size estimate and the text that
 * `text_matches` reads. Cheap by design (one walk over the blocks, no tokenizer): the estimate counts text
 * and JSON at about 4 ASCII characters a token, 2 characters of other alphabets (accented Latin, Cyrillic,
 * Greek, Arabic, Hebrew…) and 1 CJK, kana, Hangul or emoji character, plus a flat allowance per image:
 * what the context-window check, history windowing and the `input_tokens_above` predicate need, not a bill
 * (the bill uses the upstream's counts). The weights are lib/text-weight.ts's.
 */
import type { ContentBlock } from '../canonical/message.ts';
import type { CanonicalRequest, CanonicalTool } from '../canonical/request.ts';
import { QUARTERS_PER_TOKEN, textWeight } from '../lib/text-weight.ts';
import { anthropicBetasOf } from '../models/long-context.ts';
import type { RouteFacts } from './facts.ts';

/** Tokens counted per image (a 1.15-megapixel image is ~1,600 tokens on either provider). */
export const IMAGE_TOKEN_ESTIMATE = 1_600;

export interface RequestFactsInput {
  /** The key's workspace_path (gateway) or the session's workspace (agent). */
  workspacePath: string | null;
}

export function describeRequest(req: CanonicalRequest, input: RequestFactsInput): RouteFacts {
  const tally: Tally = { quarters: 0, images: 0 };
  countBlocks(tally, req.system);
  for (const m of req.messages) countBlocks(tally, m.content);
  for (const t of req.tools ?? []) tally.quarters += textWeight(JSON.stringify(t));
  const images = tally.images;
  return {
    requestedModel: req.model,
    hasImages: images > 0,
    // a Responses request's hosted web search is a tool too, though translation may leave it out
    hasTools: (req.tools?.length ?? 0) > 0 || (req.hosted_tools?.length ?? 0) > 0,
    toolNames: toolNamesOf(req),
    messageCount: req.messages.length,
    estimatedInputTokens: Math.ceil(tally.quarters / QUARTERS_PER_TOKEN) + images * IMAGE_TOKEN_ESTIMATE,
    anthropicBetas: anthropicBetasOf(req),
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

/** What the blocks weigh: text in quarter tokens (lib/text-weight.ts), images counted apart. */
interface Tally {
  quarters: number;
  images: number;
}

/** Adds `blocks` (a tool result's own blocks included) to `t`; a module function, not a closure per request. */
function countBlocks(t: Tally, blocks: readonly ContentBlock[]): void {
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        t.quarters += textWeight(b.text);
        break;
      case 'image':
        t.images++;
        break;
      case 'tool_use':
        t.quarters += textWeight(b.name) + textWeight(JSON.stringify(b.input));
        break;
      case 'tool_result':
        if (typeof b.content === 'string') t.quarters += textWeight(b.content);
        else countBlocks(t, b.content);
        break;
      case 'thinking':
        t.quarters += textWeight(b.thinking);
        break;
      case 'redacted_thinking':
        t.quarters += b.data.length;
        break;
      case 'raw':
        t.quarters += textWeight(JSON.stringify(b.value));
        break;
    }
  }
}

/** No tool names: shared by every request without tools (facts are read, never changed). */
const NO_TOOL_NAMES: readonly string[] = Object.freeze([]);

/** The function tools' names, then the hosted tools', as one list (none: NO_TOOL_NAMES). */
function toolNamesOf(req: CanonicalRequest): readonly string[] {
  const tools = req.tools ?? [];
  const hosted = req.hosted_tools ?? [];
  if (tools.length === 0 && hosted.length === 0) return NO_TOOL_NAMES;
  const names: string[] = [];
  for (const t of tools) names.push(toolName(t));
  for (const h of hosted) names.push(h);
  return names;
}

/** A function tool's name; a wire-specific tool's `name`, else its `type` (`web_search_20250305`). */
function toolName(t: CanonicalTool): string {
  if (t.type === 'function') return t.name;
  const v = t.value;
  return typeof v.name === 'string' ? v.name : typeof v.type === 'string' ? v.type : 'raw';
}

/**
 * @module CanonicalResponse → Anthropic Messages response (wire-formats §1.7) with `model` = the requested
 * name and the fields the real API always sends (`stop_details`, `container`: null, as no translated call runs a
 * code execution container; usage `cache_creation` and `service_tier`).
 * Usage splits input into uncached, cache-read and cache-write counts (wire-formats §1.8).
 */
import type { ContentBlock } from '../../../canonical/message.ts';
import { markSeal } from '../../../canonical/reasoning-origin.ts';
import type { CanonicalResponse, CanonicalUsage, StopReason } from '../../../canonical/response.ts';
import type { EncodeOptions } from '../shape.ts';

export function encodeAnthropicResponse(
  res: CanonicalResponse,
  opts: EncodeOptions,
): Record<string, unknown> {
  return {
    id: anthropicMessageId(res.id),
    type: 'message',
    role: 'assistant',
    model: opts.model,
    content: encodeAnthropicContent(res.content),
    stop_reason: anthropicStopReason(res.stop_reason),
    stop_sequence: res.stop_sequence,
    stop_details: anthropicStopDetails(res.stop_reason),
    usage: { ...encodeAnthropicUsage(res.usage), ...usageExtras(res.usage) },
    container: null,
  };
}

/** `msg_…` ids: an OpenAI `chatcmpl-…` id is rewritten (wire-formats §5.2). */
export function anthropicMessageId(id: string): string {
  if (id.startsWith('msg_')) return id;
  return `msg_${id.startsWith('chatcmpl-') ? id.slice(9) : id}`;
}

export function anthropicStopReason(r: StopReason): string {
  return r === 'cancelled' ? 'end_turn' : r;
}

/**
 * `stop_details` (wire-formats §1.7): null, or for a refusal `{type:"refusal", category, explanation}`;
 * another provider names no category, so both are null.
 */
export function anthropicStopDetails(r: StopReason): Record<string, unknown> | null {
  return r === 'refusal' ? { type: 'refusal', category: null, explanation: null } : null;
}

/**
 * The `usage.service_tier` an Anthropic client reads (`standard`, `priority`, `batch`) for the canonical tier
 * the call ran at: `priority` (Anthropic's Priority Tier, or OpenAI's priority processing: paid, prioritised
 * capacity alike), else `standard`. OpenAI's `flex` is no `batch` (a Message Batches job) and fast mode is no
 * tier of its own (usage.speed), so both are `standard`.
 */
export function anthropicServiceTier(tier: string | undefined): 'priority' | 'standard' {
  return tier === 'priority' ? 'priority' : 'standard';
}

/**
 * The usage fields a whole Message carries beside the counts (wire-formats §1.8): the cache write split by
 * lifetime and the service tier the call ran at.
 */
function usageExtras(u: CanonicalUsage): Record<string, unknown> {
  const oneHour = Math.min(u.cache_creation_1h_input_tokens ?? 0, u.cache_creation_input_tokens);
  return {
    cache_creation: {
      ephemeral_5m_input_tokens: u.cache_creation_input_tokens - oneHour,
      ephemeral_1h_input_tokens: oneHour,
    },
    service_tier: anthropicServiceTier(u.service_tier),
  };
}

export function encodeAnthropicUsage(u: CanonicalUsage): Record<string, unknown> {
  // unknown counts are left out, so a client keeps message_start's estimate instead of reading 0
  if (u.missing) return { output_tokens: u.output_tokens };
  const out: Record<string, unknown> = {
    input_tokens: u.input_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cached_input_tokens,
    output_tokens: u.output_tokens,
  };
  if (u.reasoning_tokens !== undefined) out.output_tokens_details = { thinking_tokens: u.reasoning_tokens };
  return out;
}

/** Response blocks; raw blocks of the other wire are dropped (they have no Anthropic form). */
export function encodeAnthropicContent(blocks: readonly ContentBlock[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        out.push({ type: 'text', text: b.text });
        break;
      case 'tool_use':
        out.push({ type: 'tool_use', id: b.id, name: b.name, input: b.input });
        break;
      case 'thinking':
        // another family's seal goes out marked with its origin, so a replay to Claude leaves it out
        out.push({
          type: 'thinking',
          thinking: b.thinking,
          signature: markSeal(b.signature ?? '', b.origin),
        });
        break;
      case 'redacted_thinking':
        out.push({ type: 'redacted_thinking', data: markSeal(b.data, b.origin) });
        break;
      case 'raw':
        if (b.wire === 'anthropic') out.push(b.value);
        break;
      default:
        break; // image/tool_result never appear in assistant output
    }
  }
  return out;
}

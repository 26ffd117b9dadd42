/**
 * @module CanonicalResponse → OpenAI `chat.completion` (wire-formats §2.5, §5.2) with `model` = the
 * requested name. `prompt_tokens` counts all three input classes (wire-formats §6 #9); thinking is exposed
 * the OpenRouter way (`reasoning`, `reasoning_details`) so clients can replay signatures.
 */
import { type ContentBlock, codePoints, urlCitationSpans } from '../../../canonical/message.ts';
import { reasoningDetailOf } from '../../../canonical/reasoning-origin.ts';
import {
  type CanonicalResponse,
  type CanonicalUsage,
  type StopReason,
  stopReasonWithTools,
} from '../../../canonical/response.ts';
import type { EncodeOptions } from '../shape.ts';

export function encodeOpenAIResponse(res: CanonicalResponse, opts: EncodeOptions): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: null, refusal: null };
  let text: string | null = null;
  const toolCalls: unknown[] = [];
  for (const b of res.content) {
    if (b.type === 'text') {
      text = (text ?? '') + b.text;
    } else if (b.type === 'tool_use') {
      toolCalls.push({
        id: b.id,
        type: 'function',
        function: { name: b.name, arguments: JSON.stringify(b.input) },
      });
    }
  }
  message.content = text;
  const annotations = urlAnnotations(res.content);
  if (annotations.length > 0) message.annotations = annotations;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  Object.assign(message, encodeReasoning(res.content));
  return {
    id: openaiCompletionId(res.id),
    object: 'chat.completion',
    created: opts.created ?? Math.floor(Date.now() / 1000),
    model: opts.model,
    choices: [
      {
        index: 0,
        message,
        logprobs: null,
        finish_reason: openaiFinishReason(res.stop_reason, toolCalls.length > 0),
      },
    ],
    usage: encodeOpenAIUsage(res.usage),
    service_tier: openaiServiceTier(res.usage.service_tier),
  };
}

/**
 * The `service_tier` an OpenAI client reads (`default`, `priority`, `flex`…) for the canonical tier the call ran
 * at: `priority` (OpenAI's, or Anthropic's Priority Tier: paid, prioritised capacity alike), `flex`, else
 * `default`; Anthropic's fast mode is no OpenAI tier (`default`).
 */
export function openaiServiceTier(tier: string | undefined): 'priority' | 'flex' | 'default' {
  return tier === 'priority' || tier === 'flex' ? tier : 'default';
}

/**
 * The `url_citation` annotations of a message's text blocks, each over its block's span of the message text
 * (code points in): `message.annotations`, and a stream's `delta.annotations`. Nothing to do without citations.
 */
export function urlAnnotations(content: readonly ContentBlock[]): Record<string, unknown>[] {
  if (!content.some((b) => b.type === 'text' && b.citations?.length)) return [];
  const annotations: Record<string, unknown>[] = [];
  let before = 0;
  for (const b of content) {
    if (b.type !== 'text') continue;
    for (const { start_index, end_index, url, title } of urlCitationSpans(b, before))
      annotations.push({ type: 'url_citation', url_citation: { start_index, end_index, url, title } });
    before += codePoints(b.text);
  }
  return annotations;
}

export function openaiCompletionId(id: string): string {
  return id.startsWith('chatcmpl-') ? id : `chatcmpl-${id}`;
}

/**
 * Anthropic stop reason → `finish_reason` (wire-formats §5.2; never passed through unmapped, §6 #8).
 * Tool calls make a plain end `tool_calls` (§6 #7); a truncated call stays `length`.
 */
export function openaiFinishReason(r: StopReason, hasToolCalls: boolean): string {
  switch (stopReasonWithTools(r, hasToolCalls)) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

export function encodeOpenAIUsage(u: CanonicalUsage): Record<string, unknown> {
  const prompt = u.input_tokens + u.cached_input_tokens + u.cache_creation_input_tokens;
  const details: Record<string, number> = { cached_tokens: u.cached_input_tokens };
  if (u.cache_creation_input_tokens > 0) details.cache_write_tokens = u.cache_creation_input_tokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output_tokens,
    total_tokens: prompt + u.output_tokens,
    prompt_tokens_details: details,
    completion_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
  };
}

/**
 * Non-standard reasoning fields (OpenRouter convention, `format` naming the family that wrote a detail when
 * known); empty object when there is no thinking.
 */
export function encodeReasoning(blocks: readonly ContentBlock[]): Record<string, unknown> {
  let reasoning: string | null = null;
  const details: unknown[] = [];
  for (const b of blocks) {
    if (b.type === 'thinking') reasoning = (reasoning ?? '') + b.thinking;
    if (b.type === 'thinking' || b.type === 'redacted_thinking') details.push(reasoningDetailOf(b));
  }
  return details.length > 0 ? { reasoning, reasoning_details: details } : {};
}

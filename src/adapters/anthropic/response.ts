/**
 * @module Anthropic Messages response → CanonicalResponse (wire-formats §1.7–1.9). A body that is not a
 * Messages response (no content array, no usage counts) is refused; unknown blocks (server tools) are
 * kept as raw Anthropic blocks; unknown stop reasons fall back to `end_turn`.
 */
import * as v from 'valibot';
import type { ContentBlock } from '../../canonical/message.ts';
import {
  type CanonicalResponse,
  type CanonicalUsage,
  STOP_REASONS,
  type StopReason,
  stopReasonWithTools,
} from '../../canonical/response.ts';
import { checkResponseShape, TokenCountSchema } from '../response-shape.ts';

/** The fields every Messages response has (wire-formats §1.7); the rest is read leniently below. */
export const AnthropicResponseSchema = v.looseObject({
  id: v.string(),
  content: v.array(v.looseObject({ type: v.string() })),
  stop_reason: v.nullish(v.string()),
  usage: v.looseObject({
    input_tokens: TokenCountSchema,
    output_tokens: TokenCountSchema,
    cache_read_input_tokens: v.nullish(TokenCountSchema),
    cache_creation_input_tokens: v.nullish(TokenCountSchema),
  }),
});

/** Upstream 200 body → CanonicalResponse; SvcError upstream_error when it is not a Messages response. */
export function decodeAnthropicResponse(raw: unknown): CanonicalResponse {
  const body: any = checkResponseShape(AnthropicResponseSchema, raw, 'an Anthropic Messages response');
  const content: ContentBlock[] = [];
  for (const b of body.content) {
    if (b.type === 'text')
      content.push(
        Array.isArray(b.citations) && b.citations.length > 0
          ? { type: 'text', text: b.text ?? '', citations: b.citations }
          : { type: 'text', text: b.text ?? '' },
      );
    else if (b.type === 'tool_use')
      content.push({ type: 'tool_use', id: b.id, name: b.name, input: b.input ?? {} });
    else if (b.type === 'thinking')
      content.push({ type: 'thinking', thinking: b.thinking ?? '', signature: b.signature ?? null });
    else if (b.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: b.data });
    else content.push({ type: 'raw', wire: 'anthropic', value: b });
  }
  const stop = decodeAnthropicStopReason(body?.stop_reason);
  return {
    id: String(body?.id ?? ''),
    model: String(body?.model ?? ''),
    content,
    stop_reason: stopReasonWithTools(
      stop,
      content.some((b) => b.type === 'tool_use'),
    ),
    stop_sequence: body?.stop_sequence ?? null,
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      cached_input_tokens: 0,
      cache_creation_input_tokens: 0,
      ...decodeAnthropicUsage(body?.usage),
    },
  };
}

export function decodeAnthropicStopReason(r: unknown): StopReason {
  return typeof r === 'string' && (STOP_REASONS as readonly string[]).includes(r)
    ? (r as StopReason)
    : 'end_turn';
}

/** The usage fields present and non-null (streams send them across two events; wire-formats §6 #10). */
export function decodeAnthropicUsage(u: any): Partial<CanonicalUsage> {
  const out: Partial<CanonicalUsage> = {};
  if (!u) return out;
  if (typeof u.input_tokens === 'number') out.input_tokens = u.input_tokens;
  if (typeof u.output_tokens === 'number') out.output_tokens = u.output_tokens;
  if (typeof u.cache_read_input_tokens === 'number') out.cached_input_tokens = u.cache_read_input_tokens;
  if (typeof u.cache_creation_input_tokens === 'number')
    out.cache_creation_input_tokens = u.cache_creation_input_tokens;
  const hour = u.cache_creation?.ephemeral_1h_input_tokens;
  if (typeof hour === 'number') out.cache_creation_1h_input_tokens = hour;
  // web_fetch_requests are not billed per use (only the fetched content, as input tokens)
  const searches = u.server_tool_use?.web_search_requests;
  if (typeof searches === 'number') out.web_search_requests = searches;
  const thinking = u.output_tokens_details?.thinking_tokens;
  if (typeof thinking === 'number') out.reasoning_tokens = thinking;
  // the answer says what served the call, which prices it: fast mode (`speed: "fast"`), else the organisation's
  // Priority Tier capacity (`service_tier: "priority"`; `standard` and `batch` are no paid tier of their own)
  if (u.speed === 'fast') out.service_tier = 'fast';
  else if (u.service_tier === 'priority') out.service_tier = 'priority';
  else if (typeof u.speed === 'string') out.service_tier = u.speed;
  return out;
}

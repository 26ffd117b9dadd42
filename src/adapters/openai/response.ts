/**
 * @module OpenAI/OpenRouter `chat.completion` → CanonicalResponse (wire-formats §5.2). Uncached input is
 * `prompt_tokens − cached_tokens − cache_write_tokens` (DECISIONS §3); OpenRouter reasoning becomes
 * thinking blocks; an `error` embedded in a 200 is raised as a failure (wire-formats §3); any other body
 * that is not a chat.completion (no choices, no usage counts) is refused.
 */
import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import type { ContentBlock } from '../../canonical/message.ts';
import { reasoningBlockOf } from '../../canonical/reasoning-origin.ts';
import {
  type CanonicalResponse,
  type CanonicalUsage,
  emptyUsage,
  type StopReason,
  stopReasonWithTools,
} from '../../canonical/response.ts';
import { parseToolInput } from '../../canonical/stream.ts';
import { formatDecimal, parseDecimal } from '../../lib/decimal.ts';
import type { EmbeddedError, HeaderGetter } from '../adapter.ts';
import { checkResponseShape, TokenCountSchema } from '../response-shape.ts';
import { toSvcError } from '../upstream-error.ts';
import {
  type ClassifyResponse,
  classifyEmbeddedOpenAIError,
  classifyOpenAIStreamError,
  embeddedOpenAIError,
} from './errors.ts';

/** The fields every chat.completion has (wire-formats §2.5, §3); the rest is read leniently below. */
export const OpenAIResponseSchema = v.looseObject({
  id: v.string(),
  choices: v.pipe(
    v.array(
      v.looseObject({
        message: v.looseObject({
          content: v.nullish(v.string()),
          tool_calls: v.nullish(v.array(v.looseObject({}))),
        }),
        finish_reason: v.nullish(v.string()),
      }),
    ),
    v.minLength(1),
  ),
  usage: v.looseObject({ prompt_tokens: TokenCountSchema, completion_tokens: TokenCountSchema }),
});

/** Upstream 200 body → CanonicalResponse; SvcError for an embedded error or a body that is not a chat.completion. */
export function decodeOpenAIResponse(raw: unknown): CanonicalResponse {
  const embedded = embeddedOpenAIError(raw);
  if (embedded !== undefined) throw toSvcError(classifyOpenAIStreamError(embedded));
  const body: any = checkResponseShape(OpenAIResponseSchema, raw, 'a chat.completion');
  const choice = body.choices[0];
  const msg = choice.message;
  const content: ContentBlock[] = decodeReasoning(msg);
  if (typeof msg.content === 'string' && msg.content !== '')
    content.push({ type: 'text', text: msg.content });
  if (typeof msg.refusal === 'string' && msg.refusal !== '')
    content.push({ type: 'text', text: msg.refusal });
  // the deprecated single `function_call` is a tool call all the same
  const calls = [...(msg.tool_calls ?? []), ...(msg.function_call ? [{ function: msg.function_call }] : [])];
  for (const c of calls) {
    // a custom tool's call (type custom) names its tool and carries free text: `custom.name`, `custom.input`
    const called =
      c?.type === 'custom'
        ? { name: c.custom?.name, args: c.custom?.input }
        : { name: c?.function?.name, args: c?.function?.arguments };
    if (typeof called.name !== 'string' || called.name === '') continue; // nothing to call
    content.push({
      type: 'tool_use',
      // some OpenAI-compatible servers send no id; a tool_result must still be able to name the call
      id: typeof c.id === 'string' && c.id !== '' ? c.id : generatedToolCallId(),
      name: called.name,
      input: parseToolInput(typeof called.args === 'string' ? called.args : ''),
    });
  }
  const stop = stopReasonWithTools(
    msg.refusal ? 'refusal' : decodeFinishReason(choice.finish_reason),
    content.some((b) => b.type === 'tool_use'),
  );
  return {
    id: body.id,
    model: String(body.model ?? ''),
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: withServedTier(
      {
        input_tokens: 0,
        output_tokens: 0,
        cached_input_tokens: 0,
        cache_creation_input_tokens: 0,
        ...decodeOpenAIUsage(body.usage),
      },
      body,
    ),
  };
}

/**
 * `usage` with the service tier the answer says it ran at (`service_tier` of a chat.completion, its chunks or a
 * Responses `response`: `default`, `priority`, `flex`…), which prices the call (models/pricing.ts).
 */
export function withServedTier<U extends Partial<CanonicalUsage>>(usage: U, answer: any): U {
  const tier = answer?.service_tier;
  if (typeof tier === 'string') usage.service_tier = tier;
  return usage;
}

/**
 * The error a 200 chat.completion body (parsed) holds instead of its answer (OpenRouter, wire-formats §3: a top-level
 * `error`, whose numeric `code` is the HTTP status it stands for, or a choice that finished with "error"),
 * classified as `classifyResponse` classifies the provider's HTTP answer of that status, so the call is
 * retried and answered exactly as that answer would be; a `code` that is no error status is classified by
 * its type. Null for any other body (decodeOpenAIResponse reads it, or refuses what it cannot read).
 */
export function classifyOpenAIResponseBody(
  classifyResponse: ClassifyResponse,
): (body: unknown, header: HeaderGetter) => EmbeddedError | null {
  return (body, header) => embeddedOpenAIFailure(classifyResponse, body, header);
}

/**
 * The error a parsed 200 body or stream chunk holds in place of its answer (embeddedOpenAIError), classed as
 * the HTTP answer of its status, with the usage it states (the prompt a failed generation read); null when
 * it holds none.
 */
export function embeddedOpenAIFailure(
  classifyResponse: ClassifyResponse,
  raw: any,
  header: HeaderGetter,
): EmbeddedError | null {
  const error = embeddedOpenAIError(raw);
  if (error === undefined) return null;
  const failure = classifyEmbeddedOpenAIError(classifyResponse, error, header);
  const usage = decodeOpenAIUsage(raw.usage);
  return usage.input_tokens || usage.output_tokens || usage.cached_input_tokens
    ? { failure, usage: { ...emptyUsage(), ...usage } }
    : { failure };
}

/** `tool_calls[].index` the deprecated `function_call` delta is filed under (real indexes are ≥ 0). */
export const LEGACY_FUNCTION_CALL_INDEX = -1;

/** An id for a tool call the upstream sent without one: unique, so tool results can name it. */
export function generatedToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/** finish_reason → canonical stop reason (wire-formats §5.2). */
export function decodeFinishReason(r: unknown): StopReason {
  switch (r) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Usage with the three input classes apart (wire-formats §5.2 usage table). */
export function decodeOpenAIUsage(u: any): Partial<CanonicalUsage> {
  if (!u || typeof u !== 'object') return {};
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  const written = u.prompt_tokens_details?.cache_write_tokens ?? 0;
  const out: Partial<CanonicalUsage> = {
    input_tokens: Math.max(0, (u.prompt_tokens ?? 0) - cached - written),
    output_tokens: u.completion_tokens ?? 0,
    cached_input_tokens: cached,
    cache_creation_input_tokens: written,
  };
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') out.reasoning_tokens = reasoning;
  // a decimal string, never the exponent form String() gives a small number (1.2e-7)
  if (typeof u.cost === 'number' && Number.isFinite(u.cost) && u.cost >= 0)
    out.upstream_cost = formatDecimal(parseDecimal(u.cost), 0);
  return out;
}

/** OpenRouter `reasoning_details` (or plain `reasoning` / `reasoning_content`) → thinking / redacted_thinking blocks. */
export function decodeReasoning(msg: any): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const d of Array.isArray(msg?.reasoning_details) ? msg.reasoning_details : []) {
    const block = reasoningBlockOf(d);
    if (block) out.push(block);
  }
  // plain reasoning text: OpenRouter's `reasoning`, or `reasoning_content` (DeepSeek, vLLM, llama.cpp)
  const plain = typeof msg?.reasoning === 'string' ? msg.reasoning : msg?.reasoning_content;
  if (out.length === 0 && typeof plain === 'string' && plain !== '') {
    out.push({ type: 'thinking', thinking: plain, signature: null });
  }
  return out;
}

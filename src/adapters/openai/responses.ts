/**
 * @module The OpenAI adapter's second wire, the Responses API (`POST {base}/responses`), for Responses
 * clients routed to an OpenAI model: the client's bytes forwarded with only `model` replaced, the
 * `response` object read for usage and content (input_tokens − cached_tokens − cache_write_tokens is the
 * uncached input, DECISIONS §3), and stream frames echoing the requested model.
 */
import * as v from 'valibot';
import type { ContentBlock, ToolUseBlock } from '../../canonical/message.ts';
import {
  type CanonicalResponse,
  type CanonicalUsage,
  emptyUsage,
  type StopReason,
  stopReasonWithTools,
} from '../../canonical/response.ts';
import { parseToolInput } from '../../canonical/stream.ts';
import { replaceJsonValue, rewriteModel } from '../../lib/json-splice.ts';
import type { AdapterConfig, EmbeddedError, PassthroughInput, UpstreamCall } from '../adapter.ts';
import { checkResponseShape, TokenCountSchema } from '../response-shape.ts';
import { type FrameRewriter, formatFrame } from '../tap.ts';
import { toSvcError, type UpstreamFailure } from '../upstream-error.ts';
import { classifyOpenAIStreamError } from './errors.ts';
import { EFFORT_PATHS, withEffortFitted, withoutReasoningContext, withSummaryFitted } from './fit-effort.ts';
import { openaiHeaders } from './request.ts';
import { withServedTier } from './response.ts';

export function encodeResponsesPassthrough(input: PassthroughInput, config: AdapterConfig): UpstreamCall {
  return {
    url: `${config.baseUrl.replace(/\/+$/, '')}/responses`,
    headers: openaiHeaders(config),
    body: rewriteModel(fittedResponsesBody(input), input.upstreamModel),
  };
}

/**
 * The client's body fitted to the routed model when it names it by a gateway name (fit-effort.ts): without a
 * reasoning.context the model does not take (first, as it rewrites the whole reasoning object), then the effort
 * and the summary as the model takes them.
 */
function fittedResponsesBody({ bodyText, body, upstreamModel }: PassthroughInput): string {
  const withoutContext = withoutReasoningContext('openai', bodyText, body, upstreamModel);
  const effort = withEffortFitted('openai', withoutContext, body, upstreamModel, EFFORT_PATHS.responses);
  return withSummaryFitted('openai', effort, body, upstreamModel);
}

/** The fields every `response` object has; the rest is read leniently. */
export const ResponsesObjectSchema = v.looseObject({
  id: v.string(),
  status: v.string(),
  output: v.array(v.looseObject({ type: v.string() })),
  usage: v.looseObject({ input_tokens: TokenCountSchema, output_tokens: TokenCountSchema }),
});

/** Upstream 200 `response` → CanonicalResponse; SvcError for a failed response or a body that is not one. */
export function decodeResponsesObject(raw: unknown): CanonicalResponse {
  const failed = raw as any;
  if (failed?.status === 'failed') throw toSvcError(failureOf(failed));
  const body: any = checkResponseShape(ResponsesObjectSchema, raw, 'a Responses response object');
  const content = decodeOutput(body.output);
  return {
    id: body.id,
    model: String(body.model ?? ''),
    content,
    stop_reason: decodeResponsesStop(body, content),
    stop_sequence: null,
    usage: withServedTier(
      withWebSearches(decodeResponsesUsage(body.usage), countWebSearches(body.output)),
      body,
    ),
  };
}

/**
 * A 200 `response` (parsed) whose `status` is "failed" (the API's answer for a response that failed once begun)
 * fails the attempt as the same response.failed does as a stream's first event: classed by its `error`,
 * retried alike, and the usage it states billed (as for a failed stream, 8f6e55d); null for any other body.
 */
export function classifyResponsesBody(body: unknown): EmbeddedError | null {
  return (body as { status?: unknown } | null)?.status === 'failed' ? failedResponse(body) : null;
}

/**
 * A `response` whose status is "failed" (a 200 body, or the `response` of a `response.failed` event): its
 * failure, classed by its `error`, with the usage it states (web searches included), if any.
 */
export function failedResponse(raw: any): EmbeddedError {
  const failure = failureOf(raw);
  if (!raw?.usage || typeof raw.usage !== 'object') return { failure };
  const usage = withServedTier(
    withWebSearches(decodeResponsesUsage(raw.usage), countWebSearches(raw.output)),
    raw,
  );
  return usage.input_tokens || usage.output_tokens || usage.cached_input_tokens
    ? { failure, usage: { ...emptyUsage(), ...usage } }
    : { failure };
}

/**
 * The hosted web search calls of a response's `output` (`web_search_call` items): OpenAI bills each one,
 * and its `usage` does not count them.
 */
export function countWebSearches(output: unknown): number {
  return Array.isArray(output) ? output.filter((item) => item?.type === 'web_search_call').length : 0;
}

/** `usage` with `web_search_requests` when there were any. */
export function withWebSearches(usage: CanonicalUsage, searches: number): CanonicalUsage {
  return searches > 0 ? { ...usage, web_search_requests: searches } : usage;
}

/**
 * `usage` of a response: `input_tokens` includes the cache reads (`cached_tokens`) and the cache writes
 * (`cache_write_tokens`, sent by newer models), as Chat Completions' `prompt_tokens` does.
 */
export function decodeResponsesUsage(u: any): CanonicalUsage {
  const cached = Number(u?.input_tokens_details?.cached_tokens ?? 0) || 0;
  const written = Number(u?.input_tokens_details?.cache_write_tokens ?? 0) || 0;
  const usage: CanonicalUsage = {
    input_tokens: Math.max(0, (Number(u?.input_tokens) || 0) - cached - written),
    output_tokens: Number(u?.output_tokens) || 0,
    cached_input_tokens: cached,
    cache_creation_input_tokens: written,
  };
  const reasoning = u?.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') usage.reasoning_tokens = reasoning;
  return usage;
}

/**
 * Stop reason from `status` / `incomplete_details.reason`, and a `refusal` content part (the model declined,
 * in a completed response) as the stream decoder reads `response.refusal.delta`; tool calls make a plain end
 * `tool_use`.
 */
export function decodeResponsesStop(body: any, content: readonly ContentBlock[]): StopReason {
  const reason = body?.incomplete_details?.reason;
  const refused = (body?.output ?? []).some(
    (item: any) =>
      item?.type === 'message' &&
      Array.isArray(item.content) &&
      item.content.some((p: any) => p?.type === 'refusal'),
  );
  const stop: StopReason =
    reason === 'max_output_tokens'
      ? 'max_tokens'
      : reason === 'content_filter' || refused
        ? 'refusal'
        : 'end_turn';
  return stopReasonWithTools(
    stop,
    content.some((b) => b.type === 'tool_use'),
  );
}

/** Tap frame rewriter: `response.model` of lifecycle events becomes the requested name. */
export function rewriteResponsesFrame(model: string): FrameRewriter {
  const json = JSON.stringify(model);
  return (e) => formatFrame(e, replaceJsonValue(e.data, ['response', 'model'], json) ?? e.data);
}

// --- internal ---

function failureOf(failed: any): UpstreamFailure {
  return classifyOpenAIStreamError(failed?.error ?? { message: 'the response failed' });
}

function decodeOutput(output: any[]): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const item of output) {
    if (item.type === 'message') {
      for (const part of item.content ?? []) {
        const text = part?.type === 'refusal' ? part.refusal : part?.text;
        if (typeof text === 'string' && text !== '') out.push({ type: 'text', text });
      }
    } else if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      // a custom tool's call carries free text (`input`), kept as parseToolInput keeps text that is not JSON
      const text = item.type === 'function_call' ? item.arguments : item.input;
      out.push({
        type: 'tool_use',
        id: String(item.call_id),
        name: String(item.name),
        input: parseToolInput(String(text ?? '')),
      });
    } else if (item.type === 'reasoning') {
      const text = [...(item.summary ?? []), ...(item.content ?? [])].map((p: any) => p?.text ?? '').join('');
      out.push({ type: 'thinking', thinking: text, signature: item.encrypted_content ?? null });
    } else {
      const call = clientToolCall(item);
      if (call) out.push(call);
    }
  }
  return out;
}

/**
 * A call of one of OpenAI's tools that the client runs (`computer_call`, `local_shell_call`, `shell_call`,
 * `apply_patch_call`: the response stops for the client to run it and send its output, as for a function
 * call) as a tool call named after the tool, its action or operation as input; undefined for any other item.
 */
export function clientToolCall(item: any): ToolUseBlock | undefined {
  const name = CLIENT_TOOL_CALLS[item?.type];
  if (name === undefined || typeof item.call_id !== 'string') return undefined;
  const input = item.action ?? item.operation ?? (item.actions ? { actions: item.actions } : {});
  return { type: 'tool_use', id: item.call_id, name, input: typeof input === 'object' ? input : {} };
}

/** Whether `type` is a call item of one of OpenAI's tools the client runs (`shell_call`, …), custom tools aside. */
export function isClientToolCallType(type: unknown): boolean {
  return typeof type === 'string' && Object.hasOwn(CLIENT_TOOL_CALLS, type);
}

const CLIENT_TOOL_CALLS: Record<string, string> = {
  computer_call: 'computer',
  local_shell_call: 'local_shell',
  shell_call: 'shell',
  apply_patch_call: 'apply_patch',
};

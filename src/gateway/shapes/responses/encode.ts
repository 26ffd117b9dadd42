/**
 * @module CanonicalResponse → an OpenAI Responses `response` object (openai-node `Response`): output items
 * (`reasoning`, `message` with `output_text`, `function_call`, a Claude web search's `web_search_call`),
 * status and `incomplete_details` from the stop reason, usage with cached and reasoning tokens, `model` = the requested name, and the request
 * fields the real API echoes (`instructions`, `tools`, `tool_choice`, `text`, …). Shared by the streaming
 * encoder, whose `response.completed` carries the same object.
 */
import { type ContentBlock, type TextBlock, urlCitationSpans } from '../../../canonical/message.ts';
import { markSeal } from '../../../canonical/reasoning-origin.ts';
import type { CanonicalResponse, CanonicalUsage, StopReason } from '../../../canonical/response.ts';
import { openaiServiceTier } from '../openai/encode.ts';
import type { EncodeOptions } from '../shape.ts';
import { callNameFields } from './namespaces.ts';
import { outcomeIn, searchCallOf, searchItemId, webSearchCallItem } from './web-search-calls.ts';

export function encodeResponsesResponse(
  res: CanonicalResponse,
  opts: EncodeOptions,
): Record<string, unknown> {
  const base = opts.idBase ?? responseIdBase(res.id);
  const status = statusOf(res.stop_reason);
  // the item the token limit cut off is `incomplete`, as the real API marks it (and as a stream does)
  const last = status.status === 'incomplete' ? res.content.length - 1 : -1;
  const output = res.content.flatMap((b, i) => {
    const item = encodeOutputItem(
      b,
      base,
      i,
      opts.request,
      i === last ? 'incomplete' : 'completed',
      res.content,
    );
    return item ? [item] : [];
  });
  return responseObject(base, opts, {
    ...status,
    output,
    usage: encodeResponsesUsage(res.usage),
    service_tier: openaiServiceTier(res.usage.service_tier),
  });
}

/** `resp_<id>`: the upstream message id without its own prefix. */
export function responseIdBase(id: string): string {
  return id.replace(/^(resp_|msg_|chatcmpl-|gen-)/, '');
}

/** The top-level `response` object around `fields` (status, output, usage, error, incomplete_details). */
export function responseObject(
  base: string,
  opts: EncodeOptions,
  fields: Record<string, unknown>,
): Record<string, unknown> {
  const req = opts.request ?? {};
  const echo = (key: string, fallback: unknown) => (req[key] === undefined ? fallback : req[key]);
  return {
    id: `resp_${base}`,
    object: 'response',
    created_at: opts.created ?? Math.floor(Date.now() / 1000),
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: echo('instructions', null),
    max_output_tokens: echo('max_output_tokens', null),
    model: opts.model,
    output: [],
    parallel_tool_calls: echo('parallel_tool_calls', true),
    previous_response_id: echo('previous_response_id', null),
    // the tier the call ran at (fields name it), as the API's response does
    service_tier: 'default',
    reasoning: { effort: null, summary: null, ...(req.reasoning as object | undefined) },
    store: echo('store', true),
    temperature: echo('temperature', 1),
    text: echo('text', { format: { type: 'text' } }),
    tool_choice: echo('tool_choice', 'auto'),
    tools: echo('tools', []),
    top_p: echo('top_p', 1),
    truncation: echo('truncation', 'disabled'),
    usage: null,
    user: echo('user', null),
    metadata: echo('metadata', {}),
    ...fields,
  };
}

/** One content block as an output item (`status` given while streaming), or null for none. */
export function encodeOutputItem(
  b: ContentBlock,
  base: string,
  index: number,
  request: Record<string, unknown> | undefined,
  status = 'completed',
  content: readonly ContentBlock[] = [],
): Record<string, unknown> | null {
  switch (b.type) {
    case 'text':
      // an empty text block (a start and a stop, no delta) is no message: a stream never announced one
      if (b.text === '') return null;
      return {
        id: `msg_${base}_${index}`,
        type: 'message',
        status,
        role: 'assistant',
        content: [{ type: 'output_text', text: b.text, annotations: urlAnnotations(b) }],
      };
    case 'tool_use':
      return {
        id: `fc_${base}_${index}`,
        type: 'function_call',
        status,
        arguments: callArguments(b.input),
        call_id: b.id,
        ...callNameFields(b.name, request),
      };
    // another family's seal goes out marked with its origin, so a replay to Claude or OpenAI leaves it out
    case 'thinking':
      return reasoningItem(base, index, b.thinking, b.signature && markSeal(b.signature, b.origin), request);
    case 'redacted_thinking':
      return reasoningItem(
        base,
        index,
        '',
        `${REDACTED_REASONING_PREFIX}${markSeal(b.data, b.origin)}`,
        request,
      );
    case 'raw': {
      // a Claude model's web search (the Anthropic adapter offered its search tool for OpenAI's hosted one)
      const call = b.wire === 'anthropic' ? searchCallOf(b.value) : null;
      return call && webSearchCallItem(searchItemId(base, index), call, outcomeIn(content, call), request);
    }
    default:
      return null;
  }
}

/** A text block's citations of web pages as `url_citation` annotations over its own `output_text`. */
export function urlAnnotations(b: TextBlock): Record<string, unknown>[] {
  return urlCitationSpans(b, 0).map((span) => ({ type: 'url_citation', ...span }));
}

/**
 * Marks `encrypted_content` that holds a redacted thinking block's data rather than a thinking block's
 * signature, so a replayed item becomes `redacted_thinking` again (a signature check would refuse it as
 * thinking).
 */
export const REDACTED_REASONING_PREFIX = 'svc-redacted-thinking:';

/**
 * A `reasoning` item: the thinking text as its summary; the signature as `encrypted_content` when the
 * client asked for it (`include: ["reasoning.encrypted_content"]`), so a replayed item keeps it valid.
 */
export function reasoningItem(
  base: string,
  index: number,
  text: string,
  signature: string | null,
  request: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id: `rs_${base}_${index}`,
    type: 'reasoning',
    summary: text === '' ? [] : [{ type: 'summary_text', text }],
  };
  if (signature !== null && wantsEncryptedReasoning(request)) item.encrypted_content = signature;
  return item;
}

export function wantsEncryptedReasoning(request: Record<string, unknown> | undefined): boolean {
  const include = request?.include;
  return Array.isArray(include) && include.includes('reasoning.encrypted_content');
}

/** `status` and `incomplete_details` of a finished response. */
export function statusOf(stop: StopReason): Record<string, unknown> {
  if (stop === 'max_tokens' || stop === 'model_context_window_exceeded')
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (stop === 'refusal') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/**
 * Responses usage: `input_tokens` counts all three input classes, cache reads again as `cached_tokens` and
 * cache writes as `cache_write_tokens` (both required fields of openai-node's `ResponseUsage`).
 */
export function encodeResponsesUsage(u: CanonicalUsage): Record<string, unknown> {
  const input = u.input_tokens + u.cached_input_tokens + u.cache_creation_input_tokens;
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: u.cached_input_tokens,
      cache_write_tokens: u.cache_creation_input_tokens,
    },
    output_tokens: u.output_tokens,
    output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
    total_tokens: input + u.output_tokens,
  };
}

// --- internal ---

/**
 * A call's `arguments` text. Arguments that were no JSON object (a call the token limit cut off mid-way)
 * are kept as `{_raw_arguments: text}` (canonical/stream.ts) and go back as the text the model wrote, as the
 * streamed `function_call_arguments` events carried it, not as that wrapper.
 */
function callArguments(input: Record<string, unknown>): string {
  const keys = Object.keys(input);
  if (keys.length === 1 && typeof input._raw_arguments === 'string') return input._raw_arguments;
  return JSON.stringify(input);
}

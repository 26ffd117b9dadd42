/**
 * The OpenAI Responses API (`POST /v1/responses`) for the fake provider, as the API reference prints it
 * (test/fixtures/provider-docs.ts): input items read into a turn, the `response` object with `reasoning`,
 * `message`, `function_call` and (for a custom tool) `custom_tool_call` output items and the request fields it echoes, the streaming events from
 * `response.created` to `response.completed`, and OpenAI's error bodies.
 */

import { billedInputTokens } from './billing.ts';
import { openaiCodec, userTooLong } from './openai.ts';
import { responsesJsonModeRefusal } from './openai-json-mode.ts';
import { responsesPartRefusal, responsesToolPairRefusal } from './openai-parts.ts';
import { obfuscates, obfuscationFor, servedTier } from './openai-reply.ts';
import { modelRefusal, sealedReasoningRefusal } from './openai-responses-refusals.ts';
import { readResponsesTurn } from './openai-responses-turn.ts';
import type { Codec, Reply, ReplyBlock, ReplyContext } from './responses.ts';
import { splitFragments, splitWords } from './responses.ts';
import { sseFrame } from './sse.ts';

/** `POST /v1/responses` as OpenAI answers it. */
export const responsesCodec: Codec = {
  ...openaiCodec,
  storesResponses: true,
  messageIdPrefix: 'resp_Fake',
  toolIdPrefix: 'call_Fake',
  checkBody(body) {
    if (typeof body.model !== 'string') return "Missing required parameter: 'model'.";
    if (body.input !== undefined && typeof body.input !== 'string' && !Array.isArray(body.input))
      return "Invalid type for 'input': expected one of a string or an array of input items.";
    return (
      userTooLong(body) ??
      responsesPartRefusal(body) ??
      responsesToolPairRefusal(body) ??
      modelRefusal(body) ??
      sealedReasoningRefusal(body) ??
      responsesJsonModeRefusal(body)
    );
  },
  readTurn: readResponsesTurn,
  encodeJson: (reply, ctx) => response(ctx, 'completed', outputOf(reply, ctx), reply),
  encodeFrames,
  malformedFrame(ctx) {
    return `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"${ctx.id}","delta":"\n\n`;
  },
  openTextFrame(ctx) {
    return `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"${ctx.id}","output_index":0,"content_index":0,"delta":"`;
  },
  errorIn200Body(status, message, ctx) {
    // a response that failed once begun (as a background response reads): its error, and the prompt it read
    const [, code, fallback] = RESPONSES_STREAM_ERRORS[status] ?? RESPONSES_STREAM_ERRORS[500];
    const usage = promptUsage(ctx);
    return { ...response(ctx, 'failed', []), error: { code, message: message ?? fallback }, usage };
  },
  errorFrame(status, ctx, sequence = 2, override) {
    // as the API sends it inside a 200 (what Codex users captured, openai/codex#43337, openai-dotnet#881):
    // an `error` event whose fields sit in a nested `error` object, then `response.failed`, whose response
    // states the usage of the prompt it read when it failed before any output (after the two preamble events)
    const [type, code, fallback] = RESPONSES_STREAM_ERRORS[status] ?? RESPONSES_STREAM_ERRORS[500];
    const message = override ?? fallback;
    const error = sseFrame(
      { type: 'error', error: { type, code, message, param: null }, sequence_number: sequence },
      'error',
    );
    const failed = {
      ...response(ctx, 'failed', []),
      error: { code, message },
      ...(sequence <= 2 ? { usage: promptUsage(ctx) } : {}),
    };
    return `${error}${sseFrame({ type: 'response.failed', sequence_number: sequence + 1, response: failed }, 'response.failed')}`;
  },
};

// --- internal ---

/** The usage of a response that failed before any output: the prompt it read. */
function promptUsage(ctx: ReplyContext) {
  const input = billedInputTokens('openai_responses', ctx.body ?? {});
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 0,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input,
  };
}

/** In-stream failures by status: the nested error's type and code, and its message. */
const RESPONSES_STREAM_ERRORS: Record<number, [string, string, string]> = {
  429: ['too_many_requests', 'too_many_requests', 'Too Many Requests'],
  500: ['server_error', 'server_error', 'The server had an error while processing your request.'],
  503: [
    'service_unavailable_error',
    'server_is_overloaded',
    'Our servers are currently overloaded. Please try again later.',
  ],
  529: [
    'service_unavailable_error',
    'server_is_overloaded',
    'Our servers are currently overloaded. Please try again later.',
  ],
};

type Obj = Record<string, unknown>;

/** Output item ids: `rs_…`, `msg_…`, `fc_…` (`ctc_…` for a custom tool's call) after the response id, in order. */
function itemId(prefix: string, ctx: ReplyContext, index: number): string {
  return `${prefix}_${ctx.id.slice('resp_'.length)}${index}`;
}

/**
 * A message's content part: `output_text`, or for a refusal (stop=refusal) the API's `refusal` part, which
 * it sends in a completed response (a content filter is `incomplete` instead).
 */
function textPart(text: string, refusal: boolean): Obj {
  return refusal ? { type: 'refusal', refusal: text } : { type: 'output_text', text, annotations: [] };
}

function itemOf(
  block: ReplyBlock,
  ctx: ReplyContext,
  index: number,
  status: string,
  args?: string,
  refusal = false,
): Obj {
  if (block.type === 'thinking') {
    // reasoning text stays on OpenAI's side; a summary only when `reasoning.summary` asks for one, whole
    // once the item is done (streamed, its parts arrive as reasoning_summary_* events between)
    const summary = status === 'in_progress' ? [] : summaryOf(block, ctx).map(summaryPart);
    const item: Obj = { id: itemId('rs', ctx, index), type: 'reasoning', summary };
    const include = ctx.body?.include;
    if (Array.isArray(include) && include.includes('reasoning.encrypted_content'))
      item.encrypted_content = `gAAAAAfake${block.signature}`;
    return item;
  }
  if (block.type === 'text')
    return {
      id: itemId('msg', ctx, index),
      type: 'message',
      status,
      role: 'assistant',
      content: status === 'in_progress' ? [] : [textPart(block.text, refusal)],
    };
  if (block.customInput !== undefined)
    return {
      id: itemId('ctc', ctx, index),
      type: 'custom_tool_call',
      status,
      call_id: block.id,
      name: block.name,
      ...namespaceOf(block),
      input: args ?? block.customInput,
    };
  return {
    id: itemId('fc', ctx, index),
    type: 'function_call',
    status,
    arguments: args ?? JSON.stringify(block.input),
    call_id: block.id,
    name: block.name,
    ...namespaceOf(block),
  };
}

/**
 * A reasoning item's summary parts: the thinking text as one part when the request asks for a summary
 * (`reasoning.summary`, or the deprecated `generate_summary`: auto, concise or detailed); none for a redacted
 * or empty thought, and none unasked.
 */
function summaryOf(block: ReplyBlock, ctx: ReplyContext): string[] {
  const reasoning = (ctx.body?.reasoning ?? {}) as Obj;
  const asked = reasoning.summary ?? reasoning.generate_summary;
  if (block.type !== 'thinking' || block.redacted || block.text === '') return [];
  return typeof asked === 'string' && ['auto', 'concise', 'detailed'].includes(asked) ? [block.text] : [];
}

function summaryPart(text: string): Obj {
  return { type: 'summary_text', text };
}

function outputOf(reply: Reply, ctx: ReplyContext): Obj[] {
  const items = reply.blocks.map((b, i) =>
    itemOf(b, ctx, i, doneStatus(reply, i), undefined, reply.stopReason === 'refusal'),
  );
  return withSearches(reply, items, (search, i) => searchItem(search, ctx, i, 'completed'));
}

/**
 * `items` (one per reply block) with the reply's hosted web searches after any reasoning, as the API lists
 * its `web_search_call` items before the message that answers from them.
 */
function withSearches<T>(
  reply: Reply,
  items: T[],
  search: (s: Reply['searches'][number], i: number) => T,
): T[] {
  const at = reply.blocks.findLastIndex((b) => b.type === 'thinking') + 1;
  return [...items.slice(0, at), ...reply.searches.map(search), ...items.slice(at)];
}

/** A `web_search_call` output item; its `action` names the query once the search is done. */
function searchItem(search: Reply['searches'][number], ctx: ReplyContext, i: number, status: string): Obj {
  const action = status === 'completed' ? { type: 'search', query: search.query } : { type: 'search' };
  return { id: `ws_${ctx.id.slice('resp_'.length)}${i}`, type: 'web_search_call', status, action };
}

/** A finished item's status: the one the token limit cut off (the last) is `incomplete`, as the API marks it. */
function doneStatus(reply: Reply, index: number): string {
  return reply.stopReason === 'max_tokens' && index === reply.blocks.length - 1 ? 'incomplete' : 'completed';
}

function response(ctx: ReplyContext, status: string, output: Obj[], reply?: Reply): Obj {
  const req = ctx.body ?? {};
  const echo = (key: string, fallback: unknown) => (req[key] === undefined ? fallback : req[key]);
  const incomplete = reply?.stopReason === 'max_tokens';
  const usage = reply?.usage;
  return {
    id: ctx.id,
    object: 'response',
    created_at: ctx.created,
    status: incomplete && status === 'completed' ? 'incomplete' : status,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: echo('instructions', null),
    max_output_tokens: echo('max_output_tokens', null),
    model: ctx.model,
    output,
    parallel_tool_calls: echo('parallel_tool_calls', true),
    previous_response_id: echo('previous_response_id', null),
    service_tier: servedTier(ctx, reply),
    reasoning: { effort: null, summary: null, ...(req.reasoning as Obj | undefined) },
    store: echo('store', true),
    temperature: echo('temperature', 1),
    text: echo('text', { format: { type: 'text' } }),
    tool_choice: echo('tool_choice', 'auto'),
    tools: echo('tools', []),
    top_p: echo('top_p', 1),
    truncation: echo('truncation', 'disabled'),
    usage: usage
      ? {
          input_tokens: usage.input + usage.cacheRead + usage.cacheWrite,
          input_tokens_details: { cached_tokens: usage.cacheRead, cache_write_tokens: usage.cacheWrite },
          output_tokens: usage.output,
          output_tokens_details: { reasoning_tokens: usage.reasoning },
          total_tokens: usage.input + usage.cacheRead + usage.cacheWrite + usage.output,
        }
      : null,
    user: echo('user', null),
    metadata: echo('metadata', {}),
  };
}

function encodeFrames(reply: Reply, ctx: ReplyContext): string[] {
  const frames: string[] = [];
  let seq = 0;
  const event = (type: string, fields: Obj) =>
    frames.push(sseFrame({ type, sequence_number: seq++, ...fields }, type));
  // delta events carry OpenAI's obfuscation padding unless the request turned it off
  const pad = (piece: string) => (obfuscates(ctx) ? { obfuscation: obfuscationFor(piece) } : {});
  const started = response(ctx, 'in_progress', []);
  event('response.created', { response: started });
  event('response.in_progress', { response: started });
  type Step = { block: ReplyBlock; index: number } | { search: Reply['searches'][number]; n: number };
  const steps = withSearches<Step>(
    reply,
    reply.blocks.map((block, index) => ({ block, index })),
    (search, n) => ({ search, n }),
  );
  steps.forEach((step, output_index) => {
    if ('search' in step) {
      // a hosted web search: its item, then the search's own progress events (no deltas)
      const added = searchItem(step.search, ctx, step.n, 'in_progress');
      const at = { output_index, item_id: added.id };
      event('response.output_item.added', { output_index, item: added });
      event('response.web_search_call.in_progress', at);
      event('response.web_search_call.searching', at);
      event('response.web_search_call.completed', at);
      event('response.output_item.done', {
        output_index,
        item: searchItem(step.search, ctx, step.n, 'completed'),
      });
      return;
    }
    const { block, index } = step;
    const item_id = itemId(
      block.type === 'thinking'
        ? 'rs'
        : block.type === 'text'
          ? 'msg'
          : block.customInput !== undefined
            ? 'ctc'
            : 'fc',
      ctx,
      index,
    );
    const at = { item_id, output_index };
    event('response.output_item.added', {
      output_index,
      item: itemOf(block, ctx, index, 'in_progress', ''),
    });
    if (block.type === 'thinking')
      summaryOf(block, ctx).forEach((text, summary_index) => {
        const part = { ...at, summary_index };
        event('response.reasoning_summary_part.added', { ...part, part: summaryPart('') });
        for (const piece of splitWords(text))
          event('response.reasoning_summary_text.delta', { ...part, delta: piece, ...pad(piece) });
        event('response.reasoning_summary_text.done', { ...part, text });
        event('response.reasoning_summary_part.done', { ...part, part: summaryPart(text) });
      });
    else if (block.type === 'text' && reply.stopReason === 'refusal') {
      event('response.content_part.added', { ...at, content_index: 0, part: textPart('', true) });
      for (const piece of splitWords(block.text))
        event('response.refusal.delta', { ...at, content_index: 0, delta: piece, ...pad(piece) });
      event('response.refusal.done', { ...at, content_index: 0, refusal: block.text });
      event('response.content_part.done', { ...at, content_index: 0, part: textPart(block.text, true) });
    } else if (block.type === 'text') {
      const part = (text: string) => textPart(text, false);
      event('response.content_part.added', { ...at, content_index: 0, part: part('') });
      for (const piece of splitWords(block.text))
        event('response.output_text.delta', {
          ...at,
          content_index: 0,
          delta: piece,
          logprobs: [],
          ...pad(piece),
        });
      event('response.output_text.done', { ...at, content_index: 0, text: block.text, logprobs: [] });
      event('response.content_part.done', { ...at, content_index: 0, part: part(block.text) });
    } else if (block.type === 'tool_call' && block.customInput !== undefined) {
      const input = block.customInput;
      for (const piece of splitFragments(input))
        event('response.custom_tool_call_input.delta', { ...at, delta: piece, ...pad(piece) });
      event('response.custom_tool_call_input.done', { ...at, input });
    } else if (block.type === 'tool_call') {
      const args = JSON.stringify(block.input);
      for (const piece of splitFragments(args))
        event('response.function_call_arguments.delta', { ...at, delta: piece, ...pad(piece) });
      // no name or namespace: the API names the call on its item only
      event('response.function_call_arguments.done', { ...at, arguments: args });
    }
    event('response.output_item.done', {
      output_index,
      item: itemOf(block, ctx, index, doneStatus(reply, index), undefined, reply.stopReason === 'refusal'),
    });
  });
  const done = response(ctx, 'completed', outputOf(reply, ctx), reply);
  event(done.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: done });
  return frames;
}

/** A namespaced tool's call names its namespace beside the member's name, as the API writes it. */
function namespaceOf(block: ReplyBlock): { namespace?: string } {
  return block.type === 'tool_call' && block.namespace ? { namespace: block.namespace } : {};
}

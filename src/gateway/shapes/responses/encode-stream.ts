/**
 * @module Canonical stream events → OpenAI Responses SSE, as the OpenAI SDK's stream accumulator and the
 * Vercel AI SDK consume it: `response.created` and `response.in_progress` first; per output item
 * `response.output_item.added` … `response.output_item.done`, with `content_part` / `output_text`
 * events for text (and `output_text.annotation.added` for each web page it cites), `reasoning_summary_part` /
 * `reasoning_summary_text` for thinking, `function_call_arguments` for tool calls and `web_search_call` events
 * for a Claude model's web searches; then `response.completed`
 * (or `response.incomplete`) carrying the whole response with usage. Every event has `event:`, `type` and a
 * rising `sequence_number`, and every response object of one stream the same `created_at`. A failure after the
 * first event ends the stream with an `error` event and then `response.failed` (the OpenAI SDK throws on the
 * first; Codex reads the second).
 */
import { randomBytes } from 'node:crypto';
import { markSeal } from '../../../canonical/reasoning-origin.ts';
import type { CanonicalStreamEvent } from '../../../canonical/stream.ts';
import { SvcError } from '../../../lib/errors.ts';
import { openaiServiceTier } from '../openai/encode.ts';
import { type StreamEncodeOptions, TRUNCATED } from '../shape.ts';
import {
  encodeOutputItem,
  encodeResponsesUsage,
  REDACTED_REASONING_PREFIX,
  reasoningItem,
  responseIdBase,
  responseObject,
  statusOf,
  urlAnnotations,
} from './encode.ts';
import { responsesErrorFields, responsesFailureCode } from './errors.ts';
import { callNameFields } from './namespaces.ts';
import { withSignatures } from './stored-responses.ts';
import {
  type SearchCall,
  type SearchOutcome,
  searchCallOf,
  searchItemId,
  searchOutcomeOf,
  webSearchCallItem,
} from './web-search-calls.ts';

export async function* encodeResponsesStream(
  events: AsyncIterable<CanonicalStreamEvent>,
  opts: StreamEncodeOptions,
): AsyncGenerator<string> {
  // one created_at for every response object of the stream, as the real API sends
  const s: State = {
    opts: { ...opts, created: opts.created ?? Math.floor(Date.now() / 1000) },
    base: '',
    seq: 0,
    open: null,
    outputs: 0,
    done: [],
    citations: new Map(),
    searches: new Map(),
    tier: 'default',
  };
  try {
    for await (const e of events) {
      const out = encodeEvent(s, e);
      if (out) yield out;
      if (e.type === 'message.complete') return;
    }
  } catch (err) {
    yield failed(s, err);
    return;
  }
  yield failed(s, new SvcError('upstream_error', { message: TRUNCATED }));
}

// --- internal ---

interface OpenItem {
  block: number;
  kind: 'text' | 'reasoning' | 'function_call';
  id: string;
  outputIndex: number;
  text: string;
  signature: string | null;
  name: string;
  callId: string;
  /** A call whose end the upstream stated: finished, closed by the next event. */
  ended: boolean;
  /** A redacted thinking block: a reasoning item with no summary, its data as the encrypted content. */
  redacted: boolean;
}

interface State {
  opts: StreamEncodeOptions;
  base: string;
  seq: number;
  open: OpenItem | null;
  outputs: number;
  /** Output items finished so far (a failed response carries them). */
  done: Record<string, unknown>[];
  /** Canonical block index → the sources its text cites, until its item is done. */
  citations: Map<number, Record<string, unknown>[]>;
  /** Web searches announced, by Claude's server tool use id, until their result comes. */
  searches: Map<string, { id: string; outputIndex: number; call: SearchCall }>;
  /** The `service_tier` the upstream's first frame names (`default` when none). */
  tier: string;
}

function frame(s: State, type: string, fields: Record<string, unknown>): string {
  const data = JSON.stringify({ type, sequence_number: s.seq++, ...fields });
  return `event: ${type}\ndata: ${data}\n\n`;
}

function start(s: State, messageId: string, tier: string | undefined): string {
  if (s.base) return '';
  s.base = s.opts.idBase ?? responseIdBase(messageId);
  s.tier = openaiServiceTier(tier);
  const response = responseObject(s.base, s.opts, { status: 'in_progress', service_tier: s.tier });
  return frame(s, 'response.created', { response }) + frame(s, 'response.in_progress', { response });
}

function encodeEvent(s: State, e: CanonicalStreamEvent): string {
  let out = start(s, e.message_id, e.type === 'message.start' ? e.service_tier : undefined);
  switch (e.type) {
    case 'message.start':
      return out;
    case 'text.delta':
      // a citation of the block's text: its annotation is added when the block's text is whole (close)
      if (e.citation)
        s.citations.set(e.content_block_index, [
          ...(s.citations.get(e.content_block_index) ?? []),
          e.citation,
        ]);
      // an empty text block is no item, streamed or final (encodeOutputItem)
      if (e.text === '') return out;
      if (s.open?.block !== e.content_block_index) out += close(s) + openText(s, e.content_block_index);
      s.open!.text += e.text;
      return (
        out +
        frame(s, 'response.output_text.delta', {
          ...at(s.open!),
          content_index: 0,
          delta: e.text,
          logprobs: [],
        })
      );
    case 'thinking.delta':
      // a redacted block arrives whole: its reasoning item is added and done at once, where it stands
      if (e.redacted_data !== undefined)
        return (
          out +
          close(s) +
          openRedacted(s, e.content_block_index, markSeal(e.redacted_data, e.origin)) +
          close(s)
        );
      if (s.open?.block !== e.content_block_index) out += close(s) + openReasoning(s, e.content_block_index);
      // another family's seal goes out marked with its origin, so a replay to Claude or OpenAI leaves it out
      if (e.signature !== null) s.open!.signature = markSeal(e.signature, e.origin);
      if (e.text === '') return out;
      s.open!.text += e.text;
      return (
        out +
        frame(s, 'response.reasoning_summary_text.delta', { ...at(s.open!), summary_index: 0, delta: e.text })
      );
    case 'tool.use_start':
      return out + close(s) + openCall(s, e.content_block_index, e.tool_use_id, e.tool_name);
    case 'block.raw': {
      // a Claude model's web search: its web_search_call item opens with the call and is done with the result
      const call = e.block.wire === 'anthropic' ? searchCallOf(e.block.value) : null;
      if (call) return out + close(s) + openSearch(s, e.content_block_index, call);
      const outcome = e.block.wire === 'anthropic' ? searchOutcomeOf(e.block.value) : null;
      return outcome ? out + endSearch(s, outcome.toolUseId, outcome) : out;
    }
    case 'tool.use_input_delta':
      if (s.open?.block !== e.content_block_index || e.partial_json === '') return out;
      s.open.text += e.partial_json;
      return (
        out + frame(s, 'response.function_call_arguments.delta', { ...at(s.open), delta: e.partial_json })
      );
    case 'tool.use_end':
      if (s.open?.block !== e.content_block_index) return out;
      // a call that streamed no fragment still states its arguments (`{}` at least; wire-formats §6 #13)
      if (s.open.text === '') s.open.text = JSON.stringify(e.final_input);
      s.open.ended = true;
      // closed by the next event: if that is the end and the token limit cut this call off, its
      // `output_item.done` says `incomplete` (as the final output does), not `completed`
      return out;
    case 'message.complete': {
      const status = statusOf(e.stop_reason);
      // the item the token limit cut off is `incomplete`, as the real API marks it
      const last = status.status === 'incomplete' ? e.final_content.length - 1 : -1;
      out += close(s, last >= 0 && s.open?.block === last ? 'incomplete' : 'completed');
      for (const id of [...s.searches.keys()]) out += endSearch(s, id, undefined);
      const outputFor = (request: Record<string, unknown> | undefined) =>
        e.final_content.flatMap((b, i) => {
          const status = i === last ? 'incomplete' : 'completed';
          const item = encodeOutputItem(b, s.base, i, request, status, e.final_content);
          return item ? [item] : [];
        });
      const output = outputFor(s.opts.request);
      const response = responseObject(s.base, s.opts, {
        ...status,
        output,
        usage: encodeResponsesUsage(e.usage),
        service_tier: openaiServiceTier(e.usage.service_tier ?? s.tier),
      });
      const type = status.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
      // what is kept for follow-ups carries the reasoning signatures, asked for or not
      s.opts.onResponse?.({ ...response, output: outputFor(withSignatures(s.opts.request)) });
      return out + frame(s, type, { response });
    }
  }
}

function at(item: OpenItem): Record<string, unknown> {
  return { item_id: item.id, output_index: item.outputIndex };
}

function openItem(s: State, block: number, kind: OpenItem['kind'], prefix: string): OpenItem {
  s.open = {
    block,
    kind,
    id: `${prefix}_${s.base}_${block}`,
    outputIndex: s.outputs++,
    text: '',
    signature: null,
    name: '',
    callId: '',
    ended: false,
    redacted: false,
  };
  return s.open;
}

function openText(s: State, block: number): string {
  const item = openItem(s, block, 'text', 'msg');
  const added = { id: item.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] };
  return (
    frame(s, 'response.output_item.added', { output_index: item.outputIndex, item: added }) +
    frame(s, 'response.content_part.added', { ...at(item), content_index: 0, part: outputText('') })
  );
}

function openReasoning(s: State, block: number): string {
  const item = openItem(s, block, 'reasoning', 'rs');
  const added = { id: item.id, type: 'reasoning', summary: [] };
  return (
    frame(s, 'response.output_item.added', { output_index: item.outputIndex, item: added }) +
    frame(s, 'response.reasoning_summary_part.added', {
      ...at(item),
      summary_index: 0,
      part: summaryText(''),
    })
  );
}

function openRedacted(s: State, block: number, data: string): string {
  const item = openItem(s, block, 'reasoning', 'rs');
  item.redacted = true;
  item.signature = `${REDACTED_REASONING_PREFIX}${data}`;
  const added = { id: item.id, type: 'reasoning', summary: [] };
  return frame(s, 'response.output_item.added', { output_index: item.outputIndex, item: added });
}

function openCall(s: State, block: number, callId: string, name: string): string {
  const item = openItem(s, block, 'function_call', 'fc');
  item.callId = callId;
  item.name = name;
  return frame(s, 'response.output_item.added', {
    output_index: item.outputIndex,
    item: callItem(s, item, 'in_progress', ''),
  });
}

/** A web search's item, added `in_progress`, and the search's own progress events (no deltas), as OpenAI's. */
function openSearch(s: State, block: number, call: SearchCall): string {
  const search = { id: searchItemId(s.base, block), outputIndex: s.outputs++, call };
  s.searches.set(call.id, search);
  const at = { output_index: search.outputIndex, item_id: search.id };
  const added = webSearchCallItem(search.id, call, undefined, s.opts.request, 'in_progress');
  return (
    frame(s, 'response.output_item.added', { output_index: search.outputIndex, item: added }) +
    frame(s, 'response.web_search_call.in_progress', at) +
    frame(s, 'response.web_search_call.searching', at)
  );
}

/** A web search done: its `completed` event and its finished item (with what it found, when it came). */
function endSearch(s: State, toolUseId: string, outcome: SearchOutcome | undefined): string {
  const search = s.searches.get(toolUseId);
  if (!search) return '';
  s.searches.delete(toolUseId);
  const item = webSearchCallItem(search.id, search.call, outcome, s.opts.request);
  s.done.push(item);
  return (
    frame(s, 'response.web_search_call.completed', { output_index: search.outputIndex, item_id: search.id }) +
    frame(s, 'response.output_item.done', { output_index: search.outputIndex, item })
  );
}

/** Ends the open item with its `.done` events. */
function close(s: State, status: 'completed' | 'incomplete' = 'completed'): string {
  const item = s.open;
  if (!item) return '';
  s.open = null;
  let out = '';
  let done: Record<string, unknown>;
  if (item.kind === 'text') {
    // web citations as url_citation annotations over the whole part, each announced before the text is done
    const annotations = urlAnnotations({
      type: 'text',
      text: item.text,
      citations: s.citations.get(item.block),
    });
    s.citations.delete(item.block);
    annotations.forEach((annotation, annotation_index) => {
      out += frame(s, 'response.output_text.annotation.added', {
        ...at(item),
        content_index: 0,
        annotation_index,
        annotation,
      });
    });
    out += frame(s, 'response.output_text.done', {
      ...at(item),
      content_index: 0,
      text: item.text,
      logprobs: [],
    });
    out += frame(s, 'response.content_part.done', {
      ...at(item),
      content_index: 0,
      part: outputText(item.text, annotations),
    });
    done = {
      id: item.id,
      type: 'message',
      status,
      role: 'assistant',
      content: [outputText(item.text, annotations)],
    };
  } else if (item.kind === 'reasoning' && item.redacted) {
    done = reasoningItem(s.base, item.block, '', item.signature, s.opts.request);
  } else if (item.kind === 'reasoning') {
    out += frame(s, 'response.reasoning_summary_text.done', {
      ...at(item),
      summary_index: 0,
      text: item.text,
    });
    out += frame(s, 'response.reasoning_summary_part.done', {
      ...at(item),
      summary_index: 0,
      part: summaryText(item.text),
    });
    done = reasoningItem(s.base, item.block, item.text, item.signature, s.opts.request);
  } else {
    // the API's event carries no name (openai-node 7.47 dropped it from the type to match the wire)
    out += frame(s, 'response.function_call_arguments.done', { ...at(item), arguments: item.text });
    done = callItem(s, item, status, item.text);
  }
  s.done.push(done);
  return out + frame(s, 'response.output_item.done', { output_index: item.outputIndex, item: done });
}

function callItem(s: State, item: OpenItem, status: string, args: string): Record<string, unknown> {
  return {
    id: item.id,
    type: 'function_call',
    status,
    arguments: args,
    call_id: item.callId,
    ...callNameFields(item.name, s.opts.request),
  };
}

function outputText(text: string, annotations: Record<string, unknown>[] = []): Record<string, unknown> {
  return { type: 'output_text', text, annotations };
}

function summaryText(text: string): Record<string, unknown> {
  return { type: 'summary_text', text };
}

/**
 * The end of a stream that failed after its first event: an `error` event (the OpenAI SDK throws an
 * APIError on it, the Vercel AI SDK reports it), then `response.failed` with `error:{code, message}`, the
 * items finished so far (those the upstream ended, not the one cut off) and no usage (Codex reads this one,
 * and tells a rate limit or an overload from other failures by its code). A cut stream never reads as a
 * success.
 */
function failed(s: State, err: unknown): string {
  let out = s.base ? '' : start(s, randomBytes(12).toString('hex'), undefined);
  // an item the upstream had ended (a call, a text or thinking block whose stop came) is finished, and goes
  // with the failed response's items; one the failure cut off mid-way does not
  if (s.open?.ended || (s.open && s.opts.blockEnded?.(s.open.block))) out += close(s);
  const fields = responsesErrorFields(err);
  const { code, message } = fields.error as { code: string; message: string };
  out += frame(s, 'error', fields);
  const response = responseObject(s.base, s.opts, {
    status: 'failed',
    service_tier: s.tier,
    error: { code: responsesFailureCode(code, err), message },
    output: s.done,
  });
  return out + frame(s, 'response.failed', { response });
}

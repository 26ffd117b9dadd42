/**
 * @module Canonical stream events → OpenAI `chat.completion.chunk` SSE (wire-formats §2.7, §5.3): role on
 * the first chunk, tool calls numbered 0,1,… by order of appearance (not by block index), continuation
 * fragments without id/name, the answer's web citations as `delta.annotations`, a finish chunk, the usage chunk
 * only when asked, `data: [DONE]`.
 */
import type { CanonicalStreamEvent } from '../../../canonical/stream.ts';
import { SvcError } from '../../../lib/errors.ts';
import { type StreamEncodeOptions, TRUNCATED } from '../shape.ts';
import {
  encodeOpenAIUsage,
  openaiCompletionId,
  openaiFinishReason,
  openaiServiceTier,
  urlAnnotations,
} from './encode.ts';
import { encodeOpenAIStreamError } from './errors.ts';

export async function* encodeOpenAIStream(
  events: AsyncIterable<CanonicalStreamEvent>,
  opts: StreamEncodeOptions,
): AsyncGenerator<string> {
  const s: State = { opts, prefix: '', suffix: '', tools: new Map(), argsSent: new Set(), roleSent: false };
  try {
    for await (const e of events) {
      const out = encodeEvent(s, e);
      if (out) yield out;
      if (e.type === 'message.complete') return;
    }
  } catch (err) {
    yield encodeOpenAIStreamError(err);
    return;
  }
  yield encodeOpenAIStreamError(new SvcError('upstream_error', { message: TRUNCATED }));
}

// --- internal ---

interface State {
  opts: StreamEncodeOptions;
  /** `data: {…"choices":[{"index":0,"delta":` — built once, every chunk shares id/created/model. */
  prefix: string;
  suffix: string;
  /** canonical block index → tool_calls[].index */
  tools: Map<number, number>;
  argsSent: Set<number>;
  /** the role went out (with the answer's first text, reasoning or tool call) */
  roleSent: boolean;
}

function chunk(s: State, delta: string, finish = 'null'): string {
  return `${s.prefix}${delta},"logprobs":null,"finish_reason":${finish}}]${s.suffix}`;
}

function ensureStarted(s: State, id: string, tier: string | undefined): void {
  if (s.prefix) return;
  const created = s.opts.created ?? Math.floor(Date.now() / 1000);
  // every chunk names the tier the call runs at, as the API's do (the upstream's first frame says it)
  const head = `{"id":${JSON.stringify(openaiCompletionId(id))},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(s.opts.model)},"service_tier":"${openaiServiceTier(tier)}"`;
  s.prefix = `data: ${head},"choices":[{"index":0,"delta":`;
  s.suffix = s.opts.include_usage ? ',"usage":null}\n\n' : '}\n\n';
}

/**
 * The first chunk carries the role (wire-formats §6 #5), sent with what the answer opens with, as OpenAI's
 * are: `content: ""` before text (or an empty answer), `content: null` before a tool call or reasoning, so a
 * stream that is only a tool call accumulates to `content: null` as the answer unstreamed says (the OpenAI
 * SDK 7 stream helper keeps an empty string it was sent).
 */
function role(s: State, content: '""' | 'null'): string {
  if (s.roleSent) return '';
  s.roleSent = true;
  return chunk(s, `{"role":"assistant","content":${content}}`);
}

function toolCall(s: State, ci: number, fn: Record<string, unknown>, head?: Record<string, unknown>): string {
  const call = { index: s.tools.get(ci), ...head, function: fn };
  if (head && !s.roleSent) {
    // OpenAI opens an answer that starts with a tool call with one chunk: role, content null and the call
    s.roleSent = true;
    return chunk(s, `{"role":"assistant","content":null,"tool_calls":[${JSON.stringify(call)}]}`);
  }
  return chunk(s, `{"tool_calls":[${JSON.stringify(call)}]}`);
}

function encodeEvent(s: State, e: CanonicalStreamEvent): string {
  ensureStarted(s, e.message_id, e.type === 'message.start' ? e.service_tier : undefined);
  switch (e.type) {
    case 'message.start':
    case 'block.raw': // a server tool's block (a web search): its citations are the text's annotations
      return '';
    case 'text.delta':
      return e.text === '' ? '' : role(s, '""') + chunk(s, `{"content":${JSON.stringify(e.text)}}`);
    case 'thinking.delta': {
      // a redacted block travels as OpenRouter writes one (what the decoder reads back)
      const format = e.origin ? { format: e.origin } : {};
      if (e.redacted_data !== undefined) {
        const encrypted = { type: 'reasoning.encrypted', data: e.redacted_data, ...format };
        return role(s, 'null') + chunk(s, JSON.stringify({ reasoning_details: [encrypted] }));
      }
      const detail = {
        type: 'reasoning.text',
        text: e.text,
        ...(e.signature !== null ? { signature: e.signature } : {}),
        ...format,
      };
      return role(s, 'null') + chunk(s, JSON.stringify({ reasoning: e.text, reasoning_details: [detail] }));
    }
    case 'tool.use_start':
      // k = number of tool calls before this one, not the block index (wire-formats §6 #1)
      s.tools.set(e.content_block_index, s.tools.size);
      return toolCall(
        s,
        e.content_block_index,
        { name: e.tool_name, arguments: '' },
        { id: e.tool_use_id, type: 'function' },
      );
    case 'tool.use_input_delta':
      if (e.partial_json === '' || !s.tools.has(e.content_block_index)) return '';
      s.argsSent.add(e.content_block_index);
      // continuation fragments carry only index and arguments (wire-formats §6 #4)
      return toolCall(s, e.content_block_index, { arguments: e.partial_json });
    case 'tool.use_end':
      // a tool that streamed no fragment still gets its arguments, `{}` at least (wire-formats §6 #2, #13)
      if (s.argsSent.has(e.content_block_index) || !s.tools.has(e.content_block_index)) return '';
      return toolCall(s, e.content_block_index, { arguments: JSON.stringify(e.final_input) });
    case 'message.complete': {
      const hasTools = s.tools.size > 0 || e.final_content.some((b) => b.type === 'tool_use');
      // an answer with nothing in it still names its role
      let end = role(s, '""');
      // the answer's web citations, each over its block's span of the whole text, in one chunk before the
      // finish: the OpenAI SDK's stream helper sets message.annotations from it, as the answer unstreamed has them
      const annotations = urlAnnotations(e.final_content);
      if (annotations.length > 0) end += chunk(s, JSON.stringify({ annotations }));
      end += chunk(s, '{}', JSON.stringify(openaiFinishReason(e.stop_reason, hasTools)));
      if (s.opts.include_usage) {
        const head = s.prefix.slice(0, s.prefix.indexOf(',"choices":'));
        end += `${head},"choices":[],"usage":${JSON.stringify(encodeOpenAIUsage(e.usage))}}\n\n`;
      }
      return `${end}data: [DONE]\n\n`;
    }
  }
}

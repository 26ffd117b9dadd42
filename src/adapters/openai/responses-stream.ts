/**
 * @module OpenAI Responses SSE → canonical events, for the same-wire tap (usage, stop reason, TTFT of a
 * Responses client on an OpenAI model): items keyed by `item_id`, text from `output_text` (and refusal)
 * deltas, thinking from reasoning summary/text deltas, tool calls from `function_call` items and their
 * argument deltas, from `custom_tool_call` items (a custom tool's free-text input) and their input
 * deltas, and from calls of tools the client runs (shell, apply_patch, computer), which arrive whole; `response.completed` / `response.incomplete` carry the usage and end the message;
 * `response.failed` (with the usage it states, if any) and `error` events are raised; a body that ends
 * before its terminal event is an error, never a silent success (wire-formats §6 #24).
 */
import type { CanonicalStreamEvent } from '../../canonical/stream.ts';
import { StreamBuilder } from '../../canonical/stream.ts';
import { SvcError } from '../../lib/errors.ts';
import type { SseEvent } from '../../lib/sse-decode.ts';
import type { StreamDecoder } from '../adapter.ts';
import { toSvcError } from '../upstream-error.ts';
import { classifyOpenAIStreamError } from './errors.ts';
import { withServedTier } from './response.ts';
import { clientToolCall, countWebSearches, decodeResponsesUsage, withWebSearches } from './responses.ts';

export function createResponsesStreamDecoder(): StreamDecoder {
  const b = new StreamBuilder();
  /** item_id → canonical block index */
  const items = new Map<string, number>();
  let refusal = false;
  /** `web_search_call` items finished so far (response.completed's `output` lists them all, when it has one). */
  let searches = 0;
  const block = (id: string, open: () => number): number => {
    let index = items.get(id);
    if (index === undefined) {
      index = open();
      items.set(id, index);
    }
    return index;
  };
  return {
    usage: () => b.usage(),
    stopReason: () => b.stopReason(),
    messageId: () => b.messageId(),
    hasContent: () => b.hasContent(),
    generatedQuarterTokens: () => b.generatedQuarterTokens(),
    usageFinal: () => b.usageFinal(),
    blockEnded: (index) => b.blockEnded(index),
    push(e: SseEvent) {
      if (b.completed) return [];
      const ev = JSON.parse(e.data);
      const type = ev?.type ?? e.event;
      if (type === 'error') throw toSvcError(classifyOpenAIStreamError(ev.error ?? ev));
      if (type === 'response.failed') {
        // a failed response may still state what it bills: the call's failure is priced on those counts
        if (ev.response?.usage) {
          b.mergeUsage(
            withServedTier(
              withWebSearches(
                decodeResponsesUsage(ev.response.usage),
                Math.max(searches, countWebSearches(ev.response.output)),
              ),
              ev.response,
            ),
          );
          b.markUsageFinal();
        }
        throw toSvcError(classifyOpenAIStreamError(ev.response?.error ?? { message: 'the response failed' }));
      }
      const out: CanonicalStreamEvent[] = [];
      if (!b.started) {
        const r = ev?.response ?? {};
        out.push(b.start(String(r.id ?? ''), String(r.model ?? '')));
      }
      const id = String(ev?.item_id ?? ev?.item?.id ?? '');
      switch (type) {
        case 'response.output_item.added':
          if (ev.item?.type === 'function_call' || ev.item?.type === 'custom_tool_call') {
            const start = b.openToolUse(String(ev.item.call_id), String(ev.item.name));
            items.set(id, start.content_block_index);
            out.push(start);
          }
          break;
        case 'response.output_text.delta':
        case 'response.refusal.delta':
          if (type === 'response.refusal.delta') refusal = true;
          if (typeof ev.delta === 'string' && ev.delta !== '')
            out.push(
              b.text(
                block(id, () => b.openText()),
                ev.delta,
              ),
            );
          break;
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta':
          if (typeof ev.delta === 'string' && ev.delta !== '')
            out.push(
              b.thinking(
                block(id, () => b.openThinking()),
                ev.delta,
              ),
            );
          break;
        case 'response.function_call_arguments.delta':
        case 'response.custom_tool_call_input.delta': {
          const index = items.get(id);
          if (index !== undefined && typeof ev.delta === 'string' && ev.delta !== '')
            out.push(b.toolInput(index, ev.delta));
          break;
        }
        case 'response.output_item.done': {
          if (ev.item?.type === 'web_search_call') searches++;
          const index = items.get(id);
          const call = index === undefined ? clientToolCall(ev.item) : undefined;
          if (call) {
            // a call of a tool the client runs (shell, apply_patch, computer) arrives whole
            const start = b.openToolUse(call.id, call.name);
            out.push(start, b.toolInput(start.content_block_index, JSON.stringify(call.input)));
            const end = b.close(start.content_block_index);
            if (end) out.push(end);
          }
          if (index === undefined) break;
          const end = b.close(index);
          if (end) out.push(end);
          break;
        }
        case 'response.completed':
        case 'response.incomplete': {
          const listed = countWebSearches(ev.response?.output);
          b.mergeUsage(
            withServedTier(
              withWebSearches(decodeResponsesUsage(ev.response?.usage), Math.max(searches, listed)),
              ev.response,
            ),
          );
          if (ev.response?.usage) b.markUsageFinal();
          const reason = ev.response?.incomplete_details?.reason;
          b.setStop(
            reason === 'max_output_tokens'
              ? 'max_tokens'
              : reason === 'content_filter' || refusal
                ? 'refusal'
                : 'end_turn',
          );
          out.push(...b.finish());
          break;
        }
      }
      return out;
    },
    end() {
      if (b.completed) return [];
      throw new SvcError('upstream_error', {
        message: 'upstream stream ended before response.completed',
        details: { error_class: 'server_error' },
      });
    },
  };
}

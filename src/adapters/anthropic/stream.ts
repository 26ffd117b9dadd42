/**
 * @module Anthropic SSE → canonical events (wire-formats §1.10). Usage is merged from message_start and
 * message_delta alike (either may carry input/cache counts, §6 #10); a body that ends before message_stop
 * is an error, never a silent success (§6 #24).
 */
import { parseToolInput, StreamBuilder } from '../../canonical/stream.ts';
import { SvcError } from '../../lib/errors.ts';
import { replaceJsonValue } from '../../lib/json-splice.ts';
import type { SseEvent } from '../../lib/sse-decode.ts';
import type { StreamDecoder } from '../adapter.ts';
import { type FrameRewriter, formatFrame } from '../tap.ts';
import { toSvcError } from '../upstream-error.ts';
import { classifyAnthropicStreamError } from './errors.ts';
import { decodeAnthropicStopReason, decodeAnthropicUsage } from './response.ts';

export function createAnthropicStreamDecoder(): StreamDecoder {
  const b = new StreamBuilder();
  /** upstream block index → canonical index (-1: a block kept whole, deltas ignored) */
  const blocks = new Map<number, number>();
  const raw = new Map<number, Record<string, unknown>>();
  return {
    usage: () => b.usage(),
    stopReason: () => b.stopReason(),
    messageId: () => b.messageId(),
    hasContent: () => b.hasContent(),
    generatedQuarterTokens: () => b.generatedQuarterTokens(),
    usageFinal: () => b.usageFinal(),
    blockEnded: (index) => b.blockEnded(index),
    push(e: SseEvent) {
      const type = e.event;
      if (type === 'ping' || b.completed) return [];
      if (type === 'error') throw toSvcError(classifyAnthropicStreamError(e.data));
      const d = JSON.parse(e.data);
      switch (d.type) {
        case 'message_start': {
          const usage = decodeAnthropicUsage(d.message?.usage);
          b.mergeUsage(usage);
          return [b.start(String(d.message?.id ?? ''), String(d.message?.model ?? ''), usage.service_tier)];
        }
        case 'content_block_start':
          return start(b, blocks, raw, d.index, d.content_block);
        case 'content_block_delta':
          return delta(b, blocks, raw, d.index, d.delta);
        case 'content_block_stop': {
          const ci = blocks.get(d.index);
          const kept = raw.get(d.index);
          raw.delete(d.index);
          if (kept) {
            const { _partial_json, ...block } = kept;
            if (typeof _partial_json === 'string') block.input = parseToolInput(_partial_json);
            return [b.rawBlock({ type: 'raw', wire: 'anthropic', value: block })];
          }
          if (ci === undefined || ci < 0) return [];
          const end = b.close(ci);
          return end ? [end] : [];
        }
        case 'message_delta':
          b.mergeUsage(decodeAnthropicUsage(d.usage));
          // sent once, at the end: its output count is the one billed
          if (d.usage) b.markUsageFinal();
          if (d.delta?.stop_reason)
            b.setStop(decodeAnthropicStopReason(d.delta.stop_reason), d.delta.stop_sequence ?? null);
          return [];
        case 'message_stop':
          return b.started ? b.finish() : [];
        default:
          return []; // new event types may be added (wire-formats §1.10)
      }
    },
    end() {
      if (b.completed) return [];
      throw new SvcError('upstream_error', {
        message: 'upstream stream ended before message_stop',
        details: { error_class: 'server_error' },
      });
    },
  };
}

// --- internal ---

function start(
  b: StreamBuilder,
  blocks: Map<number, number>,
  raw: Map<number, Record<string, unknown>>,
  index: number,
  block: any,
) {
  switch (block?.type) {
    case 'text': {
      const ci = b.openText();
      blocks.set(index, ci);
      // citations arrive as citations_delta; a start that already lists some is read the same way
      const cited = Array.isArray(block.citations) ? block.citations.filter(isObject) : [];
      return [
        ...cited.map((c: Record<string, unknown>) => b.citation(ci, c)),
        ...(block.text ? [b.text(ci, block.text)] : []),
      ];
    }
    case 'thinking': {
      const ci = b.openThinking();
      blocks.set(index, ci);
      return block.thinking ? [b.thinking(ci, block.thinking)] : [];
    }
    case 'tool_use': {
      const ev = b.openToolUse(String(block.id), String(block.name));
      blocks.set(index, ev.content_block_index);
      const initial =
        block.input && Object.keys(block.input).length > 0
          ? [b.toolInput(ev.content_block_index, JSON.stringify(block.input))]
          : [];
      return [ev, ...initial];
    }
    case 'redacted_thinking': {
      const ev = b.redactedThinking(String(block.data));
      blocks.set(index, ev.content_block_index);
      return [ev];
    }
    default:
      // server-tool blocks: Anthropic-only, kept whole as raw at content_block_stop
      blocks.set(index, -1);
      raw.set(index, { ...block });
      return [];
  }
}

function delta(
  b: StreamBuilder,
  blocks: Map<number, number>,
  raw: Map<number, Record<string, unknown>>,
  index: number,
  d: any,
) {
  const ci = blocks.get(index);
  if (ci === undefined) return [];
  if (ci < 0) {
    const kept = raw.get(index);
    if (kept && d?.type === 'input_json_delta')
      kept._partial_json = `${kept._partial_json ?? ''}${d.partial_json}`;
    return [];
  }
  switch (d?.type) {
    case 'text_delta':
      return [b.text(ci, String(d.text))];
    case 'thinking_delta':
      return [b.thinking(ci, String(d.thinking))];
    case 'signature_delta':
      return [b.thinking(ci, '', String(d.signature))];
    case 'input_json_delta':
      return [b.toolInput(ci, String(d.partial_json))];
    case 'citations_delta':
      return isObject(d.citation) ? [b.citation(ci, d.citation)] : [];
    default:
      return [];
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Tap frame rewriter: echoes `model` in message_start (the only frame that names it). */
export function rewriteAnthropicFrame(model: string | undefined): FrameRewriter {
  const json = model === undefined ? undefined : JSON.stringify(model);
  return (e) => {
    if (json !== undefined && e.event === 'message_start') {
      return formatFrame(e, replaceJsonValue(e.data, ['message', 'model'], json) ?? e.data);
    }
    return formatFrame(e);
  };
}

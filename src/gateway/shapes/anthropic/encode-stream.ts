/**
 * @module Canonical stream events → Anthropic SSE (wire-formats §1.10, §5.4 invariants): `event:` line on
 * every frame, `message_start` first, contiguous indices, one open block at a time, exactly one
 * `content_block_stop` per start, one `ping` after the first `content_block_start` (where the real API
 * sends it), `message_delta` + `message_stop` on every normal end, `event: error` on a failure after the
 * first frame.
 */
import { markSeal } from '../../../canonical/reasoning-origin.ts';
import type { CanonicalStreamEvent } from '../../../canonical/stream.ts';
import { SvcError } from '../../../lib/errors.ts';
import { type StreamEncodeOptions, TRUNCATED } from '../shape.ts';
import {
  anthropicMessageId,
  anthropicServiceTier,
  anthropicStopDetails,
  anthropicStopReason,
  encodeAnthropicUsage,
} from './encode.ts';
import { encodeAnthropicStreamError } from './errors.ts';

/** The `ping` event: the real API's streams carry one right after the first `content_block_start`. */
export const ANTHROPIC_PING = 'event: ping\ndata: {"type":"ping"}\n\n';

export async function* encodeAnthropicStream(
  events: AsyncIterable<CanonicalStreamEvent>,
  opts: StreamEncodeOptions,
): AsyncGenerator<string> {
  const s = createState(opts.model, opts.input_tokens_estimate ?? 0);
  try {
    for await (const e of events) {
      const out = encodeEvent(s, e);
      if (out) yield out;
      if (e.type === 'message.complete') return;
    }
  } catch (err) {
    yield closeOpen(s) + encodeAnthropicStreamError(err);
    return;
  }
  // the upstream ended without completing: say so instead of a truncated success (wire-formats §6 #24)
  yield closeOpen(s) + encodeAnthropicStreamError(new SvcError('upstream_error', { message: TRUNCATED }));
}

// --- internal ---

interface State {
  model: string;
  inputEstimate: number;
  started: boolean;
  /** canonical index → outbound index */
  map: Map<number, number>;
  next: number;
  open: number; // canonical index of the open block, -1 none
  openKind: string;
  toolArgsSent: boolean;
  pinged: boolean;
}

function createState(model: string, inputEstimate: number): State {
  return {
    model,
    inputEstimate,
    started: false,
    map: new Map(),
    next: 0,
    open: -1,
    openKind: '',
    toolArgsSent: false,
    pinged: false,
  };
}

function frame(type: string, data: string): string {
  return `event: ${type}\ndata: ${data}\n\n`;
}

function ensureStarted(s: State, id: string, tier: string | undefined): string {
  if (s.started) return '';
  s.started = true;
  const message = {
    id: anthropicMessageId(id),
    type: 'message',
    role: 'assistant',
    model: s.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    stop_details: null,
    container: null, // SDK 1.x Message.container: the real API sends null without a code execution container
    // An OpenAI-wire upstream counts tokens only at its end: the gateway's estimate here (LangChain and SDK
    // 0.39 read input tokens only from message_start), the exact counts in message_delta (SDK ≥0.137 and
    // 1.x overwrite with them; wire-formats §5.4). output_tokens stays 0, not the real API's small running
    // count (1, 2, 3 in its examples): no output is counted yet, the SDKs overwrite it, and clients that add
    // it to message_delta's total (LangChain JS) would report one token more than the call used.
    // cache_creation (the write split by lifetime) is null, the API's "unknown": message_delta has no such
    // field, so a split stated here would stay in the SDK's final message beside message_delta's exact
    // cache_creation_input_tokens and contradict it (zeros against the real writes)
    usage: {
      input_tokens: s.inputEstimate,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 0,
      cache_creation: null,
      service_tier: anthropicServiceTier(tier),
    },
  };
  return frame('message_start', JSON.stringify({ type: 'message_start', message }));
}

function closeOpen(s: State): string {
  if (s.open < 0) return '';
  const index = s.map.get(s.open)!;
  s.open = -1;
  return frame('content_block_stop', `{"type":"content_block_stop","index":${index}}`);
}

/** Opens canonical block `ci` of `kind` unless it is the open one; returns the frames and its index. */
function open(s: State, ci: number, kind: string, block: unknown): [string, number] {
  const known = s.map.get(ci);
  if (s.open === ci && known !== undefined) return ['', known];
  let out = closeOpen(s);
  const index = s.next++;
  s.map.set(ci, index);
  s.open = ci;
  s.openKind = kind;
  s.toolArgsSent = false;
  out += frame(
    'content_block_start',
    JSON.stringify({ type: 'content_block_start', index, content_block: block }),
  );
  if (!s.pinged) {
    // wire-formats §1.10: the real API's ping follows the first content_block_start
    s.pinged = true;
    out += ANTHROPIC_PING;
  }
  return [out, index];
}

function delta(index: number, d: unknown): string {
  return frame('content_block_delta', JSON.stringify({ type: 'content_block_delta', index, delta: d }));
}

function encodeEvent(s: State, e: CanonicalStreamEvent): string {
  let out = ensureStarted(s, e.message_id, e.type === 'message.start' ? e.service_tier : undefined);
  switch (e.type) {
    case 'message.start':
    case 'block.raw': // a server tool's block: the wire that knows it gets the upstream's own bytes
      return out;
    case 'text.delta': {
      if (e.text === '') return out;
      const [o, index] = open(s, e.content_block_index, 'text', { type: 'text', text: '' });
      return out + o + delta(index, { type: 'text_delta', text: e.text });
    }
    case 'thinking.delta': {
      // a redacted block arrives whole: its start carries the data, and the next block closes it
      if (e.redacted_data !== undefined)
        return (
          out +
          open(s, e.content_block_index, 'redacted_thinking', {
            type: 'redacted_thinking',
            data: markSeal(e.redacted_data, e.origin),
          })[0]
        );
      const [o, index] = open(s, e.content_block_index, 'thinking', {
        type: 'thinking',
        thinking: '',
        signature: '',
      });
      out += o;
      if (e.text !== '') out += delta(index, { type: 'thinking_delta', thinking: e.text });
      // another family's seal goes out marked with its origin, so a replay to Claude leaves it out
      if (e.signature !== null)
        out += delta(index, { type: 'signature_delta', signature: markSeal(e.signature, e.origin) });
      return out;
    }
    case 'tool.use_start': {
      const block = { type: 'tool_use', id: e.tool_use_id, name: e.tool_name, input: {} };
      return out + open(s, e.content_block_index, 'tool_use', block)[0];
    }
    case 'tool.use_input_delta': {
      if (e.partial_json === '' || s.open !== e.content_block_index) return out;
      s.toolArgsSent = true;
      return (
        out +
        delta(s.map.get(e.content_block_index)!, { type: 'input_json_delta', partial_json: e.partial_json })
      );
    }
    case 'tool.use_end': {
      if (s.open !== e.content_block_index) return out;
      // arguments must reach the client even if no fragment did (wire-formats §6 #2)
      if (!s.toolArgsSent && Object.keys(e.final_input).length > 0) {
        out += delta(s.map.get(e.content_block_index)!, {
          type: 'input_json_delta',
          partial_json: JSON.stringify(e.final_input),
        });
      }
      return out + closeOpen(s);
    }
    case 'message.complete': {
      out += closeOpen(s);
      // the SDK's stream accumulator copies stop_details from here (absent, finalMessage() would lack it)
      const d = {
        stop_reason: anthropicStopReason(e.stop_reason),
        stop_sequence: e.stop_sequence ?? null,
        stop_details: anthropicStopDetails(e.stop_reason),
      };
      out += frame(
        'message_delta',
        JSON.stringify({ type: 'message_delta', delta: d, usage: encodeAnthropicUsage(e.usage) }),
      );
      return out + frame('message_stop', '{"type":"message_stop"}');
    }
  }
}

/**
 * @module OpenAI/OpenRouter chunk SSE → canonical events (wire-formats §5.4): each delta field handled on
 * its own (text and tool calls in one chunk, §6 #3), tool calls keyed by `tool_calls[].index` with
 * fragments buffered until id and name are known, usage read from whichever chunk carries it, reasoning
 * deltas as thinking blocks, `finish_reason:"error"` and `{"error":…}` chunks raised, and a body that ends
 * before `data: [DONE]` is an error, never a silent success (§6 #24).
 */
import { reasoningFormatOf } from '../../canonical/reasoning-origin.ts';
import type { CanonicalStreamEvent } from '../../canonical/stream.ts';
import { StreamBuilder } from '../../canonical/stream.ts';
import { SvcError } from '../../lib/errors.ts';
import { locateJsonValues, removeJsonMember, replaceJsonValue } from '../../lib/json-splice.ts';
import type { SseEvent } from '../../lib/sse-decode.ts';
import type { StreamDecoder } from '../adapter.ts';
import { type FrameRewriter, formatFrame } from '../tap.ts';
import { toSvcError } from '../upstream-error.ts';
import { choiceError, classifyOpenAIStreamError } from './errors.ts';
import {
  decodeFinishReason,
  decodeOpenAIUsage,
  generatedToolCallId,
  LEGACY_FUNCTION_CALL_INDEX,
  withServedTier,
} from './response.ts';

export function createOpenAIStreamDecoder(): StreamDecoder {
  const s: State = {
    b: new StreamBuilder(),
    open: -1,
    openKind: '',
    calls: [],
    byIndex: new Map(),
    refusal: false,
  };
  const b = s.b;
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
      if (e.data === '[DONE]') {
        if (!b.started) return [];
        const out: CanonicalStreamEvent[] = [];
        flushCalls(s, out);
        // never a silent $0: the call is stamped usage_missing (llm/call.ts)
        if (!b.usageSeen) b.mergeUsage({ missing: true });
        out.push(...b.finish());
        return out;
      }
      const chunk = JSON.parse(e.data);
      if (chunk?.error) throw toSvcError(classifyOpenAIStreamError(chunk.error));
      const out: CanonicalStreamEvent[] = [];
      if (!b.started)
        out.push(b.start(String(chunk?.id ?? ''), String(chunk?.model ?? ''), chunk?.service_tier));
      if (chunk?.usage) b.mergeUsage(withServedTier(decodeOpenAIUsage(chunk.usage), chunk));
      const choice = chunk?.choices?.[0];
      if (choice) decodeChoice(s, choice, out);
      // usage comes once, in the last chunk, after (or with) the finish reason
      if (chunk?.usage && b.stopReason() !== null) b.markUsageFinal();
      return out;
    },
    end() {
      if (b.completed) return [];
      // the usage chunk comes after the finish chunk, so a stream cut before [DONE] may have lost it
      // (wire-formats §2.7): a success billed without it would be a $0 answer (issue 17)
      throw new SvcError('upstream_error', {
        message: 'upstream stream ended before [DONE]',
        details: { error_class: 'server_error' },
      });
    },
  };
}

/**
 * Tap frame rewriter: echoes `model` on every chunk and, when the client did not ask for usage (the gateway
 * did, upstream), drops the usage-only chunk (`choices:[]`) and removes the `usage` member of every other
 * chunk (the `usage: null` OpenAI then puts on each, the usage OpenRouter puts on a last chunk that still
 * has a choice), as the API sends no `usage` key when not asked (wire-formats §3, §5.1); `[DONE]` and other
 * frames keep their data.
 */
export function rewriteOpenAIFrame(model: string | undefined, includeUsageChunk: boolean): FrameRewriter {
  const json = model === undefined ? undefined : JSON.stringify(model);
  return (e) => {
    if (e.data === '[DONE]') return formatFrame(e);
    let data = e.data;
    // `"usage"` is never inside a JSON string, whose quotes are escaped: a chunk without it is not scanned
    if (!includeUsageChunk && data.includes('"usage"')) {
      const choices = locateJsonValues(data, ['choices']).at(-1);
      if (choices && isEmptyArray(data, choices.start, choices.end)) return null;
      data = removeJsonMember(data, 'usage');
    }
    return formatFrame(e, json === undefined ? data : (replaceJsonValue(data, ['model'], json) ?? data));
  };
}

// --- internal ---

function isEmptyArray(text: string, start: number, end: number): boolean {
  for (let i = start + 1; i < end - 1; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return false;
  }
  return text.charCodeAt(start) === 91;
}

interface State {
  b: StreamBuilder;
  open: number;
  openKind: '' | 'text' | 'thinking' | 'tool';
  /** The `index` of the reasoning detail the open thinking block holds, when the upstream numbered it. */
  detail?: number;
  /** Every tool call of the message, in the order the upstream began them. */
  calls: ToolCall[];
  /** `tool_calls[].index` → the call currently at that index (a new id at the same index is a new call). */
  byIndex: Map<number, ToolCall>;
  refusal: boolean;
}

/**
 * One upstream tool call. The first call to know its id and name streams live into an open block; a call
 * that begins while another call's block is open is buffered whole and emitted as one block at the finish,
 * so fragments that arrive interleaved are never cut off by a block already stopped.
 */
interface ToolCall {
  id?: string;
  name?: string;
  /** Arguments not yet sent as a delta. */
  args: string;
  /** Its canonical block, once opened. */
  block?: number;
}

function closeOpen(s: State, out: CanonicalStreamEvent[]): void {
  if (s.open < 0) return;
  const end = s.b.close(s.open);
  if (end) out.push(end);
  s.open = -1;
  s.openKind = '';
  s.detail = undefined;
}

function ensure(s: State, kind: 'text' | 'thinking', out: CanonicalStreamEvent[]): number {
  if (s.openKind === kind) return s.open;
  closeOpen(s, out);
  s.open = kind === 'text' ? s.b.openText() : s.b.openThinking();
  s.openKind = kind;
  return s.open;
}

function decodeChoice(s: State, choice: any, out: CanonicalStreamEvent[]): void {
  const d = choice.delta ?? {};
  const details = Array.isArray(d.reasoning_details) ? d.reasoning_details : [];
  for (const r of details) {
    // OpenRouter's `format` says which model family wrote (and sealed) it
    const origin = reasoningFormatOf(r?.format);
    if (r?.type === 'reasoning.encrypted' && typeof r.data === 'string') {
      closeOpen(s, out);
      out.push(s.b.redactedThinking(r.data, origin));
      continue;
    }
    const text = typeof r?.text === 'string' ? r.text : typeof r?.summary === 'string' ? r.summary : '';
    const sig = typeof r?.signature === 'string' && r.signature !== '' ? r.signature : null;
    if (text === '' && sig === null) continue;
    // each detail is its own block (OpenRouter numbers them by `index`; a Claude model's thinking blocks
    // each carry their own signature): a detail of another index closes the one open
    const index = typeof r?.index === 'number' ? r.index : undefined;
    if (s.openKind === 'thinking' && index !== undefined && s.detail !== undefined && index !== s.detail)
      closeOpen(s, out);
    out.push(s.b.thinking(ensure(s, 'thinking', out), text, sig, origin));
    s.detail = index ?? s.detail;
  }
  // plain reasoning text: OpenRouter's `reasoning`, or `reasoning_content` (DeepSeek, vLLM, llama.cpp)
  const plain = typeof d.reasoning === 'string' ? d.reasoning : d.reasoning_content;
  if (details.length === 0 && typeof plain === 'string' && plain !== '') {
    out.push(s.b.thinking(ensure(s, 'thinking', out), plain));
  }
  if (typeof d.content === 'string' && d.content !== '')
    out.push(s.b.text(ensure(s, 'text', out), d.content));
  if (typeof d.refusal === 'string' && d.refusal !== '') {
    s.refusal = true;
    out.push(s.b.text(ensure(s, 'text', out), d.refusal));
  }
  if (Array.isArray(d.tool_calls)) for (const tc of d.tool_calls) decodeToolCall(s, tc, out);
  // the deprecated single `function_call` (no id, no index) is a tool call all the same
  if (d.function_call && typeof d.function_call === 'object')
    decodeToolCall(s, { index: LEGACY_FUNCTION_CALL_INDEX, function: d.function_call }, out);
  const finish = choice.finish_reason;
  if (finish === 'error') throw toSvcError(classifyOpenAIStreamError(choiceError(choice)));
  if (finish) {
    flushCalls(s, out);
    s.b.setStop(s.refusal ? 'refusal' : decodeFinishReason(finish));
  }
}

function decodeToolCall(s: State, tc: any, out: CanonicalStreamEvent[]): void {
  const id = nonEmpty(tc?.id);
  // a custom tool's call streams its name and free-text input under `custom` (openai-python #2530)
  const called = tc?.custom && typeof tc.custom === 'object' ? tc.custom : undefined;
  const name = nonEmpty(tc?.function?.name ?? called?.name);
  const text = called ? called.input : tc?.function?.arguments;
  const args = typeof text === 'string' ? text : '';
  const call = callOf(s, typeof tc?.index === 'number' ? tc.index : undefined, id, name);
  call.id ??= id;
  call.name ??= name;
  if (call.block !== undefined && s.open === call.block) {
    if (args !== '') out.push(s.b.toolInput(call.block, args));
    return;
  }
  call.args += args;
  // a fragment of a call whose block a later block already stopped cannot be streamed any more
  if (call.block !== undefined || call.id === undefined || call.name === undefined) return;
  if (s.openKind === 'tool') return; // another call streams live: this one waits for the finish
  openCall(s, call, call.id, call.name, out);
}

/**
 * The call a fragment belongs to: by `index` (Ollama numbers every call 0, so a different id at the same
 * index is a new call, while vLLM repeats one id on every fragment); without an index, a fragment with a
 * new id and a name begins a call and any other continues the last one.
 */
function callOf(
  s: State,
  index: number | undefined,
  id: string | undefined,
  name: string | undefined,
): ToolCall {
  let call = index === undefined ? s.calls.at(-1) : s.byIndex.get(index);
  const newId = id !== undefined && call?.id !== undefined && id !== call.id;
  if (
    call === undefined ||
    newId ||
    (index === undefined && id !== undefined && name !== undefined && call.id !== id)
  ) {
    call = { args: '' };
    s.calls.push(call);
  }
  if (index !== undefined) s.byIndex.set(index, call);
  return call;
}

function openCall(s: State, call: ToolCall, id: string, name: string, out: CanonicalStreamEvent[]): void {
  closeOpen(s, out);
  const start = s.b.openToolUse(id, name);
  out.push(start);
  call.block = start.content_block_index;
  s.open = start.content_block_index;
  s.openKind = 'tool';
  // arguments are forwarded, including those that came before id/name (wire-formats §6 #2)
  if (call.args !== '') out.push(s.b.toolInput(call.block, call.args));
  call.args = '';
}

/**
 * At the finish: every buffered call becomes a complete block, in the order the upstream began them. A
 * call the upstream never gave an id (some OpenAI-compatible servers) gets a generated one; a call with
 * no name cannot be called and is dropped.
 */
function flushCalls(s: State, out: CanonicalStreamEvent[]): void {
  for (const call of s.calls) {
    if (call.block !== undefined || call.name === undefined) continue;
    openCall(s, call, call.id ?? generatedToolCallId(), call.name, out);
  }
  closeOpen(s, out);
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * @module Canonical stream events (spec 2 §Events, streaming-only events) and the builder adapters use to
 * emit them while keeping the authoritative final content, stop reason and running usage.
 */
import { textWeight } from '../lib/text-weight.ts';
import type { ContentBlock, RawBlock, TextBlock, ThinkingBlock, ToolUseBlock } from './message.ts';
import type { ReasoningFormat } from './reasoning-origin.ts';
import { type CanonicalUsage, emptyUsage, type StopReason, stopReasonWithTools } from './response.ts';

export interface MessageStartEvent {
  type: 'message.start';
  message_id: string;
  role: 'assistant';
  model: string;
  /**
   * The service tier the upstream's first frame says the call runs at (OpenAI's chunk `service_tier`,
   * Anthropic's message_start `usage.service_tier: "priority"`), when it says one: what a re-encoded stream's
   * start reports. The call's usage carries the tier it is billed at.
   */
  service_tier?: string;
}
export interface TextDeltaEvent {
  type: 'text.delta';
  message_id: string;
  content_block_index: number;
  text: string;
  /**
   * Beyond spec 2: a source the block's text cites (Anthropic `citations_delta`, as sent), on a delta of its
   * own with empty `text`; the final block lists them all in `citations`.
   */
  citation?: Record<string, unknown>;
}
export interface ThinkingDeltaEvent {
  type: 'thinking.delta';
  message_id: string;
  content_block_index: number;
  text: string;
  /** Set only on the final delta of the block. */
  signature: string | null;
  /**
   * Beyond spec 2: a redacted thinking block, which arrives whole, is this block's only delta (empty
   * `text`, no signature) carrying the block's opaque data, so a stream shows it where the answer has it.
   */
  redacted_data?: string;
  /** Beyond spec 2: the model family that wrote the block, when known (canonical/reasoning-origin.ts). */
  origin?: ReasoningFormat;
}
export interface ToolUseStartEvent {
  type: 'tool.use_start';
  message_id: string;
  content_block_index: number;
  tool_use_id: string;
  tool_name: string;
}
export interface ToolUseInputDeltaEvent {
  type: 'tool.use_input_delta';
  message_id: string;
  content_block_index: number;
  tool_use_id: string;
  partial_json: string;
}
export interface ToolUseEndEvent {
  type: 'tool.use_end';
  message_id: string;
  content_block_index: number;
  tool_use_id: string;
  final_input: Record<string, unknown>;
}
export interface MessageCompleteEvent {
  type: 'message.complete';
  message_id: string;
  stop_reason: StopReason;
  /** Authoritative over the deltas. */
  final_content: ContentBlock[];
  usage: CanonicalUsage;
  /** Beyond spec 2: the matched sequence when stop_reason is `stop_sequence` (Anthropic only). */
  stop_sequence?: string;
}

/**
 * Beyond spec 2: a block only one wire knows (a server tool's call or its result, kept raw), whole, when the
 * upstream ends it (Anthropic's content_block_stop), so a stream can show it where the answer has it; the final
 * content holds it at `content_block_index`.
 */
export interface RawBlockEvent {
  type: 'block.raw';
  message_id: string;
  content_block_index: number;
  block: RawBlock;
}

export type CanonicalStreamEvent =
  | MessageStartEvent
  | RawBlockEvent
  | TextDeltaEvent
  | ThinkingDeltaEvent
  | ToolUseStartEvent
  | ToolUseInputDeltaEvent
  | ToolUseEndEvent
  | MessageCompleteEvent;

/** What a stream has seen so far; readable at any time (e.g. after a client cancelled). */
export interface StreamProgress {
  /** Usage seen so far (cumulative upstream values, latest wins). */
  usage(): CanonicalUsage;
  stopReason(): StopReason | null;
  messageId(): string | null;
  /** True once the first content delta arrived (time to first token). */
  hasContent(): boolean;
  /**
   * What the model generated so far (text, thinking, tool names and arguments), weighed by script in quarter
   * tokens (lib/text-weight.ts): what a stream that ended before the upstream stated its output tokens is
   * billed on (llm/partial-usage.ts).
   */
  generatedQuarterTokens(): number;
  /**
   * True once the upstream stated its final counts (Anthropic's message_delta, OpenAI's usage chunk after
   * the finish reason, the Responses API's terminal response): a stream that breaks after that (its last
   * event lost) is billed on them as stated, not on an estimate.
   */
  usageFinal(): boolean;
  /**
   * True once the upstream ended the block at this canonical index (Anthropic's content_block_stop, a
   * Responses output item's done): a stream that fails after it still has that block whole, which a
   * Responses client's `response.failed` carries with the items it finished.
   */
  blockEnded(index: number): boolean;
}

/** A decoded upstream stream: the events plus its progress accessors. */
export interface CanonicalStream extends AsyncIterable<CanonicalStreamEvent>, StreamProgress {}

/**
 * Parses a tool's accumulated argument text. `""` is `{}` (wire-formats §6 #13); text that is not a JSON
 * object is kept as `{ _raw_arguments: text }` rather than dropped (choice).
 */
export function parseToolInput(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const v = JSON.parse(text);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {}
  return { _raw_arguments: text };
}

/**
 * Emits canonical events with contiguous block indices and keeps the final content. One builder per
 * upstream message; callers map their wire's block ids to the indices returned here.
 */
export class StreamBuilder implements StreamProgress {
  #id: string | null = null;
  #blocks: ContentBlock[] = [];
  #json = new Map<number, string>();
  #open = new Set<number>();
  #usage: CanonicalUsage = emptyUsage();
  #stop: StopReason | null = null;
  #stopSequence: string | null = null;
  #content = false;
  #quarterTokens = 0;
  #done = false;
  #usageSeen = false;
  #usageFinal = false;

  usage(): CanonicalUsage {
    return { ...this.#usage };
  }
  stopReason(): StopReason | null {
    return this.#stop;
  }
  messageId(): string | null {
    return this.#id;
  }
  hasContent(): boolean {
    return this.#content;
  }
  generatedQuarterTokens(): number {
    return this.#quarterTokens;
  }
  usageFinal(): boolean {
    return this.#usageFinal;
  }
  blockEnded(index: number): boolean {
    return index >= 0 && index < this.#blocks.length && !this.#open.has(index);
  }
  /** The usage merged so far is the upstream's final statement (see StreamProgress.usageFinal). */
  markUsageFinal(): void {
    this.#usageFinal = true;
  }
  get started(): boolean {
    return this.#id !== null;
  }
  get completed(): boolean {
    return this.#done;
  }

  start(id: string, model: string, serviceTier?: unknown): MessageStartEvent {
    this.#id = id;
    const e: MessageStartEvent = { type: 'message.start', message_id: id, role: 'assistant', model };
    if (typeof serviceTier === 'string') e.service_tier = serviceTier;
    return e;
  }

  openText(): number {
    return this.#push({ type: 'text', text: '' });
  }
  text(index: number, text: string): TextDeltaEvent {
    (this.#blocks[index] as { text: string }).text += text;
    this.#content = true;
    this.#quarterTokens += textWeight(text);
    return { type: 'text.delta', message_id: this.#id!, content_block_index: index, text };
  }

  /** A source the text block at `index` cites (see TextDeltaEvent.citation). */
  citation(index: number, citation: Record<string, unknown>): TextDeltaEvent {
    const b = this.#blocks[index] as TextBlock;
    b.citations = [...(b.citations ?? []), citation];
    return { type: 'text.delta', message_id: this.#id!, content_block_index: index, text: '', citation };
  }

  openThinking(origin?: ReasoningFormat): number {
    return this.#push({ type: 'thinking', thinking: '', signature: null, ...(origin ? { origin } : {}) });
  }
  /** `origin`, when given, names the family that wrote the block (the first one said stays). */
  thinking(
    index: number,
    text: string,
    signature: string | null = null,
    origin?: ReasoningFormat,
  ): ThinkingDeltaEvent {
    const b = this.#blocks[index] as ThinkingBlock;
    b.thinking += text;
    if (signature !== null) b.signature = (b.signature ?? '') + signature;
    if (origin && !b.origin) b.origin = origin;
    this.#content = true;
    this.#quarterTokens += textWeight(text);
    const event: ThinkingDeltaEvent = {
      type: 'thinking.delta',
      message_id: this.#id!,
      content_block_index: index,
      text,
      signature,
    };
    if (b.origin) event.origin = b.origin;
    return event;
  }

  openToolUse(id: string, name: string): ToolUseStartEvent {
    const index = this.#push({ type: 'tool_use', id, name, input: {} });
    this.#json.set(index, '');
    this.#content = true;
    this.#quarterTokens += textWeight(name);
    return {
      type: 'tool.use_start',
      message_id: this.#id!,
      content_block_index: index,
      tool_use_id: id,
      tool_name: name,
    };
  }
  toolInput(index: number, partial: string): ToolUseInputDeltaEvent {
    this.#json.set(index, (this.#json.get(index) ?? '') + partial);
    this.#quarterTokens += textWeight(partial);
    const id = (this.#blocks[index] as ToolUseBlock).id;
    return {
      type: 'tool.use_input_delta',
      message_id: this.#id!,
      content_block_index: index,
      tool_use_id: id,
      partial_json: partial,
    };
  }

  /** A redacted thinking block, which arrives complete: its one `thinking.delta` carries its data. */
  redactedThinking(data: string, origin?: ReasoningFormat): ThinkingDeltaEvent {
    const index = this.addBlock({ type: 'redacted_thinking', data, ...(origin ? { origin } : {}) });
    return {
      type: 'thinking.delta',
      message_id: this.#id!,
      content_block_index: index,
      text: '',
      signature: null,
      redacted_data: data,
      ...(origin ? { origin } : {}),
    };
  }

  /** A block only some wires know (server-tool blocks), once the upstream ended it: its block.raw event. */
  rawBlock(block: RawBlock): RawBlockEvent {
    const index = this.addBlock(block);
    return { type: 'block.raw', message_id: this.#id!, content_block_index: index, block };
  }

  /** A block that arrives complete; no event. */
  addBlock(block: ContentBlock): number {
    const index = this.#blocks.push(block) - 1;
    this.#content = true;
    return index;
  }

  /** Closes a block; a tool block yields its tool.use_end with the parsed input. */
  close(index: number): ToolUseEndEvent | undefined {
    if (!this.#open.delete(index)) return undefined;
    const b = this.#blocks[index];
    if (b?.type !== 'tool_use') return undefined;
    b.input = parseToolInput(this.#json.get(index) ?? '');
    this.#json.delete(index);
    return {
      type: 'tool.use_end',
      message_id: this.#id!,
      content_block_index: index,
      tool_use_id: b.id,
      final_input: b.input,
    };
  }

  setStop(reason: StopReason, stopSequence: string | null = null): void {
    this.#stop = reason;
    this.#stopSequence = stopSequence;
  }

  /** Whether the upstream reported any usage so far. */
  get usageSeen(): boolean {
    return this.#usageSeen;
  }

  /** Overwrites usage fields with every defined value (upstream counts are cumulative). */
  mergeUsage(partial: Partial<CanonicalUsage>): void {
    this.#usageSeen = true;
    for (const key of Object.keys(partial) as Array<keyof CanonicalUsage>) {
      const v = partial[key];
      if (v !== undefined && v !== null) (this.#usage as any)[key] = v;
    }
  }

  /**
   * Closes open blocks and completes the message. A message with tool calls that says it simply ended
   * ends in `tool_use` (wire-formats §6 #7); a truncated one keeps `max_tokens` (stopReasonWithTools).
   */
  finish(): CanonicalStreamEvent[] {
    const out: CanonicalStreamEvent[] = [];
    for (const index of [...this.#open]) {
      const end = this.close(index);
      if (end) out.push(end);
    }
    const stop = stopReasonWithTools(
      this.#stop ?? 'end_turn',
      this.#blocks.some((b) => b.type === 'tool_use'),
    );
    this.#stop = stop;
    this.#done = true;
    out.push({
      type: 'message.complete',
      message_id: this.#id!,
      stop_reason: stop,
      final_content: this.#blocks,
      usage: this.usage(),
      ...(stop === 'stop_sequence' && this.#stopSequence !== null
        ? { stop_sequence: this.#stopSequence }
        : {}),
    });
    return out;
  }

  // --- internal ---

  #push(block: ContentBlock): number {
    const index = this.#blocks.push(block) - 1;
    this.#open.add(index);
    return index;
  }
}

/**
 * Provider-neutral reply building: each provider module reads its request into a `Turn`, `buildReply` decides
 * the content and usage deterministically from the turn and the plan, and the provider module encodes it.
 */

import type { CacheUsage } from './prompt-cache.ts';
import { CLAUDE_SIGNATURE_PREFIX } from './reasoning-seals.ts';
import { schemaValue } from './schema-value.ts';
import type { FakeStep, FakeUsage } from './script.ts';

/** What the fake needs to know about a request, read from either wire format. */
export type Turn = {
  model: string;
  stream: boolean;
  /** OpenAI `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Text of the final user turn (user text plus tool-result text after the last assistant message). */
  turnText: string;
  tools: Tool[];
  /** Text of the tool results in the final turn, in order. */
  toolResults: string[];
  /** One description per image in the request, e.g. "image/png" or "url". */
  images: string[];
  /** A tool the request forces (`true`: any tool); undefined when the choice is free. */
  forcedTool: string | true | undefined;
  toolChoiceNone: boolean;
  /**
   * Parallel tool calls are off (Anthropic `tool_choice.disable_parallel_tool_use: true`, OpenAI
   * `parallel_tool_calls: false`): the reply has one tool call at most, whatever the script asks.
   */
  singleToolCall?: boolean;
  /**
   * The API prefills a forced tool choice, so no text precedes the call (Anthropic `any` / `tool`,
   * wire-formats §1.5): a scripted text is left out when the reply calls a tool.
   */
  noTextBeforeForcedCall?: boolean;
  /**
   * The request's stop sequences (Anthropic `stop_sequences`, Chat Completions `stop`): a reply text holding
   * one ends before it, with stop reason `stop_sequence` naming it, as the model stops there.
   */
  stopSequences?: string[];
  /** The request itself asks for thinking/reasoning. */
  thinkingRequested: boolean;
  /** Anthropic `thinking.display: "omitted"`: empty thinking text, signature only. */
  thinkingOmitted?: boolean;
  /** Input tokens the provider bills for the request (billing.ts), the default usage input count. */
  inputTokens: number;
  /** The request offers the provider's server-side web search tool (Anthropic, Responses). */
  webSearchTool?: boolean;
  /** The request forces that search (Anthropic `tool_choice` naming it): the model searches at least once. */
  webSearchForced?: boolean;
  /**
   * The JSON schema of the structured output the request asks for (Anthropic `output_config.format`, Chat
   * `response_format`, Responses `text.format`, of type `json_schema`): the API's answer text is then JSON
   * valid against it, so an unscripted reply is such a value instead of the default text.
   */
  outputSchema?: unknown;
  /** Anthropic prompt caching of this request (prompt-cache.ts), when it has cache_control breakpoints. */
  promptCache?: CacheUsage;
};

export type ReplyBlock =
  /** `redacted`: a redacted block, its opaque data in `signature` and no text. */
  | { type: 'thinking'; text: string; signature: string; redacted?: boolean }
  /** `citations`: the sources the text cites (Anthropic's form, the `cite` directive). */
  | { type: 'text'; text: string; citations?: Record<string, unknown>[] }
  | {
      type: 'tool_call';
      id: string;
      name: string;
      input: Record<string, unknown>;
      /** A custom (free-form) tool's call: its input is this text, not JSON (OpenAI custom tools). */
      customInput?: string;
      /** The Responses `namespace` the called tool belongs to (the call names it beside the member's name). */
      namespace?: string;
    };

/**
 * A tool the request offers: a function with its JSON schema, or (OpenAI) a custom tool taking free text, the
 * member of a Responses `namespace` with that namespace's name.
 */
export type Tool = { name: string; schema: unknown; custom?: boolean; namespace?: string };

export type ReplyUsage = {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** The part of cacheWrite with a one-hour lifetime (Anthropic's cache_creation split). */
  cacheWrite1h: number;
  reasoning: number;
  cost: number;
  /** Server-side web searches run (reply.searches). */
  webSearches: number;
  /** The account has Anthropic Priority Tier capacity (the `priority-tier` directive). */
  priorityTier?: boolean;
};

/** One server-side web search the model ran before its answer (the `web-search=N` directive). */
export type ReplySearch = { query: string };

export type Reply = {
  blocks: ReplyBlock[];
  /** Server-side web searches, run after any thinking and before the rest of the answer. */
  searches: ReplySearch[];
  /** Anthropic vocabulary; OpenAI encoders map it. */
  stopReason: string;
  /** The custom stop sequence matched (stopReason `stop_sequence` only, as the real API sends it). */
  stopSequence: string | null;
  usage: ReplyUsage;
};

export const DEFAULT_TEXT = 'Hello from the fake provider.';
/** The text block the `cite` directive adds, and the web page it cites (web-search-tool docs' citation form). */
export const CITED_TEXT = ' Paris is the capital of France.';
export const CITATION = {
  type: 'web_search_result_location',
  url: 'https://example.com/paris',
  title: 'Paris - Example',
  encrypted_index: 'Eo8BCioIAhgBFake',
  cited_text: 'Paris is the capital and largest city of France.',
};
export const DEFAULT_THINKING = 'The user wants a reply. I will answer briefly.';
/** The opaque data of a redacted thinking block (the shape of Anthropic's docs example). */
export const REDACTED_DATA =
  'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pTrnm0qnjO8kbJahO2CQSM';

/** Builds the reply for one turn; `newToolId` gives provider-style tool call ids. */
export function buildReply(turn: Turn, plan: FakeStep, newToolId: () => string): Reply {
  const blocks: ReplyBlock[] = [];
  if (plan.redactedThinking)
    blocks.push({ type: 'thinking', text: '', signature: REDACTED_DATA, redacted: true });
  const thinking = plan.thinking ?? turn.thinkingRequested;
  if (thinking !== false) {
    const text = turn.thinkingOmitted ? '' : typeof thinking === 'string' ? thinking : DEFAULT_THINKING;
    blocks.push({ type: 'thinking', text, signature: signatureFor(text) });
  }
  let calls = toolCallCount(turn, plan);
  let uses = plan.toolUses ?? [];
  if (turn.singleToolCall) {
    calls = Math.min(calls, 1);
    uses = uses.slice(0, 1 - calls);
  }
  let used = calls + uses.length;
  let text = replyText(turn, plan);
  // the model stops where its text reaches a stop sequence: nothing after it, no tool call
  const stop =
    text === undefined ? undefined : firstStop(text, [...(turn.stopSequences ?? []), plan.stopSequence]);
  if (stop) {
    text = text!.slice(0, stop.at);
    calls = 0;
    uses = [];
    used = 0;
  }
  const prefilled = turn.noTextBeforeForcedCall && turn.forcedTool !== undefined && used > 0;
  if (text !== undefined && !prefilled && !(stop && text === '')) blocks.push({ type: 'text', text });
  if (plan.cite) blocks.push({ type: 'text', text: CITED_TEXT, citations: [CITATION] });
  for (let i = 0; i < calls; i++) {
    const tool = pickTool(turn, i);
    const input = inputFromSchema(tool.schema);
    blocks.push({
      type: 'tool_call',
      id: newToolId(),
      name: tool.name,
      input,
      ...(tool.custom ? { customInput: `${tool.name} input` } : {}),
      ...(tool.namespace ? { namespace: tool.namespace } : {}),
    });
  }
  for (const use of uses) blocks.push({ type: 'tool_call', id: newToolId(), ...use });
  const stopReason = stop ? 'stop_sequence' : (plan.stopReason ?? (used > 0 ? 'tool_use' : 'end_turn'));
  const stopSequence = stopReason === 'stop_sequence' ? (stop?.sequence ?? plan.stopSequence ?? 'END') : null;
  const searches: ReplySearch[] = Array.from(
    { length: turn.webSearchTool ? Math.max(plan.webSearches ?? 0, turn.webSearchForced ? 1 : 0) : 0 },
    (_, i) => ({
      query: `fake search ${i + 1}`,
    }),
  );
  const usage = { ...usageFor(turn, plan, blocks), webSearches: searches.length };
  return { blocks, searches, stopReason, stopSequence, usage };
}

/** A JSON value satisfying the schema's required properties (strings `"<name>-value"`, numbers 1, …). */
export function inputFromSchema(schema: unknown): Record<string, unknown> {
  const value = schemaValue(schema);
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** Text split into word-sized fragments (each keeps its trailing space) for text deltas. */
export function splitWords(text: string): string[] {
  const parts = text.match(/\S+\s*|\s+/g) ?? [];
  return parts.length > 0 ? parts : [text];
}

/** A JSON string split into `count` roughly equal fragments for argument/input_json deltas. */
export function splitFragments(json: string, count = 3): string[] {
  const size = Math.max(1, Math.ceil(json.length / count));
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

/** The strings of a list field (stop sequences), none when it is no list. */
export function stringsOf(list: unknown): string[] {
  return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
}

/** The schema of a `{type: "json_schema", …}` output format (`schema` where the wire puts it), if any. */
export function jsonSchemaOf(format: unknown): unknown {
  const f = (typeof format === 'object' && format !== null ? format : {}) as Record<string, unknown>;
  if (f.type !== 'json_schema') return undefined;
  const nested = f.json_schema as { schema?: unknown } | undefined;
  return nested?.schema ?? f.schema ?? {};
}

// --- internal ---

/** The stop sequence the text reaches first, and where. */
function firstStop(
  text: string,
  sequences: Array<string | undefined>,
): { sequence: string; at: number } | undefined {
  let first: { sequence: string; at: number } | undefined;
  for (const sequence of sequences) {
    const at = sequence ? text.indexOf(sequence) : -1;
    if (at >= 0 && (first === undefined || at < first.at)) first = { sequence: sequence!, at };
  }
  return first;
}

function toolCallCount(turn: Turn, plan: FakeStep): number {
  if (turn.tools.length === 0 || turn.toolChoiceNone) return 0;
  if (plan.toolCalls !== undefined) return plan.toolCalls;
  return turn.forcedTool !== undefined ? 1 : 0;
}

function pickTool(turn: Turn, i: number): Tool {
  if (typeof turn.forcedTool === 'string') {
    const forced = turn.tools.find((tool) => tool.name === turn.forcedTool);
    if (forced) return forced;
  }
  return turn.tools[i % turn.tools.length];
}

function replyText(turn: Turn, plan: FakeStep): string | undefined {
  if (plan.text !== undefined) return plan.text;
  if (plan.long !== undefined) return longText(plan.long);
  if (plan.imageCheck) {
    const n = turn.images.length;
    return n === 0
      ? 'image-check: no image'
      : `image-check: ${n} image${n > 1 ? 's' : ''} (${turn.images.join(', ')})`;
  }
  if (turn.outputSchema !== undefined && plan.toolCalls === undefined && !plan.toolUses?.length)
    return JSON.stringify(schemaValue(turn.outputSchema));
  if (turn.toolResults.length > 0) return `Tool result received: ${turn.toolResults.join(' | ')}`;
  if (plan.toolCalls !== undefined && plan.toolCalls > 0 && turn.tools.length > 0) return undefined;
  if (plan.toolUses?.length) return undefined;
  if (turn.forcedTool !== undefined && turn.tools.length > 0 && !turn.toolChoiceNone) return undefined;
  return DEFAULT_TEXT;
}

/** `bytes` bytes of text in 1 KiB words, so a stream of it is one frame per KiB. */
function longText(bytes: number): string {
  const word = `${'x'.repeat(1023)} `;
  return word.repeat(Math.floor(bytes / 1024)) + 'x'.repeat(bytes % 1024);
}

function usageFor(turn: Turn, plan: FakeStep, blocks: ReplyBlock[]): Omit<ReplyUsage, 'webSearches'> {
  let output = 0;
  let reasoning = 0;
  for (const block of blocks) {
    if (block.type === 'text') output += splitWords(block.text).length;
    if (block.type === 'thinking') reasoning += Math.max(1, splitWords(block.text).length);
    if (block.type === 'tool_call') output += 10;
  }
  // a scripted usage replaces what prompt caching would bill
  const given: FakeUsage = plan.usage ?? cachedUsage(turn.promptCache);
  const reasoningTokens = given.reasoning ?? reasoning;
  return {
    input: given.input ?? turn.inputTokens,
    output: given.output ?? Math.max(1, output + reasoningTokens),
    cacheRead: given.cacheRead ?? 0,
    cacheWrite: given.cacheWrite ?? 0,
    cacheWrite1h: Math.min(given.cacheWrite1h ?? 0, given.cacheWrite ?? 0),
    reasoning: reasoningTokens,
    cost: given.cost ?? 0,
    ...(plan.priorityTier ? { priorityTier: true } : {}),
  };
}

function cachedUsage(cache: CacheUsage | undefined): FakeUsage {
  if (!cache) return {};
  return { input: cache.input, cacheRead: cache.read, cacheWrite: cache.write, cacheWrite1h: cache.write1h };
}

function signatureFor(text: string): string {
  return `${CLAUDE_SIGNATURE_PREFIX}${Buffer.from(text).toString('base64').slice(0, 24)}`;
}

export type Provider = 'anthropic' | 'openai' | 'openrouter';

/** Per-reply values the encoders share (ids are deterministic per fake instance). */
export type ReplyContext = {
  id: string;
  model: string;
  created: number;
  requestId: string;
  includeUsage: boolean;
  /** The parsed request body (the Responses API echoes request fields in its answer). */
  body?: Record<string, unknown>;
};

/** A 400 naming the field it refuses, as OpenAI words one: its `param` and `code` beside the message. */
export type BodyRefusal = { message: string; param: string; code: string | null };

/** What the server needs from one provider's wire format. */
export type Codec = {
  provider: Provider;
  /** The Responses API: answers are stored and `previous_response_id` must name one (stored-responses.ts). */
  storesResponses?: true;
  /** The provider's usual response headers (request id and the like). */
  headers(ctx: ReplyContext): Record<string, string>;
  messageIdPrefix: string;
  toolIdPrefix: string;
  /** Auth and header checks; the real API's refusal (status and body) when it would refuse. */
  checkHeaders(headers: Headers, ctx: ReplyContext): { status: number; body: unknown } | undefined;
  /**
   * A 400's message for a body the API refuses (`headers`: the request's, for what a beta header opens), or
   * the message with the field it names (OpenAI's `param` and `code`).
   */
  checkBody(body: Record<string, unknown>, headers?: Headers): string | BodyRefusal | undefined;
  readTurn(body: Record<string, unknown>): Turn;
  encodeJson(reply: Reply, ctx: ReplyContext): unknown;
  encodeFrames(reply: Reply, ctx: ReplyContext): string[];
  /**
   * `details`: the API's `error.details` (Anthropic's stable `error_code`), where it sends one; OpenAI's
   * `param` and `code` of a BodyRefusal.
   */
  errorBody(
    status: number,
    message: string | undefined,
    ctx: ReplyContext,
    details?: Record<string, unknown>,
  ): unknown;
  /**
   * The 200 body that holds the error for `status` in place of the answer (error-in-200), on the wires that
   * send one: OpenRouter's `{"error":{"code":STATUS,…}}`, the Responses API's failed `response`.
   */
  errorIn200Body?(status: number, message: string | undefined, ctx: ReplyContext): unknown;
  /** The provider's answer when the account's credit or spend limit is exhausted (not a rate limit). */
  spendLimit(message: string | undefined, ctx: ReplyContext): { status: number; body: unknown };
  malformedFrame(ctx: ReplyContext): string;
  /** The start of a text-delta frame up to the opening quote of its text (the `oversize` fault continues it). */
  openTextFrame(ctx: ReplyContext): string;
  /**
   * The in-stream error event for `status`; `sequence`: the frames sent before it (Responses numbers them);
   * `message`: the step's `message=`, in place of the provider's own words.
   */
  errorFrame(status: number, ctx: ReplyContext, sequence?: number, message?: string): string;
  modelsList(models: string[]): unknown;
};

/**
 * @module The most tokens a provider can bill for one call, which the budget reservation holds (DECISIONS
 * §4, issue 17 #1). A bound, not an estimate (routing's `estimatedInputTokens` is the estimate): input from
 * UTF-8 bytes plus framing, images at a stated per-image maximum, output from max_tokens.
 */
import type { AdapterName } from '../adapters/names.ts';
import { isClientToolCallType } from '../adapters/openai/responses.ts';
import type { ContentBlock } from '../canonical/message.ts';
import type { CanonicalRequest } from '../canonical/request.ts';
import { anthropicBetasOf, contextWindowOf, openedLongContext } from './long-context.ts';
import type { ModelEntry } from './model-schema.ts';

// Why bytes bound tokens: every tokenizer the providers use (byte-level BPE such as o200k/cl100k and
// Claude's; SentencePiece with byte fallback) splits the UTF-8 bytes of a text into tokens that each cover
// at least one byte, so B bytes are at most B tokens. ASCII prose runs ~4 bytes a token, CJK ~2, emoji
// ~2: the bound is loosest for English. What a provider adds around the text (role markers, a dummy
// prefix, the tool-use system prompt, its rendering of tools and arguments, a translator's glue text)
// is not in the bytes; the allowances below cover it.
const REQUEST_OVERHEAD = 64; // reply priming and start markers of the request
const MESSAGE_OVERHEAD = 8; // role markers per message (OpenAI documents 3 or 4)
const BLOCK_OVERHEAD = 8; // separators and prefixes per content block, a translation's "Error: "
const TOOLS_PROMPT = 1_024; // Anthropic's tool-use system prompt: 530 tokens at most for any model it lists
const TOOL_OVERHEAD = 64; // per tool: its wrapping, the default `{type:"object",properties:{}}` schema
const ARGUMENT_OVERHEAD = 16; // per top-level tool-call argument: Anthropic renders each as a tag
const IMAGE_OVERHEAD = 64; // per image: its markers and a translation's placeholder text
const STRUCTURED_OUTPUT_OVERHEAD = 512; // the instructions a provider adds for a response schema

/**
 * Stated tokens per image, first match on the model id: the providers bill by pixel size, which the
 * gateway does not decode, so each image reserves its model's maximum.
 */
export const IMAGE_TOKEN_MAXIMA: ReadonlyArray<{ pattern: RegExp; tokens: number }> = [
  // (w·h)/750 at 2,576 px on the long edge (Claude Opus 4.7 and later; ~1,600 at 1,568 px before)
  { pattern: /claude/i, tokens: 4_784 },
  // 2,833 + 5,667 per 512 px tile, at most 8 tiles after the 2048 / 768 px downscale
  { pattern: /gpt-4o-mini/i, tokens: 48_169 },
  // tiles: 85 + 170 × 8 = 1,445; patches: 2,500 × the largest published multiplier 2.46 = 6,150
  { pattern: /gpt-|(^|[:/])(o\d|codex|computer-use)/i, tokens: 6_150 },
  // no published formula (other OpenRouter vendors): the largest maximum above
  { pattern: /./, tokens: 48_169 },
];

/**
 * Request fields (passed through on the same wire) that make the provider add input the body does not
 * show: remote MCP tool lists, skills in a container, OpenRouter's web plugin, web search (and an
 * Anthropic `thread` that continues a held conversation, below), each with the adapters that serve it. A
 * model of another provider refuses such a field with a 400 naming it (the Anthropic SDK's tool runner
 * replays a thread on that answer), so a reservation for it must not refuse the request with a 429 first.
 */
const OPAQUE_FIELDS: ReadonlyArray<readonly [string, (adapter: AdapterName) => boolean]> = [
  ['mcp_servers', (a) => a === 'anthropic'],
  ['container', (a) => a === 'anthropic'],
  // OpenRouter's own: OpenAI refuses an unknown field, and a Claude model is sent without it
  ['plugins', (a) => a === 'openrouter'],
  // OpenAI's search models run it, a Claude model its own search tool (the Chat decoder's web_search)
  ['web_search_options', () => true],
];

/**
 * Responses API fields (same wire, OpenAI models) naming input OpenAI stored and bills again: the response a
 * follow-up continues (`previous_response_id`), a stored `conversation`, a `prompt` template. An
 * `item_reference` input item is opaque already (a raw block).
 */
const HELD_BY_OPENAI = ['previous_response_id', 'conversation', 'prompt'] as const;

export interface TokenBound {
  /** Input tokens, cached or not, the provider can bill at most. */
  inputTokens: number;
  /** Output tokens (thinking and reasoning included) it can bill at most. */
  outputTokens: number;
  /** The request asks for one-hour cache writes (`cache_control.ttl: "1h"`), billed at their own rate. */
  hourCache: boolean;
  /**
   * The request opens the model's long-context window (its anthropic-beta names it), or the model's prices step
   * without a beta: its rates may apply.
   */
  longContext: boolean;
}

/**
 * The bound for `req` on `model`. With `bodyText` (the client's JSON body, which holds every text, tool
 * definition and argument of the request, escaped to at least their own bytes) its byte length replaces
 * measuring the content one value at a time; base64 image data is taken out of it again, images being
 * billed by size, not by bytes. Anything the gateway cannot measure (a PDF, an audio part, a server tool)
 * reserves the model's whole context window, which no prompt can pass.
 */
export function boundCallTokens(req: CanonicalRequest, model: ModelEntry, bodyText?: string): TokenBound {
  const tally: Tally = {
    bytes: 0,
    framing: REQUEST_OVERHEAD,
    images: 0,
    imageData: 0,
    opaque: false,
    hourCache: bodyText !== undefined && HOUR_TTL.test(bodyText),
  };
  const measure = bodyText === undefined;
  countBlocks(tally, req.system, measure);
  for (const m of req.messages) {
    tally.framing += MESSAGE_OVERHEAD;
    countBlocks(tally, m.content, measure);
  }
  countTools(tally, req, measure);
  const fields = req.passthrough?.fields ?? {};
  for (const opaque of OPAQUE_FIELDS)
    if (fields[opaque[0]] !== undefined && opaque[1](model.adapter)) tally.opaque = true;
  // OpenAI runs a hosted web search and bills the pages it reads as input; so does Claude with its own tool
  if (req.hosted_tools?.length && model.adapter === 'openai') tally.opaque = true;
  if (req.web_search && model.adapter === 'anthropic') tally.opaque = true;
  // an Anthropic message thread continued: the provider bills the conversation it holds, which the body lacks
  const thread = fields.thread as { type?: unknown } | null | undefined;
  if (thread?.type === 'continue' && model.adapter === 'anthropic') tally.opaque = true;
  // likewise a Responses request on what OpenAI stored (an earlier response, a conversation, a prompt
  // template), which only an OpenAI model serves: any other model refuses it with a 400 that says why
  if (
    req.passthrough?.wire === 'openai_responses' &&
    model.adapter === 'openai' &&
    anySet(fields, HELD_BY_OPENAI)
  )
    tally.opaque = true;

  const content = measure ? tally.bytes : Buffer.byteLength(bodyText) - tally.imageData;
  // the model's image maximum is looked up only for a request that holds an image
  const perImage =
    tally.images === 0
      ? 0
      : IMAGE_TOKEN_MAXIMA.find((m) => m.pattern.test(model.id))!.tokens + IMAGE_OVERHEAD;
  let inputTokens = content + tally.framing + tally.images * perImage;
  // the whole window the request gets: 1M tokens on a model whose long-context beta it names
  const betas = anthropicBetasOf(req);
  const longContext = openedLongContext(model, betas) !== null;
  if (tally.opaque) inputTokens = Math.max(inputTokens, contextWindowOf(model, betas));

  // OpenAI bills every one of n choices; rejected predicted-output tokens are billed as output too
  const perChoice = req.max_tokens ?? model.capabilities.max_output_tokens;
  const prediction = fields.prediction === undefined ? 0 : jsonBytes(fields.prediction);
  return {
    inputTokens,
    outputTokens: perChoice * Math.max(1, req.n ?? 1) + prediction,
    hourCache: tally.hourCache,
    longContext,
  };
}

// --- internal ---

interface Tally {
  /** UTF-8 bytes of the content (only when measuring without a body). */
  bytes: number;
  framing: number;
  images: number;
  /** Characters of base64 image data, all ASCII, present verbatim in the body. */
  imageData: number;
  opaque: boolean;
  hourCache: boolean;
}

/** A one-hour cache breakpoint anywhere in a JSON body (blocks, tools, system). */
const HOUR_TTL = /"ttl"\s*:\s*"1h"/;

function countBlocks(t: Tally, blocks: readonly ContentBlock[], measure: boolean): void {
  for (const b of blocks) {
    t.framing += BLOCK_OVERHEAD;
    if ((b as { cache_control?: { ttl?: string } }).cache_control?.ttl === '1h') t.hourCache = true;
    switch (b.type) {
      case 'text':
        if (measure) t.bytes += Buffer.byteLength(b.text);
        break;
      case 'image':
        t.images++;
        if (b.source.type === 'base64') t.imageData += b.source.data.length;
        break;
      case 'tool_use':
        t.framing += ARGUMENT_OVERHEAD * Object.keys(b.input).length;
        if (measure) t.bytes += Buffer.byteLength(b.name) + jsonBytes(b.input);
        break;
      case 'tool_result':
        if (typeof b.content !== 'string') countBlocks(t, b.content, measure);
        else if (measure) t.bytes += Buffer.byteLength(b.content);
        break;
      case 'thinking':
        if (measure) t.bytes += Buffer.byteLength(b.thinking);
        break;
      case 'redacted_thinking':
        // encrypted, base64: longer than the thinking it carries
        if (measure) t.bytes += b.data.length;
        break;
      case 'raw':
        // a PDF's explicit breakpoint goes upstream as its document's one-hour cache_control
        if ((b.value.cache_control as { ttl?: unknown } | undefined)?.ttl === '1h') t.hourCache = true;
        countRaw(t, b.value, measure);
        break;
    }
  }
}

function countTools(t: Tally, req: CanonicalRequest, measure: boolean): void {
  const tools = req.tools ?? [];
  if (tools.length > 0) t.framing += TOOLS_PROMPT;
  for (const tool of tools) {
    t.framing += TOOL_OVERHEAD;
    if (tool.type === 'raw') countRaw(t, tool.value, measure);
    else if (measure)
      t.bytes +=
        Buffer.byteLength(tool.name) +
        Buffer.byteLength(tool.description ?? '') +
        jsonBytes(tool.input_schema);
  }
  const format = req.response_format;
  if (format?.type === 'json_schema') {
    t.framing += STRUCTURED_OUTPUT_OVERHEAD;
    if (measure) t.bytes += jsonBytes(format.schema) + Buffer.byteLength(format.description ?? '');
  } else if (format?.type === 'json_object') t.framing += STRUCTURED_OUTPUT_OVERHEAD;
}

/**
 * A part only one wire knows. One the body holds whole is bounded by its bytes like the rest: a tool the
 * client runs (OpenAI `function` or `custom`, a `namespace` of them) and Codex's `additional_tools` input
 * item listing such tools, each with a tool's allowance, and the calls of such tools replayed in the input with
 * their outputs (isHeldCall). Anything else (a hosted tool such as web search, a
 * file by id, audio) is what the provider expands beyond the body: the whole context.
 */
function countRaw(t: Tally, value: Record<string, unknown>, measure: boolean): void {
  if (isHeldCall(value)) {
    if (measure) t.bytes += jsonBytes(value);
    return;
  }
  const tools = inlineTools(value);
  if (tools === undefined) {
    t.opaque = true;
    return;
  }
  t.framing += TOOL_OVERHEAD * tools;
  if (measure) t.bytes += jsonBytes(value);
}

/**
 * A Responses input item replaying a call of a tool the client runs and its output (Codex's apply_patch as a
 * `custom_tool_call` and `custom_tool_call_output`, `shell_call`, `apply_patch_call`, … and their `_output`),
 * all text the body holds; an output holding an image or a file (a screenshot) is not.
 */
function isHeldCall(v: Record<string, unknown>): boolean {
  const type = typeof v.type === 'string' ? v.type : '';
  const call = type.endsWith('_output') ? type.slice(0, -'_output'.length) : type;
  if (call !== 'custom_tool_call' && !isClientToolCallType(call)) return false;
  const output = v.output;
  if (output === undefined || typeof output === 'string') return true;
  return (
    Array.isArray(output) &&
    output.every((p) => {
      const part = p as { type?: unknown } | null;
      return part?.type !== 'input_image' && part?.type !== 'input_file';
    })
  );
}

/** How many client-run tools `value` is or lists; undefined when it holds anything else. */
function inlineTools(value: unknown): number | undefined {
  const v = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (v.type === 'function' || v.type === 'custom') return 1;
  if ((v.type !== 'namespace' && v.type !== 'additional_tools') || !Array.isArray(v.tools)) return undefined;
  let n = 0;
  for (const tool of v.tools) {
    const inner = inlineTools(tool);
    if (inner === undefined) return undefined;
    n += inner;
  }
  return n;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** Whether any of `names` is set in `fields` (a loop: no closure per request). */
function anySet(fields: Record<string, unknown>, names: readonly string[]): boolean {
  for (const name of names) if (isSet(fields[name])) return true;
  return false;
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

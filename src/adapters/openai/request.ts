/**
 * @module CanonicalRequest → OpenAI Chat Completions request (wire-formats §5.1): its messages from
 * request-messages.ts, then sampling, tools, reasoning and response format as the model takes them; stream
 * usage is always requested upstream (§6 #11). The `openrouter` flavour adds its differences (§3).
 */
import type {
  CanonicalRequest,
  CanonicalTool,
  ReasoningEffort,
  ThinkingConfig,
} from '../../canonical/request.ts';
import { SvcError } from '../../lib/errors.ts';
import { sha256Hex } from '../../lib/hash.ts';
import {
  insertJsonMember,
  locateJsonValues,
  removeJsonMember,
  replaceJsonValue,
  rewriteModel,
} from '../../lib/json-splice.ts';
import type { AdapterConfig, PassthroughInput, UpstreamCall } from '../adapter.ts';
import { claudeToolTurnWithoutThinking } from '../openrouter/claude-tool-turn.ts';
import { EFFORT_PATHS, withEffortFitted } from './fit-effort.ts';
import {
  effortFromThinking,
  fitEffort,
  isReasoningModel,
  lowestEffort,
  qualifiesForStrict,
  takesDefaultSamplingOnly,
} from './model-facts.ts';
import { encodeOpenAIMessages, reject } from './request-messages.ts';

export type OpenAIFlavor = 'openai' | 'openrouter';

export interface OpenAIRequestOptions {
  flavor: OpenAIFlavor;
  /** OpenRouter `provider` routing object sent when the client gave none. */
  provider?: Record<string, unknown>;
}

export function encodeOpenAIRequest(
  req: CanonicalRequest,
  model: string,
  config: AdapterConfig,
  opts: OpenAIRequestOptions,
): UpstreamCall {
  const router = opts.flavor === 'openrouter';
  // an Anthropic request's tools and sandbox that no OpenAI-shape model has: refused, never dropped (§6 #25)
  const anthropic = req.passthrough?.wire === 'anthropic' ? req.passthrough.fields : undefined;
  for (const field of ANTHROPIC_ONLY_FIELDS)
    if (anthropic?.[field] != null) reject(field, `${ANTHROPIC_ONLY_FIELDS_WHY[field]}; use a Claude model`);
  if (anthropic?.thread != null) refuseThread();
  if (anthropic && !router) refusePrefill(req);
  if (!router && (req.stop_sequences?.length ?? 0) > MAX_OPENAI_STOP)
    reject(
      'stop_sequences',
      `OpenAI models take at most ${MAX_OPENAI_STOP} stop sequences, not ${req.stop_sequences!.length}`,
    );
  const body: Record<string, unknown> =
    req.passthrough?.wire === 'openai' ? { ...req.passthrough.fields, model } : { model };
  const messages = encodeOpenAIMessages(req, router, router ? model : '');
  // OpenAI refuses an empty conversation (every message of an Anthropic request empty, a Responses input '')
  if (messages.length === 0)
    reject(
      req.passthrough?.wire === 'openai_responses' ? 'input' : 'messages',
      'no message has any content, and this model needs at least one that has',
    );
  body.messages = messages;
  if (req.max_tokens !== undefined) body[router ? 'max_tokens' : 'max_completion_tokens'] = req.max_tokens;
  // OpenAI's reasoning models take only the default sampling (an Anthropic client's temperature 0 is a 400)
  const reasoning = !router && isReasoningModel(model);
  // OpenAI's own reasoning models refuse other sampling; gpt-oss, served by others, takes it
  const defaultSampling = !router && takesDefaultSamplingOnly(model);
  if (req.temperature !== undefined && (!defaultSampling || req.temperature === 1))
    body.temperature = req.temperature;
  if (req.top_p !== undefined && (!defaultSampling || req.top_p === 1)) body.top_p = req.top_p;
  if (req.top_k !== undefined && router) body.top_k = req.top_k;
  if (req.n !== undefined) body.n = req.n;
  // OpenAI's own reasoning models refuse `stop` (a 400 unsupported_parameter): never left out unsaid, as the
  // answer would run past where the client asked it to stop
  if (req.stop_sequences?.length && defaultSampling)
    reject(
      'stop_sequences',
      `${model} takes no stop sequences (OpenAI's reasoning models refuse stop); send none, or use another model`,
    );
  if (req.stop_sequences?.length) body.stop = req.stop_sequences;
  if (req.user_id) body.user = fitUserId(req.user_id);
  encodeTools(req, body);
  if (router) {
    // Claude refuses reasoning over a tool turn that lost its thinking (a history rebuilt without it, or
    // another family's left out): that call goes without, as on the Anthropic adapter
    if (!claudeToolTurnWithoutThinking(model, messages))
      encodeRouterReasoning(req.thinking, req.reasoning_effort, body);
  } else {
    // only reasoning models take reasoning_effort (Claude Code asks for it on every call, gpt-4.1 included);
    // thinking turned off is the least reasoning the model takes (it has no off switch before gpt-5.1)
    const effort =
      req.thinking?.type === 'disabled'
        ? lowestEffort(model)
        : (req.reasoning_effort ?? effortFromThinking(req.thinking));
    // an effort the model does not take (Claude's `max`, `low` to gpt-5-pro) is the nearest it takes
    if (effort && reasoning) body.reasoning_effort = fitEffort(model, effort);
  }
  const rf = req.response_format;
  if (rf?.type === 'json_schema') {
    const js: Record<string, unknown> = { name: rf.name ?? 'response', schema: rf.schema };
    if (rf.description !== undefined) js.description = rf.description;
    // as for tools: OpenAI refuses strict mode for a schema it does not qualify, which then stays non-strict
    if (rf.strict !== undefined) js.strict = rf.strict && qualifiesForStrict(rf.schema);
    body.response_format = { type: 'json_schema', json_schema: js };
  } else if (rf) body.response_format = { type: rf.type };
  if (router && opts.provider && body.provider === undefined) body.provider = opts.provider;
  if (req.stream) {
    body.stream = true;
    body.stream_options = { ...(body.stream_options as object), include_usage: true };
  }
  return { url: completionsUrl(config), headers: openaiHeaders(config), body: JSON.stringify(body) };
}

/**
 * Fast path: the client's body with `model` replaced, `max_tokens` named `max_completion_tokens` on OpenAI's
 * reasoning models and, when streaming, `stream_options.include_usage` ensured so usage is always observed.
 * Edits JSON text; only re-serialises when stream_options must change.
 */
export function encodeOpenAIPassthrough(
  input: PassthroughInput,
  config: AdapterConfig,
  opts: OpenAIRequestOptions,
): UpstreamCall {
  let text = rewriteModel(
    withEffortFitted(opts.flavor, input.bodyText, input.body, input.upstreamModel, EFFORT_PATHS.chat),
    input.upstreamModel,
  );
  // OpenAI's reasoning models refuse `max_tokens` and take the same bound as `max_completion_tokens` (gpt-oss on
  // another server, such as Ollama, may take only the older name: left as sent); a client
  // that does not know the model behind a gateway name (the Vercel AI SDK's openai.chat('openai:gpt-5-mini'),
  // an alias, a fallback) sends the older name
  const max = input.body.max_tokens;
  if (
    opts.flavor === 'openai' &&
    max != null &&
    input.body.max_completion_tokens == null &&
    takesDefaultSamplingOnly(input.upstreamModel)
  )
    text = insertJsonMember(
      removeJsonMember(text, 'max_tokens'),
      'max_completion_tokens',
      JSON.stringify(max),
    );
  if (input.stream) {
    const so = input.body.stream_options as Record<string, unknown> | null | undefined;
    if (so?.include_usage !== true) {
      const value = JSON.stringify({ ...so, include_usage: true });
      text =
        locateJsonValues(text, ['stream_options']).length > 0
          ? replaceJsonValue(text, ['stream_options'], value)!
          : insertJsonMember(text, 'stream_options', value);
    }
  }
  if (opts.flavor === 'openrouter' && opts.provider && input.body.provider === undefined) {
    text = insertJsonMember(text, 'provider', JSON.stringify(opts.provider));
  }
  return { url: completionsUrl(config), headers: openaiHeaders(config), body: text };
}

/**
 * The end-user id as OpenAI takes it: at most 64 characters (OpenRouter 128), else a 400. Claude Code's
 * metadata.user_id is a 150-character JSON object, so a longer id goes as its SHA-256 in hex (64
 * characters, stable per user).
 */
export function fitUserId(id: string): string {
  return id.length <= 64 ? id : sha256Hex(id);
}

// --- internal ---

function completionsUrl(config: AdapterConfig): string {
  return `${config.baseUrl.replace(/\/+$/, '')}/chat/completions`;
}

export function openaiHeaders(config: AdapterConfig): Record<string, string> {
  return { 'content-type': 'application/json', authorization: `Bearer ${config.apiKey}`, ...config.headers };
}

/** OpenAI's `stop` holds at most this many sequences (wire-formats §2.2). */
const MAX_OPENAI_STOP = 4;

const ANTHROPIC_ONLY_FIELDS = ['mcp_servers', 'container'] as const;
const ANTHROPIC_ONLY_FIELDS_WHY: Record<(typeof ANTHROPIC_ONLY_FIELDS)[number], string> = {
  mcp_servers:
    'MCP servers are connected by the Anthropic API itself; this model would answer without their tools',
  container: 'a code-execution container exists only on the Anthropic API',
};

/**
 * An Anthropic message thread (`thread`, beta `message-threads-2026-08-12`) is conversation state the
 * Anthropic API holds; this model would answer a `continue` without the earlier turns. Refused as the API
 * refuses a request it cannot thread (`error.details.error_code: thread_unsupported_request`), on which the
 * SDK's tool runner sends the whole conversation again without `thread`.
 */
function refuseThread(): never {
  throw new SvcError('invalid_request', {
    message:
      'thread: message threads are held by the Anthropic API, so this model can neither start nor continue one; send the full conversation without `thread`, or use a Claude model',
    details: { param: 'thread', error_code: 'thread_unsupported_request' },
  });
}

/**
 * An Anthropic request whose last message is the assistant's text asks for a prefill (the answer continues
 * that text); an OpenAI model would answer afresh instead, and a client gluing the two together (a prefilled
 * `{`) gets a broken answer. Refused as Claude models without prefill refuse it (Opus 4.6 and later), in the
 * API's words, which Anthropic clients already handle. OpenRouter continues a final assistant message itself.
 */
function refusePrefill(req: CanonicalRequest): void {
  const last = req.messages.at(-1);
  if (last?.role !== 'assistant' || !last.content.some((b) => b.type === 'text' && b.text.trim() !== ''))
    return;
  reject(
    last.at ?? 'messages',
    'This model does not support assistant message prefill. The conversation must end with a user message.',
  );
}

function encodeTools(req: CanonicalRequest, body: Record<string, unknown>): void {
  const tools = req.tools?.map((t: CanonicalTool) => {
    if (t.type === 'raw') {
      if (t.wire === 'openai') return t.value;
      return reject(t.at ?? 'tools', `tool of type ${String(t.value.type)} has no OpenAI equivalent`);
    }
    const fn: Record<string, unknown> = { name: t.name, parameters: t.input_schema };
    if (t.description !== undefined) fn.description = t.description;
    // OpenAI refuses strict mode for a schema with optional properties or open objects: it stays non-strict
    if (t.strict !== undefined) fn.strict = t.strict && qualifiesForStrict(t.input_schema);
    return { type: 'function', function: fn };
  });
  if (!tools?.length) return;
  body.tools = tools;
  const c = req.tool_choice;
  if (!c) return;
  // `none` stays none, `any` is required: never collapsed into auto (wire-formats §6 #21)
  if (c.type === 'tool') body.tool_choice = { type: 'function', function: { name: c.name } };
  else body.tool_choice = c.type === 'any' ? 'required' : c.type;
  if (c.type !== 'none' && c.disable_parallel_tool_use) body.parallel_tool_calls = false;
}

function encodeRouterReasoning(
  t: ThinkingConfig | undefined,
  effort: ReasoningEffort | undefined,
  body: Record<string, unknown>,
): void {
  if (body.reasoning !== undefined) return;
  if (t?.type === 'enabled' && t.budget_tokens !== undefined)
    body.reasoning = { max_tokens: t.budget_tokens };
  else if (effort) body.reasoning = { effort };
  else if (t?.type === 'disabled') body.reasoning = { enabled: false };
  else if (t?.type === 'adaptive') body.reasoning = { enabled: true };
}

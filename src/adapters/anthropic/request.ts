/**
 * @module CanonicalRequest → Anthropic Messages request (wire-formats §5.1). Enforces what the API rejects:
 * alternating turns with tool results first, no empty text, tool ids matching `^[a-zA-Z0-9_-]+$` (the turns
 * are encoded by request-messages.ts), a max_tokens, thinking budgets below it, no sampling params on
 * `2026-10-21`.
 */
import type { TextBlock } from '../../canonical/message.ts';
import type { CanonicalRequest, CanonicalTool, WebSearchRequest } from '../../canonical/request.ts';
import { rewriteModel } from '../../lib/json-splice.ts';
import type { AdapterConfig, PassthroughInput, UpstreamCall } from '../adapter.ts';
import {
  refusesForcedToolChoice,
  refusesThinkingBudget,
  refusesThinkingOffAt,
  type ThinkingStyle,
  takesSampling,
  takesStructuredOutputs,
  thinkingOffAs,
  thinkingStyleOf,
} from './model-facts.ts';
import { encodeAnthropicMessages, reject, textBlock } from './request-messages.ts';
import { claudeStrictSchema, claudeToolSchema } from './strict-schema.ts';

export const ANTHROPIC_DEFAULT_VERSION = '2023-06-01';

export function encodeAnthropicRequest(
  req: CanonicalRequest,
  model: string,
  config: AdapterConfig,
): UpstreamCall {
  const same = req.passthrough?.wire === 'anthropic' ? req.passthrough : undefined;
  const version = same?.headers['anthropic-version'] ?? ANTHROPIC_DEFAULT_VERSION;
  if (req.n !== undefined && req.n > 1) reject('n', 'n > 1 is not supported by this model');
  // an answer without the log probabilities asked for would break a client that reads them
  const openai = req.passthrough?.wire === 'openai' ? req.passthrough.fields : undefined;
  if (openai?.logprobs === true || typeof openai?.top_logprobs === 'number')
    reject(
      openai.logprobs === true ? 'logprobs' : 'top_logprobs',
      'log probabilities are not returned by this model',
    );
  const audio =
    openai?.audio != null || (Array.isArray(openai?.modalities) && openai.modalities.includes('audio'));
  if (audio)
    reject(openai?.audio != null ? 'audio' : 'modalities', 'audio output is not produced by this model');
  // the deprecated function-calling form (role "function" is refused at decoding): tools are the form svc translates
  const legacy =
    openai?.functions != null ? 'functions' : openai?.function_call != null ? 'function_call' : undefined;
  if (legacy)
    reject(
      legacy,
      'the deprecated functions / function_call form is not translated; send tools and tool_choice',
    );
  const body: Record<string, unknown> = { ...same?.fields, model };
  const maxTokens = req.max_tokens ?? config.defaultMaxTokens ?? 8192;
  body.max_tokens = maxTokens;
  let prompt = req.system;
  let messages = encodeAnthropicMessages(req.messages);
  refuseAccidentalPrefill(req, messages);
  if (messages.length === 0) {
    // system prompts alone, which OpenAI answers: Claude needs a turn, so the prompt becomes the user's (choice)
    const text = prompt.filter((b) => b.text !== '');
    if (text.length === 0)
      reject(inputFieldOf(req), 'no message has any content, and Claude needs at least one that has');
    messages = [{ role: 'user', content: text.map(textBlock) }];
    prompt = [];
  }
  // json_object has no Anthropic switch (output_config.format needs a closed schema): an instruction (choice);
  // so has a JSON schema on a model without structured outputs, which would refuse output_config.format
  const structured = takesStructuredOutputs(model);
  const instruction = jsonInstruction(req.response_format, structured);
  const system = instruction ? [...prompt, instruction] : prompt;
  if (system.length > 0) body.system = encodeSystem(system);
  body.messages = messages;
  const tools = (req.tools ?? []).map((t) => encodeTool(t, structured, same === undefined));
  // OpenAI's hosted web search asked for: Claude runs its own (answers cite the pages, as url_citation)
  if (req.web_search) {
    // under the one name Claude's search tool takes, which a client function may hold too (Claude refuses both)
    if (tools.some((t) => t.name === WEB_SEARCH_NAME))
      reject(
        'tools',
        `a function named ${WEB_SEARCH_NAME} cannot go to a Claude model beside OpenAI's hosted web search, which Claude runs as its own tool of that name; rename the function, or leave the hosted search out`,
      );
    tools.push(webSearchTool(req.web_search));
  }
  if (tools.length > 0) {
    body.tools = tools;
    // a forced hosted search forces Claude's own search tool (its parallel-use setting kept)
    if (req.web_search?.forced)
      body.tool_choice = { ...req.tool_choice, type: 'tool', name: WEB_SEARCH_NAME };
    else if (req.tool_choice) body.tool_choice = req.tool_choice;
    // Opus 5.5, Sonnet 5.5 and Fable 5.1 refuse forced tool use (a 400): the model chooses (parallel-use kept)
    const choice = body.tool_choice as { type?: string; name?: string } | undefined;
    if ((choice?.type === 'any' || choice?.type === 'tool') && refusesForcedToolChoice(model)) {
      const { type: _, name: __, ...rest } = choice;
      body.tool_choice = { type: 'auto', ...rest };
    }
  }
  const forced =
    (req.tool_choice?.type === 'any' ||
      req.tool_choice?.type === 'tool' ||
      req.web_search?.forced === true) &&
    !refusesForcedToolChoice(model);
  const withoutThinking =
    (forced && (req.tools !== undefined || tools.length > 0)) || !thinkingReplayed(messages);
  encodeThinking(req, body, maxTokens, withoutThinking, thinkingStyleOf(model), model);
  if (version < '2026-10-21') encodeSampling(req, body, model);
  if (req.stop_sequences?.some((stop) => stop.trim() === ''))
    reject(req.passthrough?.wire === 'openai' ? 'stop' : 'stop_sequences', BLANK_STOP);
  if (req.stop_sequences?.length) body.stop_sequences = req.stop_sequences;
  if (req.user_id) body.metadata = { ...(body.metadata as object), user_id: req.user_id };
  if (req.response_format?.type === 'json_schema' && structured) {
    const { schema } = req.response_format;
    body.output_config = {
      ...(body.output_config as object),
      format: { type: 'json_schema', schema: same ? schema : claudeStrictSchema(schema) },
    };
  }
  if (req.stream) body.stream = true;
  return {
    url: messagesUrl(config),
    headers: anthropicHeaders(config, version, same?.headers['anthropic-beta']),
    body: JSON.stringify(body),
  };
}

/** Fast path: the client's body with `model` replaced; client version/beta headers forwarded. */
export function encodeAnthropicPassthrough(input: PassthroughInput, config: AdapterConfig): UpstreamCall {
  const body = rewriteModel(input.bodyText, input.upstreamModel);
  const version = input.headers?.['anthropic-version'] ?? ANTHROPIC_DEFAULT_VERSION;
  return {
    url: messagesUrl(config),
    headers: anthropicHeaders(config, version, input.headers?.['anthropic-beta']),
    body,
  };
}

/** `POST /v1/messages/count_tokens` with the client's body, only `model` replaced (wire-formats §1.1). */
export function encodeAnthropicCountTokens(input: PassthroughInput, config: AdapterConfig): UpstreamCall {
  const call = encodeAnthropicPassthrough(input, config);
  return { ...call, url: `${call.url}/count_tokens` };
}

// --- internal ---

function messagesUrl(config: AdapterConfig): string {
  return `${config.baseUrl.replace(/\/+$/, '')}/v1/messages`;
}

function anthropicHeaders(
  config: AdapterConfig,
  version: string,
  beta: string | undefined,
): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    'x-api-key': config.apiKey,
    'anthropic-version': version,
    ...config.headers,
  };
  if (beta) h['anthropic-beta'] = beta;
  return h;
}

/** Where the request's conversation is: `input` on the Responses API, `messages` on the other two. */
function inputFieldOf(req: CanonicalRequest): string {
  return req.passthrough?.wire === 'openai_responses' ? 'input' : 'messages';
}

/** Claude refuses an empty or whitespace-only stop (OpenAI takes "\n"); never left out, or the answer runs past it. */
const BLANK_STOP =
  'Claude models take no stop sequence that is empty or only whitespace (such as "\\n"); send ones with other characters, or use another model';

function encodeSystem(system: TextBlock[]): unknown {
  if (system.length === 1 && !system[0].cache_control) return system[0].text;
  return system.filter((b) => b.text !== '').map(textBlock);
}

function encodeTool(t: CanonicalTool, structured: boolean, foreign: boolean): Record<string, unknown> {
  if (t.type === 'raw') {
    if (t.wire === 'anthropic') return t.value;
    return reject(t.at ?? 'tools', `tool of type ${String(t.value.type)} has no Anthropic equivalent`);
  }
  const s = t.input_schema;
  if (
    s.anyOf !== undefined ||
    s.oneOf !== undefined ||
    s.allOf !== undefined ||
    (s.type !== undefined && s.type !== 'object')
  ) {
    reject(
      `tools.${t.name}`,
      'the input schema must be an object schema without top-level anyOf/oneOf/allOf',
    );
  }
  // strict tool use is structured outputs' too: a model without them refuses `strict`, so the tool goes plain
  const strict = structured ? t.strict : undefined;
  const out: Record<string, unknown> = { name: t.name, input_schema: claudeToolSchema(s, foreign && strict) };
  if (t.description !== undefined) out.description = t.description;
  if (strict !== undefined) out.strict = strict;
  if (t.cache_control) out.cache_control = t.cache_control;
  return out;
}

/** The name of Claude's web search tool (the API takes no other), which a forced search's tool_choice names. */
const WEB_SEARCH_NAME = 'web_search';

/** Claude's web search tool (`web_search_20250305`) for OpenAI's hosted web search. */
function webSearchTool(search: WebSearchRequest): Record<string, unknown> {
  const tool: Record<string, unknown> = { type: 'web_search_20250305', name: WEB_SEARCH_NAME };
  if (search.allowed_domains) tool.allowed_domains = search.allowed_domains;
  if (search.user_location) tool.user_location = { type: 'approximate', ...search.user_location };
  return tool;
}

/** The system text that asks for what `response_format: {type: "json_object"}` promises. */
const JSON_OBJECT_INSTRUCTION: TextBlock = {
  type: 'text',
  text: 'Respond with a single valid JSON object only: no prose before or after it, no code fences.',
};

/**
 * The system instruction a JSON response format becomes where Claude has no switch for it: always for
 * json_object, and for a JSON schema on a model without structured outputs (the schema is then asked for,
 * not enforced).
 */
function jsonInstruction(
  rf: CanonicalRequest['response_format'],
  structured: boolean,
): TextBlock | undefined {
  if (rf?.type === 'json_object') return JSON_OBJECT_INSTRUCTION;
  if (rf?.type !== 'json_schema' || structured) return undefined;
  return {
    type: 'text',
    text: `${JSON_OBJECT_INSTRUCTION.text} It must conform to this JSON schema: ${JSON.stringify(rf.schema)}`,
  };
}

/**
 * A last message from the user (or a tool result, or a later system prompt) left with no content opens no
 * turn, so the conversation would end with the assistant's turn before it: a prefill, which Claude continues
 * instead of answering. Claude refuses an empty message itself ("all messages must have non-empty content
 * except for the optional final assistant message"), so this is that 400 naming the message, before any
 * upstream call. An empty message anywhere else only merges its neighbours (encodeAnthropicMessages).
 */
function refuseAccidentalPrefill(req: CanonicalRequest, turns: readonly Record<string, unknown>[]): void {
  const last = req.messages.at(-1);
  if (!last || last.role === 'assistant' || turns.at(-1)?.role !== 'assistant') return;
  reject(
    `${last.at ?? inputFieldOf(req)}.content`,
    'the last message is empty; Claude takes empty content only in a final assistant message, and without this one it would continue the assistant message before it instead of answering',
  );
}

/**
 * temperature, top_p, top_k where Claude accepts them (the newer API version forbids all three, wire-formats
 * §1.2): temperature clamped to 0–1 (OpenAI allows 0–2; choice); with thinking on only temperature 1, top_p
 * from 0.95 and no top_k; on models after Opus 4.6 (takesSampling) only temperature 1, top_p from 0.99 and
 * no top_k; and never temperature and top_p together (Claude 4.5 models refuse the pair: temperature is kept).
 */
function encodeSampling(req: CanonicalRequest, body: Record<string, unknown>, model: string): void {
  const thinking = (body.thinking as { type?: string } | undefined)?.type;
  const thinkingOn = thinking === 'enabled' || thinking === 'adaptive';
  // a model after Opus 4.6 takes only the defaults: what it would refuse is left out, as thinking leaves it
  const free = takesSampling(model);
  const temperature = req.temperature === undefined ? undefined : Math.min(1, Math.max(0, req.temperature));
  if (temperature !== undefined && ((!thinkingOn && free) || temperature === 1))
    body.temperature = temperature;
  else if (req.top_p !== undefined && (!thinkingOn || req.top_p >= 0.95) && (free || req.top_p >= 0.99))
    body.top_p = req.top_p;
  if (req.top_k !== undefined && !thinkingOn && free) body.top_k = req.top_k;
}

/**
 * False when the last assistant turn calls tools without the thinking block that produced them (a client
 * that rebuilt its history without it): Claude refuses thinking on then ("Expected `thinking` or
 * `redacted_thinking`, but found `tool_use`"), so the call goes without thinking.
 */
function thinkingReplayed(messages: readonly Record<string, unknown>[]): boolean {
  const last = messages.findLast((m) => m.role === 'assistant');
  const content = (last?.content ?? []) as Array<{ type?: string }>;
  if (!content.some((b) => b.type === 'tool_use')) return true;
  return content[0]?.type === 'thinking' || content[0]?.type === 'redacted_thinking';
}

function encodeThinking(
  req: CanonicalRequest,
  body: Record<string, unknown>,
  maxTokens: number,
  withoutThinking: boolean,
  style: ThinkingStyle,
  model: string,
): void {
  // a model that always thinks (Opus 5.5, Fable 5.1) refuses thinking turned off or given a budget, Sonnet 5 and
  // later a budget: a budget becomes adaptive thinking at the effort asked, the client's display kept; thinking
  // turned off is left out where the model always thinks, and is between_tools on Sonnet 5.5 (below)
  // (Haiku 5.5 refuses thinking turned off at effort xhigh or max: left out there, as between_tools is)
  const effort = req.reasoning_effort && req.reasoning_effort !== 'none' ? req.reasoning_effort : undefined;
  const off = refusesThinkingOffAt(model, effort) ? undefined : thinkingOffAs(model);
  const t =
    req.thinking?.type === 'enabled' && refusesThinkingBudget(model)
      ? { type: 'adaptive' as const, ...(req.thinking.display ? { display: req.thinking.display } : {}) }
      : req.thinking?.type === 'disabled' && off !== 'disabled'
        ? undefined
        : req.thinking;
  if (req.thinking?.type === 'disabled' && off === 'between_tools') body.thinking = { type: 'between_tools' };
  // forced tool use is incompatible with thinking (wire-formats §1.5; the tool choice wins); Claude 3 / 3.5 have none
  if (t && t.type !== 'disabled' && !withoutThinking && style.thinking) {
    const display = t.display ? { display: t.display } : {};
    // a model before adaptive thinking gets a budget: the client's, else one for the effort asked, which
    // leaves a quarter of max_tokens (1,024 at least) for the answer itself
    const asked = t.type === 'enabled';
    const budget = asked
      ? (t.budget_tokens ?? 1024)
      : style.adaptive
        ? undefined
        : EFFORT_BUDGET[effort ?? 'medium'];
    if (budget === undefined) body.thinking = { type: 'adaptive', ...display };
    else {
      const room = asked ? maxTokens - 1 : maxTokens - Math.max(1024, Math.floor(maxTokens / 4));
      const fitted = Math.min(Math.max(1024, budget), room);
      if (fitted >= 1024) body.thinking = { type: 'enabled', budget_tokens: fitted, ...display };
    }
  } else if (t?.type === 'disabled') body.thinking = { type: 'disabled' };
  if (effort && style.effort) {
    const mapped = effort === 'minimal' ? 'low' : effort;
    body.output_config = { ...(body.output_config as object), effort: mapped };
  }
}

/** Thinking budgets for an effort, on models that take a budget rather than an effort. */
export const EFFORT_BUDGET: Record<string, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16_384,
  xhigh: 24_576,
  max: 32_000,
};

/**
 * The OpenAI Chat Completions wire format (wire-formats §2) and its OpenRouter flavour (§3) for the fake
 * provider: request reading, JSON and SSE replies, error bodies.
 */

import { billedInputTokens } from './billing.ts';
import { chatJsonModeRefusal, outputSchemaOf } from './openai-json-mode.ts';
import { chatPartRefusal } from './openai-parts.ts';
import { encodeChatFrames, encodeChatJson } from './openai-reply.ts';
import { openRouterClaudeRefusal } from './reasoning-seals.ts';
import type { BodyRefusal, Codec, Provider, Turn } from './responses.ts';
import { stringsOf } from './responses.ts';
import { sseFrame } from './sse.ts';

const OPENAI_ERRORS: Record<number, [string, string | null, string]> = {
  400: ['invalid_request_error', null, 'Invalid request.'],
  401: ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.'],
  402: ['insufficient_quota', 'insufficient_quota', 'You exceeded your current quota.'],
  403: [
    'request_forbidden',
    'unsupported_country_region_territory',
    'Country, region, or territory not supported',
  ],
  404: [
    'invalid_request_error',
    'model_not_found',
    'The model does not exist or you do not have access to it.',
  ],
  408: ['timeout', null, 'Request timed out.'],
  409: ['invalid_request_error', null, 'Conflict.'],
  413: ['invalid_request_error', 'request_too_large', 'Request too large.'],
  429: ['requests', 'rate_limit_exceeded', 'Rate limit reached for requests.'],
  500: ['server_error', null, 'The server had an error while processing your request. Sorry about that!'],
  502: ['server_error', null, 'Bad gateway.'],
  503: ['server_error', null, 'The engine is currently overloaded, please try again later.'],
  504: ['timeout', null, 'Gateway timeout.'],
  529: ['server_error', null, 'The server is overloaded.'],
};

const NO_KEY =
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer " +
  'auth (i.e. Authorization: Bearer YOUR_KEY).';

const QUOTA =
  'You exceeded your current quota, please check your plan and billing details. For more information on ' +
  'this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.';
const OPENROUTER_NO_CREDITS = 'Insufficient credits. Add more using https://openrouter.ai/settings/credits';

/** `POST /v1/chat/completions` as OpenAI answers it. */
/** OpenRouter's `usage.cost` on the error chunk that opens a failed stream (error-in-200 streaming). */
export const FAILED_GENERATION_COST = 0.0000125;

export const openaiCodec: Codec = createChatCodec('openai');

/** `POST /api/v1/chat/completions` as OpenRouter answers it. */
export const openrouterCodec: Codec = createChatCodec('openrouter');

// --- internal ---

function createChatCodec(provider: Exclude<Provider, 'anthropic'>): Codec {
  const openrouter = provider === 'openrouter';
  const codec: Codec = {
    provider,
    messageIdPrefix: openrouter ? 'gen-fake' : 'chatcmpl-Fake',
    toolIdPrefix: openrouter ? 'call_orfake' : 'call_Fake',
    headers: (ctx): Record<string, string> =>
      openrouter
        ? { 'x-generation-id': ctx.id }
        : { 'x-request-id': ctx.requestId, 'openai-processing-ms': '1', 'openai-version': '2020-10-01' },
    checkHeaders(headers) {
      if (/^Bearer\s+\S+/i.test(headers.get('authorization') ?? '')) return undefined;
      if (openrouter)
        return { status: 401, body: { error: { code: 401, message: 'No auth credentials found' } } };
      return {
        status: 401,
        body: { error: { message: NO_KEY, type: 'invalid_request_error', param: null, code: null } },
      };
    },
    checkBody(body) {
      if (typeof body.model !== 'string') return 'you must provide a model parameter';
      if (!Array.isArray(body.messages)) return "Missing required parameter: 'messages'.";
      if (!openrouter)
        return (
          userTooLong(body) ??
          choiceCountRefusal(body) ??
          chatPartRefusal(body) ??
          modelRefusal(body) ??
          translatorRefusal(body) ??
          chatJsonModeRefusal(body)
        );
      return openRouterClaudeRefusal(body);
    },
    readTurn: (body) => readTurn(body, openrouter),
    encodeJson: (reply, ctx) => encodeChatJson(reply, ctx, openrouter),
    encodeFrames: (reply, ctx) => encodeChatFrames(reply, ctx, openrouter),
    errorBody(status, message, ctx, named) {
      if (openrouter)
        return { error: { code: status, message: message ?? OPENAI_ERRORS[status]?.[2] ?? 'Error' } };
      const [type, code, fallback] = OPENAI_ERRORS[status] ?? ['server_error', null, 'Error'];
      const text = message ?? (status === 404 ? `The model \`${ctx.model}\` does not exist.` : fallback);
      // a refusal naming its field (BodyRefusal) sets param and code
      return { error: { message: text, type, param: null, code, ...named } };
    },
    ...(openrouter
      ? { errorIn200Body: (status, message, ctx) => codec.errorBody(status, message, ctx) }
      : {}),
    spendLimit(message) {
      // wire-formats §3: OpenRouter answers 402 for missing credits
      if (openrouter)
        return { status: 402, body: { error: { code: 402, message: message ?? OPENROUTER_NO_CREDITS } } };
      // wire-formats §2.8: a 429 like a rate limit, told apart only by type/code insufficient_quota
      const error = {
        message: message ?? QUOTA,
        type: 'insufficient_quota',
        param: null,
        code: 'insufficient_quota',
      };
      return { status: 429, body: { error } };
    },
    malformedFrame(ctx) {
      return `data: {"id":"${ctx.id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"\n\n`;
    },
    openTextFrame(ctx) {
      return `data: {"id":"${ctx.id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`;
    },
    errorFrame(status, ctx, sequence, message) {
      if (!openrouter) return sseFrame(codec.errorBody(status, message, ctx));
      // wire-formats §3: a chunk with a top-level error and finish_reason "error", then the stream ends. As
      // the first chunk (error-in-200) it states the usage of the prompt the failed generation read, and
      // its cost (FAILED_GENERATION_COST).
      const prompt = billedInputTokens('openai', ctx.body ?? {});
      const usage = {
        prompt_tokens: prompt,
        completion_tokens: 0,
        total_tokens: prompt,
        cost: FAILED_GENERATION_COST,
      };
      return sseFrame({
        id: ctx.id,
        object: 'chat.completion.chunk',
        created: ctx.created,
        model: ctx.model,
        provider: 'FakeProvider',
        error: { code: status, message: message ?? OPENAI_ERRORS[status]?.[2] ?? 'Error' },
        choices: [
          { index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error' },
        ],
        ...(sequence === 0 ? { usage } : {}),
      });
    },
    modelsList(models) {
      if (openrouter) return { data: models.map((id) => ({ id, name: id, created: 1767225600 })) };
      const data = models.map((id) => ({
        id,
        object: 'model',
        created: 1767225600,
        owned_by: 'fake-provider',
      }));
      return { object: 'list', data };
    },
  };
  return codec;
}

type Message = { role?: string; content?: unknown };
type Part = { type?: string; text?: string; image_url?: { url?: string } };

function readTurn(body: Record<string, unknown>, openrouter: boolean): Turn {
  const messages = body.messages as Message[];
  const lastAssistant = messages.findLastIndex((m) => m.role === 'assistant');
  const texts: string[] = [];
  const toolResults: string[] = [];
  for (const message of messages.slice(lastAssistant + 1)) {
    if (message.role !== 'user' && message.role !== 'tool') continue;
    const text = partsOf(message.content)
      .filter((p) => p.type === 'text')
      .map((p) => p.text)
      .join('');
    texts.push(text);
    if (message.role === 'tool') toolResults.push(text);
  }
  const choice = body.tool_choice as string | { type?: string; function?: { name?: string } } | undefined;
  const tools = Array.isArray(body.tools)
    ? (body.tools as { function?: { name?: string; parameters?: unknown } }[])
    : [];
  const reasoning = body.reasoning as { enabled?: boolean } | undefined;
  const effort = body.reasoning_effort;
  const streamOptions = (body.stream_options ?? {}) as { include_usage?: boolean };
  return {
    model: body.model as string,
    stream: body.stream === true,
    // wire-formats §3: OpenRouter always sends usage; OpenAI only when asked.
    includeUsage: openrouter || streamOptions.include_usage === true,
    turnText: texts.join('\n'),
    tools: tools
      .filter((t) => typeof t.function?.name === 'string')
      .map((t) => ({ name: t.function!.name!, schema: t.function!.parameters })),
    toolResults,
    images: messages.flatMap((m) => partsOf(m.content).flatMap(imageOf)),
    forcedTool:
      choice === 'required'
        ? true
        : typeof choice === 'object' && choice.type === 'function'
          ? choice.function?.name
          : undefined,
    toolChoiceNone: choice === 'none',
    singleToolCall: body.parallel_tool_calls === false,
    stopSequences: stringsOf(typeof body.stop === 'string' ? [body.stop] : body.stop),
    thinkingRequested:
      (reasoning !== undefined && reasoning.enabled !== false) ||
      (typeof effort === 'string' && effort !== 'none'),
    inputTokens: billedInputTokens('openai', body),
    outputSchema: outputSchemaOf(body.response_format),
  };
}

function partsOf(content: unknown): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Part[]) : [];
}

function imageOf(part: Part): string[] {
  if (part.type !== 'image_url') return [];
  const url = part.image_url?.url ?? '';
  const dataUrl = /^data:([^;,]+)[;,]/.exec(url);
  return [dataUrl ? dataUrl[1] : 'url'];
}

/**
 * OpenAI's 400s that bite translators (wire-formats §2.2–2.4, §6 #15/#16): a `tool` message that answers no
 * `tool_calls` of the assistant message before its run of tool messages, an assistant's tool call left
 * unanswered before the next other message, an image in a message of another role than `user` (a `tool`
 * message is text only), more than 4 `stop` sequences.
 */
function translatorRefusal(body: Record<string, unknown>): string | undefined {
  const messages = body.messages as {
    role?: string;
    content?: unknown;
    tool_calls?: { id?: string }[];
    tool_call_id?: string;
  }[];
  let open = new Set<string>();
  let inRun = false;
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      if (!inRun || !open.has(String(m.tool_call_id)))
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      open.delete(String(m.tool_call_id));
    }
    if (m.role !== 'user' && partsOf(m.content).some((p) => p.type === 'image_url'))
      return `Invalid 'messages[${i}]'. Image URLs are only allowed for messages with role 'user', but this message with role '${m.role}' contains an image URL.`;
    if (m.role === 'tool') continue;
    if (open.size > 0)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`;
    inRun = m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
    open = new Set(inRun ? m.tool_calls!.map((c) => String(c.id)) : []);
  }
  if (Array.isArray(body.stop) && body.stop.length > 4)
    return `Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length ${body.stop.length} instead.`;
  return undefined;
}

/**
 * OpenAI takes `n` (choices to generate) from 1 to 128 and refuses any other value with a 400 naming it; the
 * fake generated 1e308 choices (a 500, or a stream that never ended).
 */
function choiceCountRefusal(body: Record<string, unknown>): BodyRefusal | undefined {
  const n = body.n;
  if (n == null) return undefined;
  if (typeof n !== 'number' || !Number.isInteger(n))
    return {
      message: `Invalid type for 'n': expected an integer, but got ${typeof n === 'number' ? 'a decimal number' : `a ${typeof n}`} instead.`,
      param: 'n',
      code: 'invalid_type',
    };
  if (n < 1)
    return {
      message: `Invalid 'n': integer below minimum value. Expected a value >= 1, but got ${n} instead.`,
      param: 'n',
      code: 'integer_below_min_value',
    };
  if (n > 128)
    return {
      message: `Invalid 'n': integer above maximum value. Expected a value <= 128, but got ${n} instead.`,
      param: 'n',
      code: 'integer_above_max_value',
    };
  return undefined;
}

/**
 * OpenAI refuses a `user` or `safety_identifier` longer than 64 characters (a 400 `string_above_max_length`;
 * Claude Code's metadata.user_id is a 150-character JSON object).
 */
export function userTooLong(body: Record<string, unknown>): string | undefined {
  for (const field of ['user', 'safety_identifier']) {
    const value = body[field];
    if (typeof value === 'string' && value.length > 64)
      return `Invalid '${field}': string too long. Expected a string with maximum length 64, but got a string with length ${value.length} instead.`;
  }
  return undefined;
}

/**
 * What OpenAI refuses of a model by its kind (wire-formats §2.2; the API's own messages): `reasoning_effort`
 * on a chat model that does not reason (gpt-4.1, gpt-4o, gpt-5-chat-latest; isChatModelName); on its reasoning models (o-series,
 * gpt-5 and later) `max_tokens`, `stop`, `logprobs`, a temperature or top_p but the default 1, and an effort
 * the model does not take (none on gpt-5, -mini, -nano and the o-series, minimal from gpt-5.1 on, xhigh before
 * gpt-5.2, only high on gpt-5-pro, only medium on the chat snapshots from gpt-5.1 on).
 */
function modelRefusal(body: Record<string, unknown>): string | undefined {
  const model = String(body.model);
  const effort = body.reasoning_effort;
  if (isChatModelName(model) && effort != null)
    return 'Unrecognized request argument supplied: reasoning_effort';
  if (!isReasoningName(model)) return undefined;
  for (const field of ['max_tokens', 'stop', 'logprobs'])
    if (body[field] != null && body[field] !== false)
      return `Unsupported parameter: '${field}' is not supported with this model.${field === 'max_tokens' ? " Use 'max_completion_tokens' instead." : ''}`;
  for (const field of ['temperature', 'top_p'])
    if (body[field] != null && body[field] !== 1)
      return `Unsupported value: '${field}' does not support ${String(body[field])} with this model. Only the default (1) value is supported.`;
  return effortRefusal(model, effort, 'reasoning_effort');
}

/**
 * OpenAI's chat models that do not reason, by name (gpt-4.1, gpt-4o, gpt-3.5, gpt-5-chat-latest); a name of
 * neither kind (a test's `gpt-x`) is held to neither's rules.
 */
export function isChatModelName(model: string): boolean {
  return /^(gpt-4|gpt-3\.5|chatgpt-|gpt-5-chat)/i.test(model);
}

/** OpenAI's reasoning models by name: the o-series, gpt-5 and later but ChatGPT's gpt-5-chat-latest. */
export function isReasoningName(model: string): boolean {
  return /^(o\d|gpt-(5|[6-9]))/i.test(model) && !/^gpt-5-chat/i.test(model);
}

/** The API's 400 for an effort the reasoning model does not take (`param` names the field as sent). */
export function effortRefusal(model: string, effort: unknown, param: string): string | undefined {
  const taken = effortsTaken(model);
  if (typeof effort !== 'string' || taken.includes(effort)) return undefined;
  return `Unsupported value: '${param}' does not support '${effort}' with this model. Supported values are: ${taken.map((e) => `'${e}'`).join(', ')}.`;
}

function effortsTaken(model: string): string[] {
  if (/^gpt-5-pro/i.test(model)) return ['high'];
  if (/^gpt-\d+\.\d+-chat/i.test(model)) return ['medium'];
  if (/codex|^o\d/i.test(model)) return ['low', 'medium', 'high'];
  if (/^gpt-5(?![.\d])/i.test(model)) return ['minimal', 'low', 'medium', 'high'];
  if (/^gpt-5\.1(?!\d)/i.test(model)) return ['none', 'low', 'medium', 'high'];
  // GPT-6.2 Sol's model page: the API rejects reasoning effort none
  if (/^gpt-6\.2-sol/i.test(model)) return ['low', 'medium', 'high', 'xhigh', 'max'];
  return ['none', 'low', 'medium', 'high', 'xhigh'];
}

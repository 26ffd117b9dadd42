/**
 * @module Request parameters a translation has no equivalent for and that change no answer's shape: the
 * translated call leaves them out and says so (wire-formats §5.1 last row: "drop with a warning header/log")
 * in the `svc-dropped-params` response header and the request log line. What would change the answer's shape
 * (log probabilities, audio output, n > 1, MCP servers) is a 400 instead (the adapters' encoders).
 * Fields that only steer one provider's own storage or caching (`store`, `metadata`, `prompt_cache_key`) are
 * left out without a word; on the same wire every field is forwarded as sent, but for a body written for another
 * Claude model (fittedDroppedParams).
 */
import { type FitTo, fitLeftOut, samplingLeftOut } from '../adapters/anthropic/fit-model.ts';
import {
  refusesForcedToolChoice,
  refusesThinkingOffAt,
  takesThinking,
  thinkingAlwaysOn,
} from '../adapters/anthropic/model-facts.ts';
import type { AdapterName } from '../adapters/names.ts';
import { isReasoningModel, takesDefaultSamplingOnly } from '../adapters/openai/model-facts.ts';
import type { InboundShape } from '../events/catalog.ts';
import { breakpointsLeftOut } from './shapes/cache-breakpoints.ts';
import { KNOWN_FIELDS, TRANSLATION_HANDLED_FIELDS } from './shapes/responses/schema.ts';
import { expandedItemNames } from './shapes/responses/stored-responses.ts';
import { runsWebSearch, webSearchLeftOut } from './shapes/web-search.ts';

/** Response header listing the request parameters a translated call was sent without. */
export const DROPPED_PARAMS_HEADER = 'svc-dropped-params';

/** OpenAI sampling and serving knobs the Messages API does not take (Chat Completions). */
const CHAT_NOT_FOR_CLAUDE = [
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
  'service_tier',
  'prediction',
  'verbosity',
] as const;

/**
 * Anthropic sampling and serving knobs the Chat Completions API of OpenAI does not take, and its server-side
 * context editing (`context_management`: Claude Code's clearing of old tool results), which no other wire does.
 */
const MESSAGES_NOT_FOR_OPENAI = [
  'top_k',
  'service_tier',
  'inference_geo',
  'speed',
  'context_management',
] as const;

/**
 * Per inbound shape, per adapter of another wire: the parameters left out (dotted for nested fields). The
 * Responses API shares `service_tier` and (under `text`) `verbosity` with Chat Completions; its `truncation`
 * and `prompt_cache_options.prewarm` (write the cache, answer nothing) have no form elsewhere; the rest of
 * `prompt_cache_options` (the lifetime, an implicit breakpoint) changes nothing a breakpoint translates to.
 */
const NOT_TRANSLATED: Record<InboundShape, Partial<Record<AdapterName, readonly string[]>>> = {
  openai: { anthropic: CHAT_NOT_FOR_CLAUDE },
  openai_responses: {
    anthropic: ['service_tier', 'text.verbosity', 'truncation', 'prompt_cache_options.prewarm'],
    openrouter: ['service_tier', 'text.verbosity', 'truncation', 'prompt_cache_options.prewarm'],
  },
  anthropic: {
    openai: MESSAGES_NOT_FOR_OPENAI,
    // OpenRouter takes top_k
    openrouter: MESSAGES_NOT_FOR_OPENAI.filter((name) => name !== 'top_k'),
  },
};

/**
 * Whether `value` asks for what every translated call does anyway, so leaving it out changes nothing: the
 * Responses API's `truncation: "disabled"` (its default; `"auto"` would drop earlier items rather than overflow
 * the context window, which no other wire does for the gateway), and a `context_management` whose edits only
 * keep every thinking block (`clear_thinking_…` with `keep: "all"`, which Claude Code sends on every request).
 */
function alreadySo(name: string, value: unknown): boolean {
  if (name === 'truncation') return value === 'disabled';
  if (name === 'prompt_cache_options.prewarm') return value === false;
  if (name !== 'context_management') return false;
  const edits = (value as { edits?: unknown } | null)?.edits;
  return (
    Array.isArray(edits) &&
    edits.every((e: { type?: unknown; keep?: unknown } | null) => {
      return typeof e?.type === 'string' && e.type.startsWith('clear_thinking_') && e.keep === 'all';
    })
  );
}

/**
 * The parameters of a translated `body` (of `shape`) that a call to `model` on `adapter` is sent without: those
 * the other wire has no form of, and the sampling or reasoning the model itself refuses (samplingRefused,
 * reasoningRefused). `whole`: `body` with the gateway's kept turns spelled out (a Responses follow-up), whose
 * earlier breakpoints count toward the Messages API's four.
 */
export function droppedParams(
  body: Record<string, unknown>,
  shape: InboundShape,
  adapter: AdapterName,
  model?: string,
  whole: Record<string, unknown> = body,
): string[] {
  const unknown = (NOT_TRANSLATED[shape][adapter] ?? []).filter((name) => {
    const value = valueAt(body, name);
    return value != null && !alreadySo(name, value);
  });
  const refused =
    model === undefined
      ? []
      : [
          ...samplingRefused(body, adapter, model),
          ...reasoningRefused(body, adapter, model),
          ...thinkingRefused(body, shape, adapter, model),
          ...newerClaudeRefused(body, shape, adapter, model),
        ];
  const newer = shape === 'openai_responses' ? newerResponsesFields(body) : [];
  const search = runsWebSearch(adapter) ? webSearchLeftOut(body, shape) : [];
  // more cache breakpoints than the Messages API takes: the earliest are left out (cache-breakpoints.ts), those
  // of a follow-up's earlier turns (`whole`, what the gateway spells out) among them
  const breakpoints = shape === 'anthropic' ? [] : breakpointsLeftOut(whole, shape, expandedItemNames(whole));
  const citations = shape === 'anthropic' && adapter !== 'anthropic' ? citationsLeftOut(body) : [];
  return [
    ...unknown,
    ...newer,
    ...search,
    ...breakpoints,
    ...citations,
    ...refused.filter((name) => !unknown.includes(name)),
  ];
}

/**
 * An Anthropic request's documents and search results that ask for citations (`citations: {enabled: true}`),
 * in a message or a tool result: the OpenAI wire has no citations of a document, so the model reads the
 * document (request-messages.ts documentParts) and cites nothing.
 */
function citationsLeftOut(body: Record<string, unknown>): string[] {
  const names: string[] = [];
  const visit = (blocks: unknown, at: string) => {
    if (!Array.isArray(blocks)) return;
    blocks.forEach(
      (block: { type?: unknown; content?: unknown; citations?: { enabled?: unknown } } | null, i) => {
        if (block?.type === 'tool_result') visit(block.content, `${at}.${i}.content`);
        else if (
          (block?.type === 'document' || block?.type === 'search_result') &&
          block.citations?.enabled === true
        )
          names.push(`${at}.${i}.citations`);
      },
    );
  };
  if (Array.isArray(body.messages))
    for (const [n, m] of (body.messages as Array<{ content?: unknown } | null>).entries())
      visit(m?.content, `messages.${n}.content`);
  return names;
}

/** A Responses request's top-level fields no step of a translation knows (newer than this gateway). */
function newerResponsesFields(body: Record<string, unknown>): string[] {
  return Object.keys(body).filter(
    (name) => body[name] != null && !KNOWN_FIELDS.has(name) && !TRANSLATION_HANDLED_FIELDS.has(name),
  );
}

/**
 * On the same wire, what a body written for another Claude model than the routed one loses when it is fitted
 * to that one (`fitTo`: fitTarget; adapters/anthropic/fit-model.ts): thinking the model does not take, an effort
 * no thinking budget carries on a model without effort, and sampling a model after Opus 4.6 refuses. POST
 * /v1/messages and count_tokens name it alike.
 */
export function fittedDroppedParams(
  body: Record<string, unknown>,
  upstreamModel: string,
  fitTo: FitTo | undefined,
): string[] {
  return fitTo ? fitLeftOut(body, upstreamModel, fitTo) : [];
}

/**
 * Sampling a model refuses with a 400, which its adapter leaves out (the encoders' rules): OpenAI's own reasoning
 * models (o-series, gpt-5 and later; gpt-oss takes sampling) take temperature and top_p only at 1, and a Claude
 * model after Opus 4.6 temperature 1 (a higher one is clamped to it), top_p from 0.99 and no top_k. What is
 * left out beside thinking or for the temperature and top_p pair is not named (README says so).
 */
function samplingRefused(body: Record<string, unknown>, adapter: AdapterName, model: string): string[] {
  const { temperature, top_p: topP } = body;
  if (adapter === 'openai' && takesDefaultSamplingOnly(model))
    return [
      ...(typeof temperature === 'number' && temperature !== 1 ? ['temperature'] : []),
      ...(typeof topP === 'number' && topP !== 1 ? ['top_p'] : []),
    ];
  if (adapter === 'anthropic') return samplingLeftOut(body, model);
  return [];
}

/**
 * An Anthropic request's thinking to an OpenAI chat model that does not reason (gpt-4.1, gpt-4o,
 * gpt-5-chat-latest), which refuses reasoning_effort: `thinking` turned on and `output_config.effort` are left
 * out (Claude Code asks for thinking on every call).
 */
function reasoningRefused(body: Record<string, unknown>, adapter: AdapterName, model: string): string[] {
  if (adapter !== 'openai' || isReasoningModel(model)) return [];
  const thinking = (body.thinking as { type?: unknown } | null | undefined)?.type;
  return [
    ...(thinking === 'enabled' || thinking === 'adaptive' ? ['thinking'] : []),
    ...(valueAt(body, 'output_config.effort') != null ? ['output_config.effort'] : []),
  ];
}

/** An OpenAI client's reasoning effort to a Claude 3 or 3.5 model, which has no extended thinking: left out. */
function thinkingRefused(
  body: Record<string, unknown>,
  shape: InboundShape,
  adapter: AdapterName,
  model: string,
): string[] {
  if (adapter !== 'anthropic' || takesThinking(model)) return [];
  const name =
    shape === 'openai' ? 'reasoning_effort' : shape === 'openai_responses' ? 'reasoning.effort' : undefined;
  const effort = name === undefined ? undefined : valueAt(body, name);
  return effort != null && effort !== 'none' ? [name!] : [];
}

/**
 * What Claude Opus 5.5, Sonnet 5.5 and Fable 5.1 refuse of an OpenAI client's request, which the encoder changes
 * (request.ts): a forced tool choice (`required`, a named function) goes as `auto`; reasoning turned off
 * (`reasoning_effort: "none"`, OpenRouter's `reasoning: {enabled: false}`) on Opus 5.5 and Fable 5.1, which always
 * think, goes without it, and so does OpenRouter's turned off beside an effort of `xhigh` or `max` on Sonnet 5.5
 * and Haiku 5.5, which refuse thinking turned off (between_tools, disabled) at those efforts.
 */
function newerClaudeRefused(
  body: Record<string, unknown>,
  shape: InboundShape,
  adapter: AdapterName,
  model: string,
): string[] {
  if (adapter !== 'anthropic' || shape === 'anthropic') return [];
  type Choice = { type?: unknown; mode?: unknown; allowed_tools?: { mode?: unknown } };
  const choice = body.tool_choice as Choice | string | null | undefined;
  // allowed_tools' mode: Chat Completions nests it, the Responses API does not
  const mode = typeof choice === 'object' ? (choice?.mode ?? choice?.allowed_tools?.mode) : undefined;
  const forced =
    choice === 'required' ||
    (typeof choice === 'object' &&
      choice !== null &&
      (choice.type === 'allowed_tools' ? mode === 'required' : choice.type !== undefined));
  const name = shape === 'openai' ? 'reasoning_effort' : 'reasoning.effort';
  return [
    ...(forced && refusesForcedToolChoice(model) ? ['tool_choice'] : []),
    ...(valueAt(body, name) === 'none' && thinkingAlwaysOn(model) ? [name] : []),
    ...(shape === 'openai' && offLeftOut(body, model) ? ['reasoning.enabled'] : []),
  ];
}

/**
 * Whether a Chat Completions body's OpenRouter `reasoning: {enabled: false}` (no budget, which wins) goes without
 * thinking turned off: on a model that always thinks, or on Sonnet 5.5 and Haiku 5.5 at an effort that refuses it.
 */
function offLeftOut(body: Record<string, unknown>, model: string): boolean {
  if (valueAt(body, 'reasoning.enabled') !== false || valueAt(body, 'reasoning.max_tokens') !== undefined)
    return false;
  const effort = body.reasoning_effort ?? valueAt(body, 'reasoning.effort');
  return thinkingAlwaysOn(model) || refusesThinkingOffAt(model, effort);
}

function valueAt(body: Record<string, unknown>, path: string): unknown {
  let value: unknown = body;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

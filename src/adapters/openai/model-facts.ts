/**
 * @module What an OpenAI model takes, read off its name: reasoning models (`reasoning_effort`, default sampling
 * only, no `stop`), the efforts each takes, an Anthropic thinking budget as an effort, and strict-mode schemas.
 */
import { REASONING_EFFORTS, type ReasoningEffort, type ThinkingConfig } from '../../canonical/request.ts';

/**
 * The least reasoning an OpenAI reasoning model takes: `none` from gpt-5.1 on (its default), `minimal` on
 * gpt-5, gpt-5-mini and gpt-5-nano (which refuse `none`), `low` on the o-series, codex and gpt-oss models;
 * none at all for a model that takes one effort only (gpt-5-pro, the chat snapshots from gpt-5.1 on).
 */
export function lowestEffort(model: string): ReasoningEffort | undefined {
  const taken = effortsOf(model);
  if (taken?.length === 1) return undefined;
  return taken?.[0] ?? 'none';
}

/**
 * The efforts a reasoning model takes, lowest first (any other is a 400 `unsupported_value`): `high` only on
 * gpt-5-pro, `medium` only on the chat snapshots from gpt-5.1 on (`gpt-5.1-chat-latest`), low to high on the
 * o-series, codex and gpt-oss models, minimal to high on gpt-5, -mini and -nano, none to high on gpt-5.1,
 * none to xhigh on gpt-5.2, low to max on gpt-6.2-sol (its model page: the API rejects effort none); undefined
 * (every effort, as asked) for other later models.
 */
export function effortsOf(model: string): readonly ReasoningEffort[] | undefined {
  if (/^gpt-5-pro/i.test(model)) return ['high'];
  if (/^gpt-\d+\.\d+-chat/i.test(model)) return ['medium'];
  if (/codex|^o\d|^gpt-oss/i.test(model)) return ['low', 'medium', 'high'];
  if (/^gpt-5(?![.\d])/i.test(model)) return ['minimal', 'low', 'medium', 'high'];
  if (/^gpt-5\.1(?!\d)/i.test(model)) return ['none', 'low', 'medium', 'high'];
  if (/^gpt-5\.2(?!\d)/i.test(model)) return ['none', 'low', 'medium', 'high', 'xhigh'];
  if (/^gpt-6\.2-sol/i.test(model)) return ['low', 'medium', 'high', 'xhigh', 'max'];
  return undefined;
}

/**
 * The reasoning summary `model` writes for `summary`: gpt-5, -mini and -nano write detailed ones only, and refuse
 * `concise` with a 400 unsupported_value ("Supported values are: 'detailed'", openai/codex#2376); other models
 * as asked.
 */
export function fitSummary(model: string, summary: string): string {
  return summary === 'concise' && /^gpt-5(?![.\d])/i.test(model) && isReasoningModel(model)
    ? 'detailed'
    : summary;
}

/**
 * Whether `model` takes the Responses API's `reasoning.context` (which earlier turns' reasoning it reads: auto,
 * all_turns, current_turn), which only GPT-5.6 and later take: the earlier GPT models and the o-series refuse
 * it with a 400 (Unsupported parameter: 'reasoning.context' is not supported with this model.). Codex sends
 * all_turns to its default model, which a native-name rule sends to gpt-5. A name of no known family takes it.
 */
export function takesReasoningContext(model: string): boolean {
  const gpt = /^gpt-(\d+)(?:\.(\d+))?/i.exec(model);
  if (gpt) return Number(gpt[1]) > 5 || (Number(gpt[1]) === 5 && Number(gpt[2] ?? 0) >= 6);
  return !/^(o\d|codex|chatgpt)/i.test(model);
}

/**
 * `effort` as `model` takes it: the nearest effort it takes, the higher of two as near (Claude's `max` is
 * gpt-5's `high`, `low` is gpt-5-pro's `high`).
 */
export function fitEffort(model: string, effort: ReasoningEffort): ReasoningEffort {
  const taken = effortsOf(model);
  if (!taken || taken.includes(effort)) return effort;
  const at = REASONING_EFFORTS.indexOf(effort);
  const distance = (e: ReasoningEffort) => Math.abs(REASONING_EFFORTS.indexOf(e) - at);
  return taken.reduce((best, e) => (distance(e) <= distance(best) ? e : best));
}

/** Anthropic-style budget → OpenAI effort (choice: <4k low, <16k medium, else high). */
export function effortFromThinking(t: ThinkingConfig | undefined): ReasoningEffort | undefined {
  if (t?.type !== 'enabled' || t.budget_tokens === undefined) return undefined;
  return t.budget_tokens < 4096 ? 'low' : t.budget_tokens < 16384 ? 'medium' : 'high';
}

/**
 * OpenAI's reasoning models (o-series, gpt-5 and later, gpt-oss, codex), which take reasoning_effort and only the
 * default temperature and top_p; the chat models that refuse reasoning (refusesReasoning: gpt-4.1, gpt-4o, and
 * `gpt-5-chat-latest`, ChatGPT's GPT-5 without reasoning) take sampling as asked.
 */
export function isReasoningModel(model: string): boolean {
  return /^(o\d|gpt-(5|[6-9])|gpt-oss|codex)/i.test(model) && !refusesReasoning(model);
}

/**
 * OpenAI's chat models that do not reason (gpt-4.1, gpt-4o and the rest of GPT-4 and 3.5, chatgpt-4o-latest,
 * gpt-5-chat-latest), which refuse any reasoning option with a 400; a name of neither kind (a local server's
 * model) is neither.
 */
export function refusesReasoning(model: string): boolean {
  return /^(gpt-4|gpt-3\.5|chatgpt-|gpt-5-chat)/i.test(model);
}

/**
 * OpenAI's own reasoning models (all but gpt-oss, which other servers run and which takes what a chat model
 * takes): only the default temperature and top_p, no `stop`, and `max_completion_tokens` instead of
 * `max_tokens`.
 */
export function takesDefaultSamplingOnly(model: string): boolean {
  return isReasoningModel(model) && !/^gpt-oss/i.test(model);
}

/**
 * Whether OpenAI's strict mode accepts `schema`: every object lists all its properties as required and
 * says additionalProperties: false, nested objects and array items included.
 */
export function qualifiesForStrict(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return true;
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.anyOf) && !s.anyOf.every(qualifiesForStrict)) return false;
  if (s.items !== undefined && !qualifiesForStrict(s.items)) return false;
  for (const defs of [s.$defs, s.definitions])
    if (defs && typeof defs === 'object' && !Object.values(defs).every(qualifiesForStrict)) return false;
  const props = s.properties as Record<string, unknown> | undefined;
  if (s.type !== 'object' && props === undefined) return true;
  if (s.additionalProperties !== false) return false;
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  return Object.entries(props ?? {}).every(([k, v]) => required.has(k) && qualifiesForStrict(v));
}

/**
 * @module What an OpenAI model takes, read off its name: reasoning models (`reasoning_effort`, default sampling
 * only), the least reasoning each takes, an Anthropic thinking budget as an effort, and strict-mode schemas.
 */
import type { ReasoningEffort, ThinkingConfig } from '../../canonical/request.ts';

/**
 * The least reasoning an OpenAI reasoning model takes: `none` from gpt-5.1 on (its default), `minimal` on
 * gpt-5, gpt-5-mini and gpt-5-nano (which refuse `none`), `low` on the o-series, codex and gpt-oss models;
 * none at all for gpt-5-pro, which takes only `high`.
 */
export function lowestEffort(model: string): ReasoningEffort | undefined {
  if (/^gpt-5-pro/i.test(model)) return undefined;
  if (/codex|^o\d|^gpt-oss/i.test(model)) return 'low';
  if (/^gpt-5(?![.\d])/i.test(model)) return 'minimal';
  return 'none';
}

/** Anthropic-style budget → OpenAI effort (choice: <4k low, <16k medium, else high). */
export function effortFromThinking(t: ThinkingConfig | undefined): ReasoningEffort | undefined {
  if (t?.type !== 'enabled' || t.budget_tokens === undefined) return undefined;
  return t.budget_tokens < 4096 ? 'low' : t.budget_tokens < 16384 ? 'medium' : 'high';
}

/**
 * OpenAI's reasoning models (o-series, gpt-5 and later, gpt-oss, codex), which take reasoning_effort and only the
 * default temperature and top_p; other chat models (gpt-4.1, gpt-4o) refuse reasoning_effort.
 */
export function isReasoningModel(model: string): boolean {
  return /^(o\d|gpt-(5|[6-9])|gpt-oss|codex)/i.test(model);
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

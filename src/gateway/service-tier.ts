/**
 * @module The paid service tier a same-wire request asks for: OpenAI's `service_tier` (`"priority"` costs
 * about twice the standard rates, `"flex"` about half) on Chat Completions and Responses, Anthropic's fast mode
 * (`speed: "fast"`) on Messages. A call runs at the tier the routed model has prices for in models.yaml
 * (`service_tiers`), and its hold and bill use them (models/pricing.ts); a tier the model has no prices for is
 * never run unpriced: the field is left out (the standard tier) and named in svc-dropped-params. Values that
 * ask for no paid tier (`auto`, `default`, `standard`, `standard_only`) pass as sent. A translated request never
 * carries a tier (dropped-params.ts names the field). Anthropic runs a request on the organisation's Priority
 * Tier capacity unless it says `service_tier: "standard_only"` (`auto` is the default, a translated request's
 * too), and the answer's `usage.service_tier` says where it ran; OpenAI runs a request without `service_tier` (or
 * `auto`, a translated request's too) at the project's default tier, which can be priority, and its answer's
 * `service_tier` says which. On a model with `priority` prices such a request is held at their worst case; the
 * bill follows the answer.
 */
import type { AdapterName } from '../adapters/names.ts';
import type { InboundShape } from '../events/catalog.ts';
import type { ModelEntry } from '../models/model-schema.ts';
import { tierPrices } from '../models/pricing.ts';

export interface AskedTier {
  /** The priced tier the call runs at (its wire value), absent for the standard tier. */
  tier?: string;
  /** The request field left out (a tier the model has no prices for): none, or the one field. */
  leftOut: readonly string[];
  /** The priced tier the budget hold reserves for: `tier`, or one the provider may choose (Anthropic `auto`). */
  hold?: string;
}

/** The field that asks for a tier, per inbound shape. */
const TIER_FIELD: Readonly<Record<InboundShape, string>> = {
  openai: 'service_tier',
  openai_responses: 'service_tier',
  anthropic: 'speed',
};

/** Values asking for no paid tier: sent as they are. */
const NO_PAID_TIER = new Set(['auto', 'default', 'standard', 'standard_only']);

const STANDARD: AskedTier = { leftOut: [] };

/**
 * What `body` of `shape` asks for, on `model`: the priced tier, or the field to leave out (same wire only), and
 * the tier the hold reserves for.
 */
export function askedServiceTier(
  shape: InboundShape,
  body: Record<string, unknown>,
  model: ModelEntry,
  sameWire: boolean,
): AskedTier {
  const asked = sameWire ? explicitTier(body[TIER_FIELD[shape]], TIER_FIELD[shape], model) : STANDARD;
  if (asked.tier || !tierPrices(model, 'priority')) return asked;
  // the service_tier the provider gets: none when translated or left out
  const sent = sameWire && !asked.leftOut.includes('service_tier') ? body.service_tier : undefined;
  return mayRunAtPriority(model.adapter, sent) ? { ...asked, hold: 'priority' } : asked;
}

/**
 * Whether a request sending `sent` as its service_tier may run at the priority tier without asking for it:
 * Anthropic runs `auto` (its default) on the organisation's Priority Tier capacity unless `standard_only`;
 * OpenAI runs `auto` (its default, also for none or null) at the project's default tier, which can be priority,
 * unless `default`.
 */
function mayRunAtPriority(adapter: AdapterName, sent: unknown): boolean {
  if (adapter === 'anthropic') return sent !== 'standard_only';
  // null is the API's "not set" alike (the field is nullable): auto
  if (adapter === 'openai') return sent === undefined || sent === null || sent === 'auto';
  return false;
}

function explicitTier(value: unknown, field: string, model: ModelEntry): AskedTier {
  // a wrong type is the provider's 400, as sent
  if (typeof value !== 'string' || NO_PAID_TIER.has(value)) return STANDARD;
  return tierPrices(model, value) ? { tier: value, leftOut: [], hold: value } : { leftOut: [field] };
}

/** `body` without the fields `leftOut` names (a copy; `body` itself unchanged), or `body` when none. */
export function withoutTierField(
  body: Record<string, unknown>,
  leftOut: readonly string[],
): Record<string, unknown> {
  if (leftOut.length === 0) return body;
  const copy = { ...body };
  for (const name of leftOut) delete copy[name];
  return copy;
}

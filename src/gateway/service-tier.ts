/**
 * @module The paid service tier a same-wire request asks for: OpenAI's `service_tier` (`"priority"` costs
 * about twice the standard rates, `"flex"` about half) on Chat Completions and Responses, Anthropic's fast mode
 * (`speed: "fast"`) on Messages. A call runs at the tier the routed model has prices for in models.yaml
 * (`service_tiers`), and its hold and bill use them (models/pricing.ts); a tier the model has no prices for is
 * never run unpriced: the field is left out (the standard tier) and named in svc-dropped-params. Values that
 * ask for no paid tier (`auto`, `default`, `standard`, `standard_only`) pass as sent. A translated request never
 * carries a tier (dropped-params.ts names the field). Anthropic runs a request on the organisation's Priority
 * Tier capacity unless it says `service_tier: "standard_only"` (`auto` is the default, a translated request's
 * too), and the answer's `usage.service_tier` says where it ran: on a Claude model with `priority` prices the
 * hold is their worst case, the bill follows the answer.
 */
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
  if (asked.tier) return asked;
  const auto = !sameWire || body.service_tier !== 'standard_only';
  return model.adapter === 'anthropic' && auto && tierPrices(model, 'priority')
    ? { ...asked, hold: 'priority' }
    : asked;
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

/**
 * @module Closing a model call: the llm.call_completed event, its usage priced from the routed model's table
 * (loud when usage is missing or the model has no price), and the usage and price a failed call carries
 * when the provider billed it all the same. Used by llm/call.ts.
 */
import type { CanonicalUsage } from '../canonical/response.ts';
import type { Published } from '../events/bus.ts';
import type { CallActor, LlmCallCompletedPayload } from '../events/catalog.ts';
import { type CallCost, priceCall } from '../models/pricing.ts';
import type { CompleteInput, LlmCallDeps, LlmCallInput } from './call.ts';

/** The fields every llm.call_* event of one call shares. */
export interface CallBase {
  actor: CallActor;
  turn_id: string | null;
  session_id: string | null;
}

/** Closes the call with llm.call_completed, priced from the routed model's table (never a silent $0). */
export function completeCall(
  deps: LlmCallDeps,
  input: LlmCallInput,
  base: CallBase,
  startedId: string,
  attempts: number,
  latencyMs: number,
  c: CompleteInput,
): { published: Published; cost: CallCost } {
  const cost = priceCall(deps.registry, input.model.id, c.usage, undefined, input.call.serviceTier);
  const payload: LlmCallCompletedPayload = {
    ...input.attribution,
    cost_usd: cost.cost_usd,
    pricing_version: cost.pricing_version,
    input_tokens: c.usage.input_tokens,
    output_tokens: c.usage.output_tokens,
    cached_input_tokens: c.usage.cached_input_tokens,
    cache_creation_input_tokens: c.usage.cache_creation_input_tokens,
    latency_ms: latencyMs,
    ttft_ms: c.ttftMs ?? null,
    stop_reason: c.cancelled ? 'cancelled' : (c.stopReason ?? null),
    error_class: c.cancelled ? 'cancelled' : null,
    attempts,
    stream: input.stream,
    usage: { cost_usd: cost.cost_usd },
  };
  if (c.usage.reasoning_tokens !== undefined) payload.reasoning_tokens = c.usage.reasoning_tokens;
  if (c.usage.cache_creation_1h_input_tokens)
    payload.cache_creation_1h_input_tokens = c.usage.cache_creation_1h_input_tokens;
  if (c.usage.web_search_requests) payload.web_search_requests = c.usage.web_search_requests;
  if (c.usage.upstream_cost !== undefined) payload.upstream_cost_usd = c.usage.upstream_cost;
  if (cost.service_tier) payload.service_tier = cost.service_tier;
  // the call ended before the upstream said what it bills: some counts are the gateway's estimate
  if (c.usage.estimated) payload.usage_estimated = true;
  if (c.usage.missing) {
    // the upstream never said what it used (a server ignoring stream_options.include_usage): loud, not $0
    payload.usage_missing = true;
    payload.pricing_warning = 'usage_missing';
    deps.log.warn('the upstream reported no usage; tokens and cost stamped as 0', {
      model: input.model.id,
      provider: input.adapter.name,
      turn_id: input.turnId,
    });
  }
  if (!cost.priced) {
    // never a silent $0 (issue: money and budgets): a field on the event and a log line
    payload.priced = false;
    payload.pricing_warning = 'model_unpriced';
    deps.log.warn('model has no price in the model registry; cost stamped as 0', {
      model: input.model.id,
      pricing_version: cost.pricing_version,
      turn_id: input.turnId,
    });
  }
  const published = deps.bus.publish({
    ...base,
    type: 'llm.call_completed',
    parent_event_id: startedId,
    payload,
  });
  return { published, cost };
}

/** Usage and price of a call that failed after consuming tokens (the bill does not vanish with the call). */
export function spentFields(
  deps: LlmCallDeps,
  modelId: string,
  usage: CanonicalUsage,
  askedTier?: string,
): Record<string, unknown> {
  const cost = priceCall(deps.registry, modelId, usage, undefined, askedTier);
  return {
    cost_usd: cost.cost_usd,
    pricing_version: cost.pricing_version,
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cached_input_tokens: usage.cached_input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    ...(usage.cache_creation_1h_input_tokens
      ? { cache_creation_1h_input_tokens: usage.cache_creation_1h_input_tokens }
      : {}),
    ...(usage.web_search_requests ? { web_search_requests: usage.web_search_requests } : {}),
    ...(usage.upstream_cost !== undefined ? { upstream_cost_usd: usage.upstream_cost } : {}),
    ...(cost.service_tier ? { service_tier: cost.service_tier } : {}),
    ...(usage.estimated ? { usage_estimated: true } : {}),
  };
}

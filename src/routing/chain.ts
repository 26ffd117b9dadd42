/**
 * @module The seven-policy routing chain of spec 1/spec 2 as one pure engine: each slot proposes
 * a model or answers no_match, each proposal is validated (candidate.ts), the first accepted wins.
 * The result carries exactly what route.decided needs: chain, winner_index, elapsed_ms.
 */
import type { RouteChainEntry } from '../events/catalog.ts';
import { SvcError } from '../lib/errors.ts';
import type { ModelEntry } from '../models/model-schema.ts';
import { contextNeed, missingCapabilities, validateCandidate } from './candidate.ts';
import type { PolicyName, PredicateEnv, RouteContext, RouteFacts } from './facts.ts';
import type { RequestFingerprint } from './pattern/fingerprint.ts';
import type { PatternMatch } from './pattern/table.ts';
import { delegateRequest } from './policies/delegate-request.ts';
import { globalDefault } from './policies/global-default.ts';
import { manualSticky } from './policies/manual-sticky.ts';
import { pattern } from './policies/pattern.ts';
import { perMessageOverride } from './policies/per-message-override.ts';
import { rule } from './policies/rule.ts';
import { workspaceDefault } from './policies/workspace-default.ts';
import { createPredicateEnv } from './when.ts';

/** A proposal with what stands behind it: the learned evidence (slot 4) or the rule's name (slot 3). */
export interface Proposal {
  model: string;
  match?: PatternMatch;
  rule?: string;
  /** The model the request named (as SlotPolicy.explicit, for this proposal only). */
  explicit?: boolean;
}

export interface SlotPolicy {
  name: PolicyName;
  /** A canonical id (possibly unknown to the registry) to validate, or null for no_match. */
  propose(facts: RouteFacts, ctx: RouteContext, env: PredicateEnv): string | Proposal | null;
  /** A model_not_allowed rejection here ends routing with 403 instead of falling through. */
  explicit?: boolean;
}

/** The chain in spec order: per_message_override … global_default. */
export const ROUTING_CHAIN: readonly SlotPolicy[] = [
  perMessageOverride,
  manualSticky,
  rule,
  pattern,
  delegateRequest,
  workspaceDefault,
  globalDefault,
];

export interface RouteDecision {
  /** Evaluated slots in order; evaluation stops at the winner. */
  chain: RouteChainEntry[];
  /** Index of the accepted entry in `chain`, -1 when none. */
  winner_index: number;
  chosen: ModelEntry | null;
  elapsed_ms: number;
  /** When chosen is null: 403 model_not_allowed or 503 routing_failed (details.tried). */
  error: SvcError | null;
  /** The request's fingerprints, recorded on route.decided so slot 4 can learn from the trace. */
  fingerprint: RequestFingerprint;
  /** Set when slot 4 won: what pattern.matched reports. */
  pattern: PatternMatch | null;
  /** The version (SHA-256) of the routing policy that decided: route.decided and the session record it. */
  policy_version: string;
  /**
   * The routing.yaml rule slot 3 proposed from (its chain entry is the `rule` one), accepted or rejected; null
   * when slot 3 answered no_match or was not reached. route.decided carries it beside the chain, whose entries
   * keep DECISIONS §4's shape.
   */
  rule: string | null;
}

/**
 * Decides the model for one request. Never throws for a routing outcome: publish route.decided
 * from the result, then throw `decision.error` when `chosen` is null.
 */
export function resolveRoute(facts: RouteFacts, ctx: RouteContext): RouteDecision {
  const started = performance.now();
  const env = createPredicateEnv(facts, ctx);
  const chain: RouteChainEntry[] = [];
  let ruleName: string | null = null;
  for (const slot of ROUTING_CHAIN) {
    const proposal = slot.propose(facts, ctx, env);
    if (proposal === null) {
      chain.push({ policy: slot.name, model: null, verdict: 'no_match' });
      continue;
    }
    const { model, match, rule, explicit } = typeof proposal === 'string' ? { model: proposal } : proposal;
    if (rule !== undefined) ruleName = rule;
    const { entry, failure } = validateCandidate(model, facts, ctx);
    if (failure === null && entry) {
      chain.push({ policy: slot.name, model, verdict: 'accepted' });
      return decided(chain, chain.length - 1, entry, started, null, env, match ?? null, ctx, ruleName);
    }
    chain.push({ policy: slot.name, model, verdict: 'rejected', validation_failure: failure ?? undefined });
    if (failure === 'model_not_allowed' && (slot.explicit || explicit)) break;
  }
  return decided(chain, -1, null, started, routeError(chain, facts, ctx), env, null, ctx, ruleName);
}

// --- internal ---

function decided(
  chain: RouteChainEntry[],
  winnerIndex: number,
  chosen: ModelEntry | null,
  started: number,
  error: SvcError | null,
  env: PredicateEnv,
  pattern: PatternMatch | null,
  ctx: RouteContext,
  rule: string | null,
): RouteDecision {
  const fingerprint = env.fingerprint(); // part of routing's cost: counted in elapsed_ms
  const elapsed = Math.round((performance.now() - started) * 1000) / 1000;
  return {
    chain,
    winner_index: winnerIndex,
    chosen,
    elapsed_ms: elapsed,
    error,
    fingerprint,
    pattern,
    policy_version: ctx.policy.version,
    rule,
  };
}

/** 403 when any candidate was refused by allowed_models (no silent fallback), else 503. */
function routeError(chain: RouteChainEntry[], facts: RouteFacts, ctx: RouteContext): SvcError {
  const tried = chain
    .filter((e) => e.verdict === 'rejected')
    .map((e) => ({ policy: e.policy, model: e.model, reason: e.validation_failure }));
  const notAllowed = chain.find((e) => e.validation_failure === 'model_not_allowed');
  if (notAllowed)
    return new SvcError('model_not_allowed', {
      message: `model ${notAllowed.model} is not in this key's allowed_models`,
      details: { model: notAllowed.model, requested_model: facts.requestedModel, tried },
    });
  // a missing capability is named (the chain entry has no room for it); a model two slots proposed (the one a
  // request names is often the global default too) is named once
  const why = (t: (typeof tried)[number]): string | undefined => {
    const entry = t.reason === 'missing_capability' && t.model ? ctx.registry.get(t.model) : undefined;
    const lacks = entry ? missingCapabilities(entry, facts) : [];
    return lacks.length > 0 ? `${t.reason}: ${lacks.join(', ')}` : t.reason;
  };
  const list = [...new Set(tried.map((t) => `${t.model} (${why(t)})`))].join(', ');
  const usable = `no candidate model is usable${list ? `: ${list}` : ''}`;
  const tooLong = tooLongForEvery(tried, facts, ctx);
  if (tooLong === null) return new SvcError('routing_failed', { message: usable, details: { tried } });
  // every candidate is too small for this request, which no wait changes: said in the Messages API's own words
  // (Claude Code reads 'prompt is too long: N tokens > M maximum' and offers to compact; a retry of a 503 it
  // would repeat for a minute and a half), and not retryable
  return new SvcError('routing_failed', {
    message: `prompt is too long: ${tooLong.need} tokens > ${tooLong.window} maximum (the gateway's estimate of the input plus the output asked for; ${usable})`,
    details: { tried, should_retry: false },
  });
}

/** The largest window of the candidates when each was refused context_too_small, else null. */
function tooLongForEvery(
  tried: Array<{ model: string | null; reason: string | undefined }>,
  facts: RouteFacts,
  ctx: RouteContext,
): { need: number; window: number } | null {
  let largest: { need: number; window: number } | null = null;
  for (const t of tried) {
    const entry = t.reason === 'context_too_small' && t.model ? ctx.registry.get(t.model) : undefined;
    if (!entry) return null;
    const fit = contextNeed(entry, facts);
    if (largest === null || fit.window > largest.window) largest = fit;
  }
  return largest;
}

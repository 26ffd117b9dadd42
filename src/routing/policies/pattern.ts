/**
 * @module Slot 4: learned routing (README §Learned routing). When routing.yaml enables it and the host
 * installed the pattern hook (routing/pattern/router.ts), proposes the model its table learned for this
 * request's fingerprint. Never for a request that names a canonical id or alias: that choice is the
 * client's (slot 1), even when slot 1 rejected it.
 */
import { resolveExplicitRef, resolveRequestedRef } from '../candidate.ts';
import type { SlotPolicy } from '../chain.ts';

export const pattern: SlotPolicy = {
  name: 'pattern',
  propose(facts, ctx, env) {
    if (!ctx.policy.pattern.enabled || !ctx.hooks?.pattern) return null;
    if (facts.requestedModel !== null && resolveRequestedRef(facts.requestedModel, ctx) !== null) return null;
    const match = ctx.hooks.pattern(facts, env.fingerprint());
    return match ? { model: resolveExplicitRef(match.model, ctx), match } : null;
  },
};

/**
 * @module Slot 4: learned patterns. Reserved in v1: answers no_match unless routing.yaml sets
 * `pattern.enabled: true` and the host installed a pattern hook.
 */
import { resolveExplicitRef } from '../candidate.ts';
import type { SlotPolicy } from '../chain.ts';

export const pattern: SlotPolicy = {
  name: 'pattern',
  propose(facts, ctx) {
    if (!ctx.policy.patternEnabled || !ctx.hooks?.pattern) return null;
    const ref = ctx.hooks.pattern(facts);
    return ref ? resolveExplicitRef(ref, ctx) : null;
  },
};

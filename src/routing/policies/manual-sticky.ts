/** @module Slot 2: the model a user pinned on an agent session; no_match for gateway traffic. */
import { resolveExplicitRef } from '../candidate.ts';
import type { SlotPolicy } from '../chain.ts';

export const manualSticky: SlotPolicy = {
  name: 'manual_sticky',
  propose(facts, ctx) {
    const ref = ctx.hooks?.manualSticky ? ctx.hooks.manualSticky(facts) : (facts.manualStickyModel ?? null);
    return ref ? resolveExplicitRef(ref, ctx) : null;
  },
};

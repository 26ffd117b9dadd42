/** @module Slot 5: the model a planner asked for when delegating to a worker; no_match on the gateway. */
import { resolveExplicitRef } from '../candidate.ts';
import type { SlotPolicy } from '../chain.ts';

export const delegateRequest: SlotPolicy = {
  name: 'delegate_request',
  propose(facts, ctx) {
    const ref = ctx.hooks?.delegateRequest ? ctx.hooks.delegateRequest(facts) : (facts.delegateModel ?? null);
    return ref ? resolveExplicitRef(ref, ctx) : null;
  },
};

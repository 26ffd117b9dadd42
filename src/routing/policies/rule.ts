/** @module Slot 3: the first routing.yaml rule whose `when` holds; a rule without `when` always holds. */
import type { SlotPolicy } from '../chain.ts';

export const rule: SlotPolicy = {
  name: 'rule',
  propose(_facts, ctx, env) {
    for (const r of ctx.policy.rules)
      if (r.test === null || r.test(env)) return { model: r.use, rule: r.name };
    return null;
  },
};

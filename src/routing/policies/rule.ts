/**
 * @module Slot 3: the first routing.yaml rule whose `when` holds; a rule without `when` always holds. A rule
 * that only maps the requested model's name proposes the model the request named: outside the key's
 * allowed_models it ends routing with 403, as slot 1 does (DECISIONS §4: no silent fallback).
 */
import type { SlotPolicy } from '../chain.ts';

export const rule: SlotPolicy = {
  name: 'rule',
  propose(_facts, ctx, env) {
    for (const r of ctx.policy.rules)
      if (r.test === null || r.test(env))
        return { model: r.use, rule: r.name, explicit: r.namesRequestedModel };
    return null;
  },
};

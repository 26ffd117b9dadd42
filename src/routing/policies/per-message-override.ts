/** @module Slot 1: the request's `model` field when it is a canonical id or an alias (spec 1). */
import { resolveRequestedRef } from '../candidate.ts';
import type { SlotPolicy } from '../chain.ts';

export const perMessageOverride: SlotPolicy = {
  name: 'per_message_override',
  // an explicit client choice outside allowed_models is a 403, never a silent fallback (DECISIONS §4)
  explicit: true,
  propose: (facts, ctx) => (facts.requestedModel ? resolveRequestedRef(facts.requestedModel, ctx) : null),
};

/** @module Slot 7: the global default (policy global_default > SVC_GATEWAY_GLOBAL_DEFAULT > built-in). */
import type { SlotPolicy } from '../chain.ts';

export const globalDefault: SlotPolicy = {
  name: 'global_default',
  propose: (_facts, ctx) => ctx.policy.globalDefault,
};

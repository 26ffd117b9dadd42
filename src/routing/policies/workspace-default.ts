/** @module Slot 6: the first routing.yaml `workspaces` entry matching the key's or session's workspace. */
import type { SlotPolicy } from '../chain.ts';

export const workspaceDefault: SlotPolicy = {
  name: 'workspace_default',
  propose(facts, ctx) {
    const path = facts.workspacePath;
    if (path === null) return null;
    for (const w of ctx.policy.workspaces) if (w.test(path)) return w.use;
    return null;
  },
};

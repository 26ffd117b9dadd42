/**
 * @module Correlates tool.completed / tool.failed with the tool name of the prior tool.called
 * (spec 1 §Limits: a bounded cache of 1000 entries; the oldest entry is evicted first).
 */

export interface ToolNameCache {
  remember(toolUseId: string, toolName: string): void;
  /** The remembered name, removed from the cache (a tool use ends once); undefined when unmatched. */
  take(toolUseId: string): string | undefined;
  readonly size: number;
}

export const TOOL_NAME_CACHE_SIZE = 1000;

export function createToolNameCache(capacity = TOOL_NAME_CACHE_SIZE): ToolNameCache {
  // a Map iterates in insertion order, so its first key is the oldest entry
  const names = new Map<string, string>();
  return {
    remember(toolUseId, toolName) {
      names.delete(toolUseId);
      names.set(toolUseId, toolName);
      while (names.size > capacity) names.delete(names.keys().next().value as string);
    },
    take(toolUseId) {
      const name = names.get(toolUseId);
      names.delete(toolUseId);
      return name;
    },
    get size() {
      return names.size;
    },
  };
}

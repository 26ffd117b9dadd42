import { silentLogger } from '#src/lib/log.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import type { RouteDecision } from '#src/routing/chain.ts';
import { resolveRoute } from '#src/routing/chain.ts';
import { type CompiledPolicy, compilePolicyText } from '#src/routing/compile-policy.ts';
import type { RouteContext, RouteFacts } from '#src/routing/facts.ts';

export const registry = loadModelRegistry(undefined);
export const ALL_ADAPTERS: ReadonlySet<string> = new Set(['anthropic', 'openai', 'openrouter']);

/** Compiles policy text against the built-in registry; throws when invalid. */
export function policyOf(yaml: string, envGlobalDefault?: string): CompiledPolicy {
  const check = compilePolicyText(yaml, 'routing.yaml', { registry, envGlobalDefault });
  if (!check.valid || !check.policy) throw new Error(`policy invalid: ${check.errors.join('; ')}`);
  return check.policy;
}

export function facts(over: Partial<RouteFacts> = {}): RouteFacts {
  return {
    requestedModel: null,
    hasImages: false,
    hasTools: false,
    estimatedInputTokens: 100,
    workspacePath: null,
    ...over,
  };
}

export function route(
  f: Partial<RouteFacts>,
  ctx: Partial<RouteContext> & { yaml?: string } = {},
): RouteDecision {
  const { yaml, ...rest } = ctx;
  return resolveRoute(facts(f), {
    policy: policyOf(yaml ?? 'rules: []'),
    registry,
    availableAdapters: ALL_ADAPTERS,
    ...rest,
  });
}

export const silent = silentLogger;

/**
 * @module Model references at the session edge: a client's id, alias or tier name resolved to a canonical
 * id (else 400 model_not_configured), and a new session's default model (spec 2 POST /sessions: the routing
 * policy's workspace default for its path, else the global default).
 */
import { SvcError } from '../../lib/errors.ts';
import type { ModelRegistry } from '../../models/registry.ts';
import type { CompiledPolicy } from '../../routing/compile-policy.ts';

/** Canonical id for `ref` (tier names through the policy's tiers, then registry ids and aliases). */
export function resolveModelRef(
  ref: string,
  policy: CompiledPolicy,
  registry: ModelRegistry,
  field: string,
): string {
  const id = policy.resolveRef(ref) ?? registry.resolve(ref)?.id;
  if (id === undefined || registry.get(id) === undefined) {
    throw new SvcError('model_not_configured', {
      message: `${field}: ${JSON.stringify(ref)} is not a model id, alias or tier in ${registry.source}; GET /models lists them.`,
      details: { field, model: ref },
    });
  }
  return id;
}

/** The first `workspaces` entry matching the path, else the policy's global default. */
export function resolveDefaultModel(policy: CompiledPolicy, workspacePath: string): string {
  for (const w of policy.workspaces) if (w.test(workspacePath)) return w.use;
  return policy.globalDefault;
}

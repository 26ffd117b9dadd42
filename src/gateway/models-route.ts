/**
 * @module GET /v1/models (DECISIONS §4): the models the calling key may use — registry entries whose
 * adapter has a provider key, narrowed by the key's allowed_models — in the OpenAI list shape, or the
 * Anthropic list shape when the request carries `anthropic-version`. Ids are canonical ids, which the
 * routing chain accepts in the `model` field as they are.
 */
import type { Handler } from 'hono';
import type { ModelEntry } from '../models/model-schema.ts';
import type { ModelRegistry } from '../models/registry.ts';
import type { GatewayEnv } from './env.ts';

export interface ModelsRouteDeps {
  registry: ModelRegistry;
  /** Adapters with a provider key. */
  availableAdapters: ReadonlySet<string>;
  /** Unix seconds stamped as `created` (the gateway's start). */
  createdAt: number;
}

export function createModelsHandler(deps: ModelsRouteDeps): Handler<GatewayEnv> {
  return (c) => {
    const key = c.get('gatewayKey');
    const allowed = key.allowed_models?.length ? new Set(key.allowed_models) : null;
    const models = deps.registry
      .list()
      .filter((m) => deps.availableAdapters.has(m.adapter) && (!allowed || allowed.has(m.id)));
    if (c.get('shape') === 'anthropic') return c.json(encodeAnthropicList(models, deps.createdAt));
    return c.json(encodeOpenAIList(models, deps.createdAt));
  };
}

export function encodeOpenAIList(models: readonly ModelEntry[], created: number) {
  return {
    object: 'list',
    data: models.map((m) => ({ id: m.id, object: 'model', created, owned_by: m.adapter })),
  };
}

export function encodeAnthropicList(models: readonly ModelEntry[], created: number) {
  const createdAt = new Date(created * 1000).toISOString();
  return {
    data: models.map((m) => ({ type: 'model', id: m.id, display_name: m.id, created_at: createdAt })),
    has_more: false,
    first_id: models[0]?.id ?? null,
    last_id: models.at(-1)?.id ?? null,
  };
}

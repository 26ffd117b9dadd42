/**
 * @module GET /v1/models (DECISIONS §4): the models the calling key may use — registry entries whose
 * adapter has a provider key, narrowed by the key's allowed_models — in the OpenAI list shape, or the
 * Anthropic list shape (paged by `limit`, `after_id`, `before_id` as the API pages, filtered by `lifecycle`)
 * when the request carries `anthropic-version`. Ids are canonical ids, which the routing chain accepts in the
 * `model` field as they are. GET /v1/models/{model} (the SDKs' `models.retrieve`) describes one of those
 * models as its list entry does, named by canonical id, alias or tier, or bare provider name (modelFor).
 */
import type { Context, Handler } from 'hono';
import { requestHeaders } from '../http/request-headers.ts';
import { SvcError } from '../lib/errors.ts';
import { contextWindowOf, parseBetas } from '../models/long-context.ts';
import type { ModelEntry } from '../models/model-schema.ts';
import type { ModelRegistry } from '../models/registry.ts';
import { jsonAnswer } from './answer.ts';
import type { GatewayEnv } from './env.ts';
import { MAX_MODEL_LENGTH } from './shapes/shape.ts';

export interface ModelsRouteDeps {
  registry: ModelRegistry;
  /** Adapters with a provider key. */
  availableAdapters: ReadonlySet<string>;
  /** Unix seconds stamped as `created` (the gateway's start). */
  createdAt: number;
}

export interface ModelRouteDeps extends ModelsRouteDeps {
  /** Canonical id for a tier name, canonical id or alias, as the routing policy in force resolves `model`. */
  resolveRef: (ref: string) => string | undefined;
}

export function createModelsHandler(deps: ModelsRouteDeps): Handler<GatewayEnv> {
  return (c) => {
    const models = keyModels(c, deps);
    if (c.get('shape') === 'anthropic') {
      const listed = hasActiveLifecycle(c.req.queries()) ? models : [];
      const page = anthropicPage(listed, {
        limit: c.req.query('limit'),
        after_id: c.req.query('after_id'),
        before_id: c.req.query('before_id'),
      });
      return jsonAnswer(c, JSON.stringify(encodeAnthropicList(page.models, page.hasMore, betasOf(c))));
    }
    return jsonAnswer(c, JSON.stringify(encodeOpenAIList(models, deps.createdAt)));
  };
}

/**
 * GET /v1/models/{model}: the list's entry for one model the key may use, in the same shape (404
 * `model_not_found` for any other name). `model` is the path's rest, percent-decoded, so a canonical id's
 * `:` and `/` may come as they are or encoded (the SDKs send `openrouter:meta-llama%2Fllama-3.3-70b-instruct`).
 */
export function createModelHandler(deps: ModelRouteDeps): Handler<GatewayEnv> {
  return (c) => {
    const ref = modelParam(c.req.url);
    const m = ref === undefined ? undefined : modelFor(ref, keyModels(c, deps), deps.resolveRef);
    if (!m) {
      // a name past the `model` field's bound is not echoed (as that field's refusal does not echo it)
      const named = ref !== undefined && ref.length <= MAX_MODEL_LENGTH ? JSON.stringify(ref) : 'in the path';
      throw new SvcError('model_not_found', {
        message: `The model ${named} does not exist or this key may not use it; GET /v1/models lists the models it may use.`,
      });
    }
    if (c.get('shape') === 'anthropic')
      return jsonAnswer(c, JSON.stringify(encodeAnthropicModelInfo(m, betasOf(c))));
    return jsonAnswer(c, JSON.stringify(encodeOpenAIModel(m, deps.createdAt)));
  };
}

/**
 * The model `ref` names among `models` (the key's list): a canonical id, an alias or a tier name as `model`
 * resolves them in routing slot 1; else the bare provider name of a listed model (`claude-sonnet-4-5`,
 * `meta-llama/llama-3.3-70b-instruct`), the first in registry order when two providers list it. Only the
 * exact name: the native-name routing rules' globs (`gpt-*`) would describe every name as some model.
 */
export function modelFor(
  ref: string,
  models: readonly ModelEntry[],
  resolveRef: (ref: string) => string | undefined,
): ModelEntry | undefined {
  const id = resolveRef(ref);
  return (
    (id === undefined ? undefined : models.find((m) => m.id === id)) ??
    models.find((m) => m.model_name === ref)
  );
}

export function encodeOpenAIList(models: readonly ModelEntry[], created: number) {
  return { object: 'list', data: models.map((m) => encodeOpenAIModel(m, created)) };
}

export function encodeOpenAIModel(m: ModelEntry, created: number) {
  return { id: m.id, object: 'model', created, owned_by: m.adapter } as const;
}

export function encodeAnthropicList(
  models: readonly ModelEntry[],
  hasMore = false,
  betas: readonly string[] = [],
) {
  return {
    data: models.map((m) => encodeAnthropicModelInfo(m, betas)),
    has_more: hasMore,
    first_id: models[0]?.id ?? null,
    last_id: models.at(-1)?.id ?? null,
  };
}

/**
 * One `ModelInfo` with every field the Anthropic SDK 1.x types declare, each from what the registry knows
 * or, where it knows nothing, the value the Models API gives for "unknown"/"none" (never a guess).
 * `max_input_tokens` is the window a request with these `anthropic-beta` values gets (1M on Claude Sonnet 4 /
 * 4.5 with `context-1m-2025-08-07`).
 */
export function encodeAnthropicModelInfo(m: ModelEntry, betas: readonly string[] = []) {
  return {
    type: 'model',
    id: m.id,
    display_name: m.id,
    // the registry has no release dates: "May be set to an epoch value if the release date is unknown"
    created_at: UNKNOWN_RELEASE_DATE,
    // the registry's context window (routing fits input plus max_tokens into it) and output limit
    max_input_tokens: contextWindowOf(m, betas),
    max_tokens: m.capabilities.max_output_tokens,
    // its keys are "always present for all known capabilities", and the registry knows two of them
    capabilities: null,
    // "do not infer a line from the id"
    line: null,
    // the gateway serves every model it lists and retires none
    lifecycle: 'active',
    deprecated_at: null,
    retires_at: null,
  } as const;
}

const UNKNOWN_RELEASE_DATE = '1970-01-01T00:00:00Z';
const MODEL_PATH_PREFIX = '/v1/models/';

/** Registry entries whose adapter has a provider key, narrowed by the calling key's allowed_models. */
function keyModels(c: Context<GatewayEnv>, deps: ModelsRouteDeps): ModelEntry[] {
  const key = c.get('gatewayKey');
  const allowed = key.allowed_models?.length ? new Set(key.allowed_models) : null;
  return deps.registry
    .list()
    .filter((m) => deps.availableAdapters.has(m.adapter) && (!allowed || allowed.has(m.id)));
}

/**
 * The `anthropic-beta` values: a client that opens a long-context window (context-1m-…) on its messages is
 * told that window, as routing gives it (read from Node's raw header list: c.req.header builds an undici
 * Headers of every line).
 */
function betasOf(c: Context<GatewayEnv>): readonly string[] {
  return parseBetas(requestHeaders(c).get('anthropic-beta') ?? '');
}

/**
 * The model name of a /v1/models/{model} URL, percent-decoded once (from the URL as sent: the router's path
 * is already decoded, so `%25` would be decoded twice); undefined when its encoding is broken.
 */
function modelParam(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(MODEL_PATH_PREFIX.length));
  } catch {
    return undefined;
  }
}
const LIFECYCLES = ['active', 'deprecated', 'retired'];

/**
 * Whether the `lifecycle` filter (the SDK sends `lifecycle[]=…`) admits the listed models, all `active`;
 * without it the API lists active and deprecated models.
 */
export function hasActiveLifecycle(query: Record<string, string[]>): boolean {
  const asked = [...(query.lifecycle ?? []), ...(query['lifecycle[]'] ?? [])].flatMap((v) => v.split(','));
  const unknown = asked.find((v) => !LIFECYCLES.includes(v));
  if (unknown !== undefined)
    throw new SvcError('invalid_request', {
      message: `lifecycle: must be active, deprecated or retired, got ${JSON.stringify(unknown)}`,
      details: { param: 'lifecycle' },
    });
  return asked.length === 0 || asked.includes('active');
}

/** Anthropic's list paging: `limit` (1–1000, default 20), then the page after `after_id` or before `before_id`. */
export const ANTHROPIC_LIST_DEFAULT_LIMIT = 20;
const ANTHROPIC_LIST_MAX_LIMIT = 1000;

export function anthropicPage(
  models: readonly ModelEntry[],
  query: { limit?: string | undefined; after_id?: string | undefined; before_id?: string | undefined },
): { models: readonly ModelEntry[]; hasMore: boolean } {
  const limit = query.limit === undefined ? ANTHROPIC_LIST_DEFAULT_LIMIT : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > ANTHROPIC_LIST_MAX_LIMIT)
    throw new SvcError('invalid_request', {
      message: `limit: must be an integer from 1 to ${ANTHROPIC_LIST_MAX_LIMIT}, got ${JSON.stringify(query.limit)}`,
      details: { param: 'limit' },
    });
  if (query.after_id !== undefined && query.before_id !== undefined)
    throw new SvcError('invalid_request', {
      message: 'after_id and before_id cannot be given together',
      details: { param: 'before_id' },
    });
  const at = (id: string, param: string) => {
    const i = models.findIndex((m) => m.id === id);
    if (i < 0)
      throw new SvcError('invalid_request', {
        message: `${param}: no model ${JSON.stringify(id)} in this key's list`,
        details: { param },
      });
    return i;
  };
  if (query.before_id !== undefined) {
    const end = at(query.before_id, 'before_id');
    const start = Math.max(0, end - limit);
    return { models: models.slice(start, end), hasMore: start > 0 };
  }
  const start = query.after_id === undefined ? 0 : at(query.after_id, 'after_id') + 1;
  return { models: models.slice(start, start + limit), hasMore: start + limit < models.length };
}

/**
 * @module What both servers read before their first model call: the model registry (models.yaml), the
 * routing policy (routing.yaml, last known good kept beside the config), and an adapter for each provider
 * whose key is set, with its base URL from the environment only (DECISIONS §1; a client never picks the host).
 */
import { join, resolve } from 'node:path';
import type { Adapter, AdapterConfig } from '../adapters/adapter.ts';
import type { AdapterName } from '../adapters/names.ts';
import { createAdapters } from '../adapters/registry.ts';
import { DEFAULT_BASE_URLS } from '../config/base-urls.ts';
import type { SvcEnv } from '../config/env.ts';
import { configDir } from '../config/paths.ts';
import { KEY_VARIABLES } from '../config/provider-keys.ts';
import { sha256Hex } from '../lib/hash.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import { loadModelRegistry, type ModelRegistry } from '../models/registry.ts';
import { loadRoutingPolicy, type PolicyStore } from '../routing/load-policy.ts';

export interface CallConfig {
  registry: ModelRegistry;
  policy: PolicyStore;
  /** Adapters of the providers that have a key. */
  adapters: Partial<Record<AdapterName, Adapter>>;
}

export interface LoadCallConfigOptions {
  env: SvcEnv;
  log: Logger;
  clock?: Clock;
  /** `--models` (else SVC_MODELS). */
  modelsPath?: string;
  /** `--routing` (else SVC_ROUTING_POLICY). */
  routingPath?: string;
}

/** The registry first: the policy names registry models. Throws config_invalid for a bad models.yaml. */
export function loadCallConfig(opts: LoadCallConfigOptions): CallConfig {
  const { env } = opts;
  const registry = loadModelRegistry(opts.modelsPath ?? env.models);
  const routingPath = opts.routingPath ?? env.routingPolicy;
  const policy = loadRoutingPolicy({
    path: routingPath,
    registry,
    envGlobalDefault: env.gatewayGlobalDefault,
    lastKnownGoodPath: routingPath ? lastKnownGoodPath(env, routingPath) : undefined,
    log: opts.log,
    clock: opts.clock,
  });
  const adapters = createAdapters(adapterConfigs(env));
  warnUnservedGlobalDefault(policy, registry, adapters, opts.log);
  // a reload (SIGHUP, POST /routing/reload) can bring such a default as well: it is said then too
  policy.onReload(() => warnUnservedGlobalDefault(policy, registry, adapters, opts.log));
  return { registry, policy, adapters };
}

/**
 * Slot 7 is the answer for every request nothing else claims: a global default on a provider without a key
 * makes them all 503 routing_failed, so the start and each reload say which key to set (a start with no key
 * at all is warned elsewhere).
 */
function warnUnservedGlobalDefault(
  policy: PolicyStore,
  registry: ModelRegistry,
  adapters: Partial<Record<AdapterName, Adapter>>,
  log: Logger,
): void {
  const entry = registry.get(policy.current().globalDefault);
  if (!entry || Object.keys(adapters).length === 0 || entry.adapter in adapters) return;
  log.warn('the global default cannot be served: its provider has no key', {
    global_default: entry.id,
    set: KEY_VARIABLES[entry.adapter].name,
    effect: 'requests that no alias, rule or workspace entry claims get 503 routing_failed',
  });
}

/**
 * Where the last valid copy of one policy file is kept: one copy per file (its absolute path's hash), so a
 * gateway and an agent server with different routing.yaml files never fall back on each other's.
 */
export function lastKnownGoodPath(env: SvcEnv, routingPath: string): string {
  const id = sha256Hex(resolve(routingPath)).slice(0, 16);
  return join(configDir(env), `routing.last-known-good.${id}.yaml`);
}

/** Provider keys and base URLs from the environment only. */
export function adapterConfigs(env: SvcEnv): Partial<Record<AdapterName, AdapterConfig>> {
  const out: Partial<Record<AdapterName, AdapterConfig>> = {};
  if (env.anthropicApiKey)
    out.anthropic = {
      apiKey: env.anthropicApiKey,
      baseUrl: env.anthropicBaseUrl ?? DEFAULT_BASE_URLS.anthropic,
    };
  if (env.openaiApiKey)
    out.openai = { apiKey: env.openaiApiKey, baseUrl: env.openaiBaseUrl ?? DEFAULT_BASE_URLS.openai };
  if (env.openrouterApiKey)
    out.openrouter = {
      apiKey: env.openrouterApiKey,
      baseUrl: env.openrouterBaseUrl ?? DEFAULT_BASE_URLS.openrouter,
    };
  return out;
}

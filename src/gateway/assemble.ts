/**
 * @module Builds the gateway's call path from the environment once at start: model registry, routing
 * policy (last known good kept), adapters for the providers that have a key (base URLs per DECISIONS §1,
 * never from a client), the pooled upstream client, retry policy and budget, and the budget manager seeded
 * from the trace store; turns a killed process left open are named in bus.gap_detected first. Returns the
 * handlers the app mounts and a close for the connection pool.
 */
import type { SvcEnv } from '../config/env.ts';
import { positiveInt } from '../config/env-numbers.ts';
import type { Bus } from '../events/bus.ts';
import { stopCutOffError } from '../http/stop-cut-off.ts';
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import { createCallPath, readCallPathSettings } from '../llm/call-path.ts';
import { loadCallConfig } from '../llm/load-call-config.ts';
import { readPatternRefreshMs, startPatternRouter } from '../routing/pattern/router.ts';
import { reloadPolicyOnSignal } from '../routing/reload-signal.ts';
import type { Store } from '../store/open.ts';
import { runLongStatements } from '../store/statement-bounds.ts';
import { createCountTokensHandler } from './count-tokens.ts';
import { type KeyRecord, resolveBudgetOf } from './keystore/keystore.ts';
import { createModelHandler, createModelsHandler } from './models-route.ts';
import { createPipeline } from './pipeline.ts';
import { createQuotaManager, type QuotaManager } from './quota.ts';
import { loadQuotaSeed } from './quota-seed.ts';
import { createTableQuotaManager } from './quota-table.ts';
import type { GatewayExtensions } from './server.ts';
import { createStoredResponses } from './shapes/responses/stored-responses.ts';
import { loadSpendToday } from './spend-today.ts';
import { runGapDetection } from './startup-gaps.ts';

/** SVC_GATEWAY_MAX_BODY_BYTES default (DECISIONS §4): 32 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface AssembleOptions {
  env: SvcEnv;
  log: Logger;
  bus: Bus;
  clock: Clock;
  newId: NewId;
  store: Store;
  /** `--models` (else SVC_MODELS). */
  modelsPath?: string;
  /** `--routing` (else SVC_ROUTING_POLICY). */
  routingPath?: string;
  /** The gateway keys at start: the spend seeded from the trace is counted per budget (resolveBudgetOf). */
  keys: readonly KeyRecord[];
}

/**
 * Reads every number setting assembleGateway reads (each parsed by its one reader), so that a typo refuses
 * the start before the store is opened, migrated or locked: called first, as the port check is.
 */
export function checkGatewaySettings(env: SvcEnv): void {
  readCallPathSettings(env);
  readMaxBodyBytes(env);
  readPatternRefreshMs(env);
}

/** SVC_GATEWAY_MAX_BODY_BYTES, or its default when unset. */
function readMaxBodyBytes(env: SvcEnv): number {
  return positiveInt(env.gatewayMaxBodyBytes, 'SVC_GATEWAY_MAX_BODY_BYTES') ?? DEFAULT_MAX_BODY_BYTES;
}

export async function assembleGateway(opts: AssembleOptions): Promise<GatewayExtensions> {
  const { env, log } = opts;
  const { registry, policy, adapters } = loadCallConfig({ ...opts, env, log });
  const callPath = createCallPath({
    bus: opts.bus,
    clock: opts.clock,
    log,
    registry,
    policy,
    adapters,
    settings: readCallPathSettings(env),
  });
  const maxBodyBytes = readMaxBodyBytes(env);
  const budgetOf = resolveBudgetOf(opts.keys);
  const quota = await createQuota(opts, budgetOf);
  // the start's scans are no request: the first one over a large PostgreSQL store (no gap watermark yet)
  // may take longer than a request's bound (statement-bounds.ts)
  const spendToday = await runLongStatements(() => loadSpendToday(opts.store, opts.clock, budgetOf));
  // replicas sharing a PostgreSQL store: tell them this process is alive before naming anyone's gaps
  if (opts.store.engine === 'postgres') await opts.store.announcePresence();
  const peer = opts.store.engine === 'sqlite' ? opts.store.serverSharedWith : undefined;
  if (peer)
    // a rolling update's overlap: the other gateway's calls in flight are alive, not a dead process's gaps
    log.warn(
      'another svc gateway is running on this SQLite store: no start-up gap scan, and each gateway counts the keys’ budgets apart until it stops (several gateways need a PostgreSQL store)',
      peer.pid === undefined ? {} : { other_pid: peer.pid },
    );
  else
    await runLongStatements(() =>
      runGapDetection({ store: opts.store, bus: opts.bus, clock: opts.clock, log }),
    );
  // slot 4 learns from this store in the background (README §Learned routing)
  const pattern = startPatternRouter({
    store: opts.store,
    policy,
    clock: opts.clock,
    log,
    env,
  });
  const pipeline = createPipeline({
    bus: opts.bus,
    log,
    registry,
    runner: callPath.runner,
    routingHooks: pattern.hooks,
    quota,
    spendToday,
    maxBodyBytes,
    upstreamLimits: callPath.settings.limits,
    clientStallMs: callPath.settings.streamIdleTimeoutMs,
    storedResponses: createStoredResponses(),
  });
  const stopReloads = reloadPolicyOnSignal(policy, log);
  const modelsDeps = {
    registry,
    availableAdapters: new Set(Object.keys(adapters)),
    createdAt: Math.floor(opts.clock.nowUs() / 1_000_000),
    resolveRef: (ref: string) => policy.current().resolveRef(ref),
  };
  log.info('gateway routing ready', {
    models: registry.source,
    pricing_version: registry.pricingVersion,
    routing: policy.view().source,
    routing_version: policy.view().version,
    global_default: policy.current().globalDefault,
    adapters: Object.keys(adapters),
  });
  return {
    maxBodyBytes,
    handleMessages: pipeline.messages,
    handleChatCompletions: pipeline.chatCompletions,
    handleResponses: pipeline.responses,
    handleCountTokens: createCountTokensHandler({
      runner: callPath.runner,
      llm: callPath.llm,
      maxBodyBytes,
      spendToday,
      routingHooks: pattern.hooks,
    }),
    handleModels: createModelsHandler(modelsDeps),
    handleModel: createModelHandler(modelsDeps),
    // a stopping replica starts no new attempt: a call waiting out a backoff is answered 503 at once, which
    // the SDKs retry (on another replica), instead of holding the drain for as long as the provider asked
    stopBegan: () => callPath.stop(stopCutOffError('request')),
    async close() {
      stopReloads();
      await pattern.stop();
      await callPath.close();
      await quota.close?.();
    },
  };
}

// --- internal ---

/** One process's caps in memory (SQLite), or caps every replica shares in the database (PostgreSQL). */
async function createQuota(
  opts: AssembleOptions,
  budgetOf: (keyId: string) => string,
): Promise<QuotaManager> {
  const { store, bus, clock } = opts;
  if (store.engine === 'postgres') {
    const quota = createTableQuotaManager({ store, bus, clock, newId: opts.newId, log: opts.log });
    await quota.sweep(); // holds of replicas that died since
    return quota;
  }
  return createQuotaManager({ bus, clock, seed: await loadQuotaSeed(store, clock.nowUs(), budgetOf) });
}

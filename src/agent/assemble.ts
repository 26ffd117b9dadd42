/**
 * @module Builds the agent server's turn engine from the services `svc serve` starts with: the shared call
 * path (the same runner, retries and caps as the gateway), slot 4's learned table, the workspace tools, and
 * the SVC_AGENT_* limits.
 */

import { processEnvForChildren, type SvcEnv } from '../config/env.ts';
import { positiveInt } from '../config/env-numbers.ts';
import { createCallPath, readCallPathSettings } from '../llm/call-path.ts';
import type { CallRunner } from '../llm/runner.ts';
import type { SlotHooks } from '../routing/facts.ts';
import { readPatternRefreshMs, startPatternRouter } from '../routing/pattern/router.ts';
import { reloadPolicyOnSignal } from '../routing/reload-signal.ts';
import type { AgentEngine, AgentServices } from './server.ts';
import { childEnvFrom } from './tools/child-env.ts';
import { WORKSPACE_TOOLS } from './tools/registry.ts';
import { createTurnEngine } from './turns/create-engine.ts';
import type { TurnEngine } from './turns/engine.ts';

/** SVC_AGENT_MAX_STEPS default: model calls per turn. */
export const DEFAULT_MAX_STEPS = 50;
/** SVC_AGENT_CONFIRMATION_TIMEOUT_MS default (spec 2 §Limits: 5 minutes). */
export const DEFAULT_CONFIRMATION_TIMEOUT_MS = 300_000;
/** SVC_AGENT_TURN_TIMEOUT_MS default: 30 minutes. */
export const DEFAULT_TURN_TIMEOUT_MS = 1_800_000;

/**
 * Reads every number setting the engine is built with (each parsed by its one reader), so that a typo
 * refuses the start before the store is opened, migrated or locked: called first, as the port check is.
 */
export function checkAgentSettings(env: SvcEnv): void {
  readCallPathSettings(env);
  readAgentLimits(env);
  readPatternRefreshMs(env);
}

/** SVC_AGENT_MAX_STEPS, SVC_AGENT_CONFIRMATION_TIMEOUT_MS and SVC_AGENT_TURN_TIMEOUT_MS, or their defaults. */
function readAgentLimits(env: SvcEnv) {
  return {
    maxSteps: positiveInt(env.agentMaxSteps, 'SVC_AGENT_MAX_STEPS') ?? DEFAULT_MAX_STEPS,
    confirmationTimeoutMs:
      positiveInt(env.agentConfirmationTimeoutMs, 'SVC_AGENT_CONFIRMATION_TIMEOUT_MS') ??
      DEFAULT_CONFIRMATION_TIMEOUT_MS,
    turnTimeoutMs:
      positiveInt(env.agentTurnTimeoutMs, 'SVC_AGENT_TURN_TIMEOUT_MS') ?? DEFAULT_TURN_TIMEOUT_MS,
  };
}

export function assembleAgentEngine(services: AgentServices): AgentEngine {
  const { env } = services;
  const callPath = createCallPath({
    bus: services.bus,
    clock: services.clock,
    log: services.log,
    registry: services.registry,
    policy: services.policy,
    adapters: services.adapters,
    settings: readCallPathSettings(env),
  });
  // slot 4 learns from this store in the background (README §Learned routing)
  const pattern = startPatternRouter({
    store: services.store,
    policy: services.policy,
    clock: services.clock,
    log: services.log,
    env,
  });
  let engine: TurnEngine;
  try {
    engine = createEngineOver(services, callPath.runner, pattern.hooks);
  } catch (err) {
    void pattern.stop();
    throw err;
  }
  const stopReloads = reloadPolicyOnSignal(services.policy, services.log);
  return {
    ...engine,
    async close() {
      stopReloads();
      await pattern.stop();
      await callPath.close();
    },
  };
}

// --- internal ---

function createEngineOver(services: AgentServices, runner: CallRunner, routingHooks: SlotHooks): TurnEngine {
  const { env } = services;
  return createTurnEngine({
    db: services.store.kysely,
    bus: services.bus,
    log: services.log,
    newId: services.newId,
    clock: services.clock,
    runner,
    routingHooks,
    registry: services.registry,
    policy: services.policy,
    tools: WORKSPACE_TOOLS,
    childEnv: childEnvFrom(processEnvForChildren()),
    ...readAgentLimits(env),
  });
}

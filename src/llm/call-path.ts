/**
 * @module The call path both servers build once at start: the pooled upstream client with the timeouts of
 * DECISIONS §4, the retry policy and budget, the upstream size caps, and the call runner over them. The
 * gateway and the agent server read the same SVC_GATEWAY_* settings, so one model call behaves the same
 * whoever makes it.
 */
import type { Adapter } from '../adapters/adapter.ts';
import type { SvcEnv } from '../config/env.ts';
import { nonNegativeInt, positiveInt } from '../config/env-numbers.ts';
import type { Bus } from '../events/bus.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import type { ModelRegistry } from '../models/registry.ts';
import type { PolicyStore } from '../routing/load-policy.ts';
import type { LlmCallDeps } from './call.ts';
import { createRetryBudget, DEFAULT_RETRY_POLICY } from './retry.ts';
import { type CallRunner, createCallRunner } from './runner.ts';
import { createUpstream, DEFAULT_UPSTREAM_LIMITS, type UpstreamLimits } from './upstream.ts';

export interface CallPathSettings {
  /**
   * One call's attempts together, until the response head of a stream or the whole body of an answer that
   * is not one (SVC_GATEWAY_UPSTREAM_TIMEOUT_MS, default 600 s).
   */
  upstreamTimeoutMs: number;
  /** Longest silence in a stream (SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS, default 120 s). */
  streamIdleTimeoutMs: number;
  /** SVC_GATEWAY_MAX_RETRIES (default 2). */
  maxRetries: number;
  limits: UpstreamLimits;
}

/** Reads the settings; a value that is not a whole number refuses the start (startup_refused). */
export function readCallPathSettings(env: SvcEnv): CallPathSettings {
  return {
    upstreamTimeoutMs:
      positiveInt(env.gatewayUpstreamTimeoutMs, 'SVC_GATEWAY_UPSTREAM_TIMEOUT_MS') ?? 600_000,
    streamIdleTimeoutMs:
      positiveInt(env.gatewayStreamIdleTimeoutMs, 'SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS') ?? 120_000,
    maxRetries:
      nonNegativeInt(env.gatewayMaxRetries, 'SVC_GATEWAY_MAX_RETRIES') ?? DEFAULT_RETRY_POLICY.maxRetries,
    limits: {
      maxBodyBytes:
        positiveInt(env.gatewayMaxUpstreamBodyBytes, 'SVC_GATEWAY_MAX_UPSTREAM_BODY_BYTES') ??
        DEFAULT_UPSTREAM_LIMITS.maxBodyBytes,
      maxSseLineBytes:
        positiveInt(env.gatewayMaxSseLineBytes, 'SVC_GATEWAY_MAX_SSE_LINE_BYTES') ??
        DEFAULT_UPSTREAM_LIMITS.maxSseLineBytes,
    },
  };
}

export interface CallPathDeps {
  bus: Bus;
  clock: Clock;
  log: Logger;
  registry: ModelRegistry;
  policy: PolicyStore;
  adapters: Readonly<Record<string, Adapter | undefined>>;
  settings: CallPathSettings;
}

export interface CallPath {
  runner: CallRunner;
  llm: LlmCallDeps;
  settings: CallPathSettings;
  /** The server's stop began (`reason`: why, an SvcError): calls make no further attempt (LlmCallDeps.stopping). */
  stop(reason: unknown): void;
  /** Closes the upstream connection pool (after the drain). */
  close(): Promise<void>;
}

export function createCallPath(deps: CallPathDeps): CallPath {
  const { settings } = deps;
  const upstream = createUpstream({
    timeoutMs: settings.upstreamTimeoutMs,
    idleTimeoutMs: settings.streamIdleTimeoutMs,
  });
  const stopping = new AbortController();
  const llm: LlmCallDeps = {
    bus: deps.bus,
    clock: deps.clock,
    log: deps.log,
    upstream,
    registry: deps.registry,
    retryPolicy: { ...DEFAULT_RETRY_POLICY, maxRetries: settings.maxRetries },
    retryBudget: createRetryBudget(),
    totalTimeoutMs: settings.upstreamTimeoutMs,
    stopping: stopping.signal,
  };
  const runner = createCallRunner({
    bus: deps.bus,
    registry: deps.registry,
    policy: deps.policy,
    adapters: deps.adapters,
    llm,
    limits: settings.limits,
  });
  return {
    runner,
    llm,
    settings,
    stop: (reason) => stopping.abort(reason),
    close: () => upstream.close(),
  };
}

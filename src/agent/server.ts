/**
 * @module `svc serve`: startup in spec 2 item 5's order (policy and models, adapters, store, subscribers,
 * engine and its tools, HTTP on a loopback address, then the gap events of turns a dead process left open)
 * and shutdown as item 6 (new requests 503, turns cancelled, listener drained or cut off by a second signal,
 * trace flushed, store closed; 30 s then a hard exit). Runs without provider keys.
 */
import type { Adapter } from '../adapters/adapter.ts';
import type { AdapterName } from '../adapters/registry.ts';
import { assertBaseUrls } from '../config/base-urls.ts';
import type { SvcEnv } from '../config/env.ts';
import { positiveInt } from '../config/env-numbers.ts';
import { assertProviderKeysSendable } from '../config/provider-keys.ts';
import type { Bus } from '../events/bus.ts';
import { isLoopbackName, parseAllowedHosts } from '../http/host-check.ts';
import { MAX_SERVICE_BODY_BYTES } from '../http/json-body.ts';
import {
  assertPortBindable,
  cutOffOnRepeatedStopSignal,
  type Listening,
  LOOPBACK_HOST,
  listen,
  resolveLoopbackHost,
} from '../http/listen.ts';
import { defaultVersionHeaders } from '../http/versioning.ts';
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import { assertNoStopSignal, heldStopSignal, StopRequested, waitForStopSignal } from '../lib/stop-signal.ts';
import { type Clock, formatUs } from '../lib/time.ts';
import { loadCallConfig } from '../llm/load-call-config.ts';
import { createMetricsCollector } from '../metrics/collector.ts';
import type { ModelRegistry } from '../models/registry.ts';
import type { PolicyStore } from '../routing/load-policy.ts';
import type { Store } from '../store/open.ts';
import { createAgentApp } from './app.ts';
import { createAttachTokens } from './sessions/attach-tokens.ts';
import { freeUnfinishedTurns, publishRecoveredTurns } from './sessions/recover.ts';
import { createSessionCounter } from './sessions/store.ts';
import { createTurnEndWatch } from './sessions/turn-end-watch.ts';
import { TOOL_NAMES } from './tools/tool.ts';
import type { TurnEngine } from './turns/engine.ts';
import {
  createStreamServer,
  DEFAULT_WS_PING_INTERVAL_MS,
  DEFAULT_WS_QUEUE_LIMIT,
  type StreamServer,
} from './ws/stream-server.ts';

export { DEFAULT_SERVE_PORT, servePortOf } from './serve-port.ts';
/** spec 2 §Limits: graceful shutdown. */
export const SHUTDOWN_GRACE_MS = 30_000;

/** What `svc serve` needs from the command's runtime (cli/runtime.ts builds it; agent never imports cli/). */
export interface AgentRuntime {
  readonly store: Store;
  readonly bus: Bus;
  readonly clock: Clock;
  readonly newId: NewId;
  readonly writer: { flush(): Promise<void> };
  /** Flushes the trace writer and closes the store. */
  close(): Promise<void>;
}

/** Everything the turn engine is built from (the seam the lead's createTurnEngine plugs into). */
export interface AgentServices {
  readonly env: SvcEnv;
  readonly log: Logger;
  readonly store: Store;
  readonly bus: Bus;
  readonly clock: Clock;
  readonly newId: NewId;
  readonly registry: ModelRegistry;
  readonly policy: PolicyStore;
  /** Adapters of the providers that have a key (none is a valid start). */
  readonly adapters: Partial<Record<AdapterName, Adapter>>;
}

/** A turn engine plus what it must release at shutdown (its upstream pool). */
export type AgentEngine = TurnEngine & { close?: () => Promise<void> };
export type CreateEngine = (services: AgentServices) => AgentEngine | Promise<AgentEngine>;

export interface RunAgentServerOptions<R extends AgentRuntime = AgentRuntime> {
  env: SvcEnv;
  log: Logger;
  port: number;
  /** Requested bind host (flag or SVC_SERVE_HOST); a non-loopback value is refused and 127.0.0.1 bound. */
  host: string | undefined;
  /** `--models` (else SVC_MODELS). */
  modelsPath?: string;
  /** `--routing` (else SVC_ROUTING_POLICY). */
  routingPath?: string;
  serverVersion: string;
  openRuntime: () => Promise<R>;
  /** The turn machinery; without it the turn routes answer 501. */
  createEngine?: CreateEngine;
  writeRequestLog?: (line: string) => void;
  graceMs?: number;
  /** Called when the graceful stop overruns its deadline (default: exit 1). */
  hardExit?: () => void;
}

/** Starts the agent server; resolves once it has stopped after SIGTERM/SIGINT. */
export async function runAgentServer<R extends AgentRuntime>(
  options: RunAgentServerOptions<R>,
): Promise<void> {
  const { env, log } = options;
  const allowedHosts = parseAllowedHosts(env.allowedHosts);
  assertBaseUrls(env);
  assertProviderKeysSendable(env);
  const host = resolveServeHost(options.host, log);
  // item 5: routing policy and model registry (the policy names registry models, so the registry is read first)
  const { registry, policy, adapters } = loadCallConfig({
    env,
    log,
    modelsPath: options.modelsPath,
    routingPath: options.routingPath,
  });
  const queueLimit = positiveInt(env.wsQueueLimit, 'SVC_WS_QUEUE_LIMIT') ?? DEFAULT_WS_QUEUE_LIMIT;
  const pingIntervalMs =
    positiveInt(env.wsPingIntervalMs, 'SVC_WS_PING_INTERVAL_MS') ?? DEFAULT_WS_PING_INTERVAL_MS;
  if (Object.keys(adapters).length === 0)
    log.warn(
      'no provider key set (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY): history and analytics work, turns fail with 503 routing_failed',
    );
  // a stop signal during the start (held since the process began, lib/stop-signal.ts) ends it between
  // two slow steps: what was opened is closed and the process exits 0, as a stop after the start does
  const early = await heldStopSignal();
  if (early !== undefined) return stoppedDuringStart(log, early);
  await assertPortBindable(host, options.port); // a port in use refuses the start before the store is touched
  let runtime: R;
  try {
    runtime = await options.openRuntime();
  } catch (err) {
    // a stop while the store was opening (a PostgreSQL connection attempt that hangs) cut it short
    if (!(err instanceof StopRequested)) throw err;
    return stoppedDuringStart(log, err.signal);
  }
  let engine: AgentEngine | undefined;
  let server: Listening;
  let stream: StreamServer;
  let shuttingDown = false;
  let recovered: Awaited<ReturnType<typeof freeUnfinishedTurns>>;
  try {
    await assertNoStopSignal();
    const metrics = createMetricsCollector({
      role: 'agent',
      bus: runtime.bus,
      log,
      gauges: { sessionCount: createSessionCounter(runtime.store) },
      toolNames: TOOL_NAMES,
    });
    const turnEnds = createTurnEndWatch(runtime.bus);
    // item 5: the streaming server is a built-in subscriber, registered before any turn can publish
    stream = createStreamServer({
      bus: runtime.bus,
      clock: runtime.clock,
      newId: runtime.newId,
      log,
      flush: () => runtime.writer.flush(),
      queueLimit,
      pingIntervalMs,
    });
    runtime.bus.subscribe(stream.subscriber);
    const services: AgentServices = { env, log, ...pick(runtime), registry, policy, adapters };
    engine = await options.createEngine?.(services);
    // the last check: once turns left open are freed, their events are owed, so the start goes on to them
    await assertNoStopSignal();
    recovered = await freeUnfinishedTurns(runtime.store.kysely, formatUs(runtime.clock.nowUs()), () =>
      runtime.newId(),
    );
    // a swap queued for a turn the dead process never ended applies at that turn's (recovered) boundary
    await engine?.applyQueuedSwaps?.();
    const startedAtUs = runtime.clock.nowUs();
    let authority = `${host}:${options.port}`;
    const app = createAgentApp({
      db: runtime.store.kysely,
      store: runtime.store,
      bus: runtime.bus,
      clock: runtime.clock,
      newId: runtime.newId,
      log,
      registry,
      policy,
      availableAdapters: new Set(Object.keys(adapters)),
      engine,
      attachTokens: createAttachTokens({ clock: runtime.clock }),
      turnEnds,
      metrics,
      allowedHosts,
      writeRequestLog: options.writeRequestLog,
      startedAtUs,
      isShuttingDown: () => shuttingDown,
      serverVersion: options.serverVersion,
      flushEvents: () => runtime.writer.flush(),
      boundAuthority: () => authority,
      stream,
      onSessionEnded: (sessionId) => stream.endSession(sessionId),
    });
    // item 5: the WebSocket on the same port
    // item 6: while requests begun before the stop finish, new ones are answered 503, not refused
    server = await listen(app.fetch, {
      host,
      port: options.port,
      onUpgrade: stream.upgrade,
      answerWhileDraining: true,
      maxBodyBytes: MAX_SERVICE_BODY_BYTES,
      // Node's own refusals (too slow, malformed HTTP, headers too large): the service error body with the
      // version headers every service answer carries, and a request-log line
      refusals: {
        headers: () => defaultVersionHeaders(),
        ...(options.writeRequestLog ? { writeRequestLog: options.writeRequestLog } : {}),
      },
    });
    authority = new URL(server.url).host;
  } catch (err) {
    await engine?.close?.();
    await runtime.close();
    if (!(err instanceof StopRequested)) throw err;
    return stoppedDuringStart(log, err.signal);
  }
  runtime.bus.announceSubscribers(); // the start succeeded: its bus.subscriber_registered events are due
  // item 5, last step: the gaps found at startup
  await publishRecoveredTurns(runtime.bus, recovered);
  if (recovered.length > 0)
    log.warn('turns left open by a stopped server were cancelled', {
      turns: recovered.map((t) => t.turn_id),
      reason: 'server_restart',
    });
  log.info('agent server listening', {
    url: server.url,
    models: registry.source,
    routing: policy.view().source,
    routing_version: policy.view().version,
    adapters: Object.keys(adapters),
  });
  const signal = await waitForStopSignal();
  shuttingDown = true;
  log.info('agent server stopping', { signal, active_turns: engine?.activeTurns() ?? 0 });
  // a second signal cuts the wait for requests in flight short; the trace is still flushed (DECISIONS §3)
  const stopListening = cutOffOnRepeatedStopSignal(server, log);
  try {
    await stop(options, server, runtime, engine, stream);
  } finally {
    stopListening();
  }
  log.info('agent server stopped');
}

/** A loopback address as requested; anything else is refused with an error log and 127.0.0.1 is bound. */
export function resolveServeHost(requested: string | undefined, log: Logger): string {
  const bare = requested?.trim().replace(/^\[|\]$/g, '');
  if (bare && !isLoopbackName(bare)) {
    log.error(
      `refusing to bind ${requested}: the agent server runs commands on this machine and binds loopback only; binding ${LOOPBACK_HOST}`,
      {
        requested_host: requested,
        host: LOOPBACK_HOST,
      },
    );
    return LOOPBACK_HOST;
  }
  return resolveLoopbackHost(requested, log);
}

// --- internal ---

function stoppedDuringStart(log: Logger, signal: NodeJS.Signals): void {
  log.info('agent server stopped during its start', { signal });
}

function pick(runtime: AgentRuntime) {
  return {
    store: runtime.store,
    bus: runtime.bus,
    clock: runtime.clock,
    newId: runtime.newId,
  };
}

/** item 6: turns cancelled, sockets closed, listener drained, engine and store closed, within the grace period. */
async function stop(
  options: RunAgentServerOptions<AgentRuntime>,
  server: Listening,
  runtime: AgentRuntime,
  engine: AgentEngine | undefined,
  stream: StreamServer,
): Promise<void> {
  const graceMs = options.graceMs ?? SHUTDOWN_GRACE_MS;
  const deadline = Date.now() + graceMs;
  const hard = setTimeout(() => {
    options.log.error('graceful shutdown overran its deadline; exiting now', { grace_ms: graceMs });
    (options.hardExit ?? (() => process.exit(1)))();
  }, graceMs);
  try {
    if (engine) await engine.cancelAll('server_shutdown');
    // item 6: sockets close with 1001 once the cancelled turns' last events went out
    await stream.closeAll();
    const { forced } = await server.close(Math.max(0, deadline - Date.now()));
    if (forced)
      options.log.warn('in-flight requests were cut off at the shutdown deadline', { grace_ms: graceMs });
    // a turn submission begun before the signal may have started its turn after the first sweep (the engine
    // cancels it at once): its end is awaited before the store closes
    if (engine) await engine.cancelAll('server_shutdown');
    await engine?.close?.();
    await runtime.close();
  } finally {
    clearTimeout(hard);
  }
}

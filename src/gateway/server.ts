/**
 * @module `svc gateway`: the start-up refusals of spec 1 §Deployment contract, the loopback bind, and the
 * graceful stop on SIGTERM/SIGINT (stop accepting, finish in-flight requests within 30 s, or at once on a
 * second signal, flush the trace writer, exit 0).
 */
import { assertBaseUrls } from '../config/base-urls.ts';
import type { SvcEnv } from '../config/env.ts';
import { positiveInt } from '../config/env-numbers.ts';
import { assertProviderKeysSendable } from '../config/provider-keys.ts';
import type { Bus } from '../events/bus.ts';
import { parseAllowedHosts } from '../http/host-check.ts';
import {
  assertPortBindable,
  type ClientTimeouts,
  cutOffOnRepeatedStopSignal,
  DEFAULT_CLIENT_TIMEOUTS,
  type Listening,
  listen,
  resolveLoopbackHost,
} from '../http/listen.ts';
import { SvcError } from '../lib/errors.ts';
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import { assertNoStopSignal, heldStopSignal, StopRequested, waitForStopSignal } from '../lib/stop-signal.ts';
import type { Clock } from '../lib/time.ts';
import { createMetricsCollector } from '../metrics/collector.ts';
import { createMetricsApp } from '../metrics/route.ts';
import type { Store } from '../store/open.ts';
import { createGatewayApp, type GatewayAppDeps, gatewayRefusals } from './app.ts';
import { createKeyCounts } from './key-counts.ts';
import { type GatewayKeys, type KeysLocation, openFileKeys, openTableKeys } from './keystore/gateway-keys.ts';
import type { KeyRecord } from './keystore/keystore.ts';

/** What the gateway needs from the command's runtime (cli/runtime.ts builds it; gateway never imports cli/). */
export interface GatewayRuntime {
  readonly store: Store;
  readonly bus: Bus;
  readonly clock: Clock;
  readonly newId: NewId;
  /** Flushes the trace writer and closes the store. */
  close(): Promise<void>;
}

/** Pipeline handlers and unauthenticated routes (/metrics) supplied once the runtime exists. */
export type GatewayExtensions = Pick<
  GatewayAppDeps,
  | 'handleMessages'
  | 'handleChatCompletions'
  | 'handleResponses'
  | 'handleCountTokens'
  | 'handleModels'
  | 'handleModel'
  | 'extraRoutes'
> & {
  /** The stop began: calls waiting to retry are cut off (503 service_shutting_down) rather than hold the drain. */
  stopBegan?: () => void;
  /** Releases what the extensions hold (the upstream connection pool) after the drain. */
  close?: () => Promise<void>;
  /** SVC_GATEWAY_MAX_BODY_BYTES: a request that declares more is refused before `100 Continue`. */
  maxBodyBytes?: number;
};

export interface RunGatewayOptions<R extends GatewayRuntime = GatewayRuntime> {
  env: SvcEnv;
  /** The keystore file, or the gateway_keys table of a PostgreSQL store. */
  keys: KeysLocation;
  port: number;
  /** Requested bind host (flag or SVC_GATEWAY_HOST); non-loopback values are rewritten. */
  host: string | undefined;
  log: Logger;
  /** Opens the trace store and bus; called only after the refusals pass. */
  openRuntime: () => Promise<R>;
  /** Builds the call path; `keys`: the records at start (the budget each key's past spend counts in). */
  extend?: (runtime: R, keys: readonly KeyRecord[]) => GatewayExtensions | Promise<GatewayExtensions>;
  writeRequestLog?: (line: string) => void;
  /** How long in-flight requests may take to finish after SIGTERM/SIGINT. */
  drainMs?: number;
}

export const DRAIN_MS = 30_000;

/** Starts the gateway; resolves once it has stopped after SIGTERM/SIGINT. */
export async function runGateway<R extends GatewayRuntime>(options: RunGatewayOptions<R>): Promise<void> {
  const { env, log } = options;
  assertProviderKey(env);
  assertBaseUrls(env);
  assertProviderKeysSendable(env);
  const fileKeys = options.keys.kind === 'file' ? openFileKeys(options.keys.path, log) : undefined;
  const clientTimeouts = resolveClientTimeouts(env);
  const allowedHosts = parseAllowedHosts(env.allowedHosts);
  const host = resolveLoopbackHost(options.host, log);
  // a stop signal during the start (held since the process began, lib/stop-signal.ts) ends it between
  // two slow steps: what was opened is closed and the process exits 0, as a stop after the start does
  const early = await heldStopSignal();
  if (early !== undefined) {
    await fileKeys?.close();
    return stoppedDuringStart(log, early);
  }
  await assertPortBindable(host, options.port); // a port in use refuses the start before the store is touched
  let runtime: R;
  try {
    runtime = await options.openRuntime();
  } catch (err) {
    // a stop while the store was opening (a PostgreSQL connection attempt that hangs) cut it short
    await fileKeys?.close();
    if (!(err instanceof StopRequested)) throw err;
    return stoppedDuringStart(log, err.signal);
  }
  let server: Listening;
  let extensions: GatewayExtensions = {};
  let keys: GatewayKeys | undefined = fileKeys;
  try {
    await assertNoStopSignal();
    keys ??= await openTableKeys(runtime.store, log);
    // spec 1 §GET /metrics: fed by the bus; key gauges polled from the keystore at scrape time
    const keyCounts = createKeyCounts(keys.records, runtime.clock);
    const metrics = createMetricsCollector({
      role: 'gateway',
      bus: runtime.bus,
      log,
      gauges: { keysActive: keyCounts.active, keysRevoked: keyCounts.revoked },
    });
    extensions = (await options.extend?.(runtime, keys.records())) ?? {};
    await assertNoStopSignal();
    const app = createGatewayApp({
      handleMessages: extensions.handleMessages,
      handleChatCompletions: extensions.handleChatCompletions,
      handleResponses: extensions.handleResponses,
      handleCountTokens: extensions.handleCountTokens,
      handleModels: extensions.handleModels,
      handleModel: extensions.handleModel,
      extraRoutes: [{ path: '/metrics', app: createMetricsApp(metrics) }, ...(extensions.extraRoutes ?? [])],
      keys: keys.cache,
      bus: runtime.bus,
      clock: runtime.clock,
      newId: runtime.newId,
      log,
      allowedHosts,
      writeRequestLog: options.writeRequestLog,
      startedAtMs: Date.now(),
    });
    server = await listen(app.fetch, {
      host,
      port: options.port,
      clientTimeouts,
      ...(extensions.maxBodyBytes !== undefined ? { maxBodyBytes: extensions.maxBodyBytes } : {}),
      refusals: gatewayRefusals(runtime.newId, options.writeRequestLog),
    });
  } catch (err) {
    await extensions.close?.();
    await keys?.close();
    await runtime.close();
    // a stop during a start step the store left unanswered closed its connections: the step's failure
    // is the stop's doing
    const stop = err instanceof StopRequested ? err.signal : await heldStopSignal();
    if (stop === undefined) throw err;
    return stoppedDuringStart(log, stop);
  }
  runtime.bus.announceSubscribers(); // the start succeeded: its bus.subscriber_registered events are due
  log.info('gateway listening', { url: server.url, keystore: keys.location, keys: keys.cache.size });
  const signal = await waitForStopSignal();
  log.info('gateway stopping', { signal, in_flight: server.inFlight });
  extensions.stopBegan?.();
  // a second signal cuts the drain short; the trace writer is still flushed (DECISIONS §3)
  const stopListening = cutOffOnRepeatedStopSignal(server, log);
  try {
    const { forced } = await server.close(options.drainMs ?? DRAIN_MS);
    if (forced)
      log.warn('in-flight requests were cut off before they finished', {
        drain_ms: options.drainMs ?? DRAIN_MS,
      });
    await extensions.close?.();
    await keys.close();
    await runtime.close();
  } finally {
    stopListening();
  }
  log.info('gateway stopped');
}

// --- internal ---

function stoppedDuringStart(log: Logger, signal: NodeJS.Signals): void {
  log.info('gateway stopped during its start', { signal });
}

function assertProviderKey(env: SvcEnv): void {
  if (env.anthropicApiKey || env.openaiApiKey || env.openrouterApiKey) return;
  throw new SvcError('startup_refused', {
    message:
      'The gateway refuses to start without a provider key; set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY and start it again.',
  });
}

function resolveClientTimeouts(env: SvcEnv): ClientTimeouts {
  const t: ClientTimeouts = {
    headersMs:
      positiveInt(env.gatewayHeadersTimeoutMs, 'SVC_GATEWAY_HEADERS_TIMEOUT_MS') ??
      DEFAULT_CLIENT_TIMEOUTS.headersMs,
    requestMs:
      positiveInt(env.gatewayRequestTimeoutMs, 'SVC_GATEWAY_REQUEST_TIMEOUT_MS') ??
      DEFAULT_CLIENT_TIMEOUTS.requestMs,
  };
  if (t.headersMs > t.requestMs) {
    // the headers are part of the request, so Node refuses a longer header timeout
    throw new SvcError('startup_refused', {
      message: `SVC_GATEWAY_HEADERS_TIMEOUT_MS (${t.headersMs}) must not exceed SVC_GATEWAY_REQUEST_TIMEOUT_MS (${t.requestMs}); fix one and start the gateway again.`,
    });
  }
  return t;
}

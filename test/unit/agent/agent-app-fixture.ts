/**
 * An agent app on a real temp store with the built-in registry and policy, for `app.request()` tests.
 * `engine` is whatever the test hands in (a double of the TurnEngine contract for route tests).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AgentAppDeps, createAgentApp } from '#src/agent/app.ts';
import { type AttachTokens, createAttachTokens } from '#src/agent/sessions/attach-tokens.ts';
import { createTurnEndWatch } from '#src/agent/sessions/turn-end-watch.ts';
import type { TurnEngine } from '#src/agent/turns/engine.ts';
import { type Bus, createBus } from '#src/events/bus.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { createMetricsCollector } from '#src/metrics/collector.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { loadRoutingPolicy } from '#src/routing/load-policy.ts';
import { openStore, type Store } from '#src/store/open.ts';

export interface AgentAppFixture {
  app: ReturnType<typeof createAgentApp>;
  store: Store;
  bus: Bus;
  workspace: string;
  /** JSON request helper: `call('POST', '/sessions', body)`. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  shuttingDown: { value: boolean };
}

export async function createAgentAppFixture(
  t: { after: (fn: () => unknown) => void },
  options: {
    engine?: TurnEngine;
    availableAdapters?: string[];
    attachTokens?: AttachTokens;
    stream?: AgentAppDeps['stream'];
  } = {},
): Promise<AgentAppFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-app-'));
  const store = await openStore(join(dir, 'svc.db'));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const newId = createIdFactory();
  const bus = createBus({ newId, clock: systemClock, log: silentLogger });
  const registry = loadModelRegistry(undefined);
  const shuttingDown = { value: false };
  const app = createAgentApp({
    db: store.kysely,
    store,
    bus,
    clock: systemClock,
    newId,
    log: silentLogger,
    registry,
    policy: loadRoutingPolicy({ path: undefined, registry, log: silentLogger }),
    availableAdapters: new Set(options.availableAdapters ?? ['anthropic']),
    engine: options.engine,
    attachTokens: options.attachTokens ?? createAttachTokens({ clock: systemClock }),
    stream: options.stream,
    turnEnds: createTurnEndWatch(bus),
    metrics: createMetricsCollector({ role: 'agent', log: silentLogger }),
    startedAtUs: systemClock.nowUs(),
    isShuttingDown: () => shuttingDown.value,
    serverVersion: '0.0.0-test',
  });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    app.request(`http://127.0.0.1:8421${path}`, {
      method,
      headers: {
        host: '127.0.0.1:8421',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  return { app, store, bus, workspace: dir, call, shuttingDown };
}

/**
 * The agent server's turn machinery in this test process, with every real part: a temp trace store, the
 * bus and trace writer, the built-in model registry and routing policy, adapters pointed at the fake
 * provider over HTTP (undici), the shared call runner, the workspace tools and the turn engine. Tests
 * script the fake, submit turns and read the events the bus carried (streaming ones included).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KyselyPlugin } from 'kysely';
import { createAdapters } from '#src/adapters/registry.ts';
import { createSession } from '#src/agent/sessions/store.ts';
import { childEnvFrom } from '#src/agent/tools/child-env.ts';
import { WORKSPACE_TOOLS } from '#src/agent/tools/registry.ts';
import { createTurnEngine } from '#src/agent/turns/create-engine.ts';
import type { TurnEngine } from '#src/agent/turns/engine.ts';
import { createBus } from '#src/events/bus.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { formatUs, systemClock } from '#src/lib/time.ts';
import { createRetryBudget, DEFAULT_RETRY_POLICY } from '#src/llm/retry.ts';
import { createCallRunner } from '#src/llm/runner.ts';
import { createUpstream } from '#src/llm/upstream.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { loadRoutingPolicy } from '#src/routing/load-policy.ts';
import { openStore, type Store } from '#src/store/open.ts';
import type { SessionRow } from '#src/store/schema.ts';
import { type RunningFakeProvider, startFakeProvider } from '../fake-provider/server.ts';
import { makeTempDir } from './svc.ts';

export type SeenEvent = EventEnvelope & { payload: Record<string, unknown> };

export interface AgentHarness {
  fake: RunningFakeProvider;
  store: Store;
  engine: TurnEngine;
  workspace: string;
  events: SeenEvent[];
  newSession(opts?: { active_model?: string; sticky?: boolean; workspace?: string }): Promise<SessionRow>;
  /** Resolves with the turn's end event (turn.completed or turn.cancelled). */
  turnEnd(turnId: string, sessionId?: string): Promise<SeenEvent>;
  /** Resolves with the first event of `type` (optionally of one turn) once published. */
  waitFor(type: string, turnId?: string): Promise<SeenEvent>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  confirmationTimeoutMs?: number;
  turnTimeoutMs?: number;
  maxSteps?: number;
  env?: NodeJS.ProcessEnv;
  /** Sees every query the turn engine makes (to hold one at a chosen moment). */
  enginePlugin?: KyselyPlugin;
  /** Called synchronously as each event is published (to act at an exact moment of a turn). */
  onEvent?: (e: SeenEvent, engine: TurnEngine) => void;
  /** A models.yaml text instead of the built-in table. */
  modelsYaml?: string;
}

export async function startAgentHarness(options: HarnessOptions = {}): Promise<AgentHarness> {
  const fake = await startFakeProvider();
  const tmp = makeTempDir('svc-agent-');
  const workspace = join(tmp.dir, 'ws');
  mkdirSync(workspace);
  const store = await openStore(join(tmp.dir, 'svc.db'));
  const newId = createIdFactory();
  const bus = createBus({ newId, clock: systemClock, log: silentLogger });
  const writer = createTraceWriter({ store, log: silentLogger });
  bus.subscribe(writer.subscriber);
  const events: SeenEvent[] = [];
  let started: TurnEngine | undefined;
  const waiters: Array<() => void> = [];
  bus.subscribe({
    name: 'test-recorder',
    handle(e) {
      events.push(e as SeenEvent);
      if (started) options.onEvent?.(e as SeenEvent, started);
      for (const w of waiters.splice(0)) w();
    },
  });
  let modelsPath: string | undefined;
  if (options.modelsYaml !== undefined) {
    modelsPath = join(tmp.dir, 'models.yaml');
    writeFileSync(modelsPath, options.modelsYaml);
  }
  const registry = loadModelRegistry(modelsPath);
  const policy = loadRoutingPolicy({ path: undefined, registry, log: silentLogger });
  const adapters = createAdapters({
    anthropic: { apiKey: 'sk-ant-test', baseUrl: fake.anthropicBaseUrl },
    openai: { apiKey: 'sk-openai-test', baseUrl: fake.openaiBaseUrl },
    openrouter: { apiKey: 'sk-or-test', baseUrl: fake.openrouterBaseUrl },
  });
  const upstream = createUpstream({ timeoutMs: 30_000, idleTimeoutMs: 30_000 });
  const llm = {
    bus,
    clock: systemClock,
    log: silentLogger,
    upstream,
    registry,
    retryPolicy: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
    retryBudget: createRetryBudget(),
  };
  const runner = createCallRunner({ bus, registry, policy, adapters, llm });
  const engine = createTurnEngine({
    db: options.enginePlugin ? store.kysely.withPlugin(options.enginePlugin) : store.kysely,
    bus,
    log: silentLogger,
    newId,
    clock: systemClock,
    runner,
    registry,
    policy,
    tools: WORKSPACE_TOOLS,
    childEnv: childEnvFrom(options.env ?? process.env),
    maxSteps: options.maxSteps ?? 50,
    confirmationTimeoutMs: options.confirmationTimeoutMs ?? 300_000,
    turnTimeoutMs: options.turnTimeoutMs ?? 1_800_000,
  });
  started = engine;
  const waitFor = (match: (e: SeenEvent) => boolean): Promise<SeenEvent> =>
    new Promise((resolve) => {
      const check = () => {
        const hit = events.find(match);
        if (hit) resolve(hit);
        else waiters.push(check);
      };
      check();
    });
  return {
    fake,
    store,
    engine,
    workspace,
    events,
    newSession: (opts = {}) =>
      createSession(store.kysely, {
        id: newId('sess_'),
        workspace_path: opts.workspace ?? workspace,
        active_model: opts.active_model ?? policy.current().globalDefault,
        routing_policy_version: policy.view().version,
        sticky: opts.sticky ?? false,
        now: formatUs(systemClock.nowUs()),
      }),
    turnEnd: (turnId) =>
      waitFor((e) => e.turn_id === turnId && (e.type === 'turn.completed' || e.type === 'turn.cancelled')),
    waitFor: (type, turnId) =>
      waitFor((e) => e.type === type && (turnId === undefined || e.turn_id === turnId)),
    async close() {
      await engine.cancelAll('test_end');
      await writer.stop();
      await store.close();
      await upstream.close();
      await fake.close();
      tmp.cleanup();
    },
  };
}

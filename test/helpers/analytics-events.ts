/**
 * Builders for the events the analytics endpoints read (llm.call_completed / llm.call_failed of gateway
 * and agent traffic, route.decided, turn events) and a seeded real store, for analytics unit tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type SqliteStore } from '#src/store/open.ts';
import { BASE_US, insertEvents, type SeedEvent, seqId } from './event-rows.ts';

export { BASE_US };
export const HOUR_US = 3_600_000_000;
export const DAY_US = 24 * HOUR_US;

export interface CallSpec {
  /** Microseconds after BASE_US. */
  at: number;
  type?: 'llm.call_completed' | 'llm.call_failed';
  model?: string;
  provider?: string;
  cost?: string | number | null;
  input?: number;
  output?: number;
  cached?: number;
  creation?: number;
  /** The part of `creation` written for one hour (on the payload only when given, as the call path does). */
  creationHour?: number;
  latency?: number | null;
  key?: string | null;
  user?: string | null;
  team?: string | null;
  shape?: 'anthropic' | 'openai' | null;
  session?: string | null;
  parent?: string | null;
  errorClass?: string | null;
  turn?: string;
  /** More payload fields (a provider's error message, a stop reason). */
  extra?: Record<string, unknown>;
}

/** One model call as the call path stamps it (agent calls: no key, no shape, a session). */
export function callEvent(id: string, c: CallSpec): SeedEvent {
  const type = c.type ?? 'llm.call_completed';
  const payload: Record<string, unknown> = {
    requested_model: null,
    model: c.model ?? 'anthropic:claude-sonnet-4-5',
    provider: c.provider ?? (c.model ?? 'anthropic:').split(':')[0],
    gateway_key_id: c.key === undefined ? 'gk_default' : c.key,
    inbound_shape: c.shape === undefined ? 'anthropic' : c.shape,
    user_id: c.user ?? null,
    team_id: c.team ?? null,
    parent_session_id: c.parent ?? null,
    latency_ms: c.latency === undefined ? 100 : c.latency,
    attempts: 1,
    error_class: c.errorClass ?? null,
  };
  if (c.cost !== null) {
    Object.assign(payload, {
      cost_usd: c.cost ?? '0.001',
      pricing_version: 'test',
      input_tokens: c.input ?? 10,
      output_tokens: c.output ?? 5,
      cached_input_tokens: c.cached ?? 0,
      cache_creation_input_tokens: c.creation ?? 0,
    });
    if (c.creationHour !== undefined) payload.cache_creation_1h_input_tokens = c.creationHour;
  }
  Object.assign(payload, c.extra);
  return {
    id,
    timestamp_us: BASE_US + c.at,
    type,
    actor: c.session ? 'agent' : 'gateway',
    session_id: c.session ?? null,
    turn_id: c.turn ?? `turn_${id}`,
    payload,
  };
}

export interface RouteSpec {
  at: number;
  chain: Array<{ policy: string; model?: string | null; verdict: string; validation_failure?: string }>;
  winner: number;
  chosen?: string | null;
  /** What the client asked for (route.decided's requested_model). */
  requested?: string;
}

export function routeEvent(id: string, r: RouteSpec): SeedEvent {
  return {
    id,
    timestamp_us: BASE_US + r.at,
    type: 'route.decided',
    actor: 'router',
    turn_id: `turn_${id}`,
    payload: {
      chain: r.chain.map((e) => ({ model: null, ...e })),
      winner_index: r.winner,
      chosen_model: r.chosen ?? null,
      elapsed_ms: 0.05,
      ...(r.requested === undefined ? {} : { requested_model: r.requested }),
    },
  };
}

/** A migrated store in a temp folder, removed in `t.after`. */
export async function tempStore(t: { after: (fn: () => unknown) => void }): Promise<SqliteStore> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-analytics-'));
  const store = await openStore(join(dir, 'svc.db'));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

/** Inserts the events in order with ascending ids (prefix keeps several seeds apart). */
export function seed(store: SqliteStore, events: Array<(id: string) => SeedEvent>, prefix = '01SEED'): void {
  insertEvents(store.db, events.length, (i) => events[i](seqId(i, prefix)));
}

/** A window [from, to) in microseconds after BASE_US. */
export function windowOf(from: number, to: number) {
  return { startUs: BASE_US + from, endUs: BASE_US + to };
}

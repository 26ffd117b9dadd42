/**
 * Seeds a trace store with routed requests exactly as the call runner, the gateway pipeline and the agent
 * turn write them (route.decided with its fingerprint, llm.call_*, turn.completed / turn.cancelled), with
 * one outcome each, so the pattern statistics can be checked against a known history.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { RouteFingerprint } from '#src/events/catalog.ts';
import { BASE_US, insertEvents, type SeedEvent } from '../../helpers/event-rows.ts';

export const HAIKU = 'anthropic:claude-haiku-4-5';
export const SONNET = 'anthropic:claude-sonnet-4-5';
export const MINI = 'openai:gpt-5-mini';
/** "Now" of the seeded history: every request is at most a day before it unless `atUs` says otherwise. */
export const NOW_US = BASE_US + 30 * 86_400_000_000;

export type Outcome =
  | 'ok'
  | 'call_failed' // llm.call_failed in the turn
  | 'call_cancelled' // llm.call_completed with error_class cancelled (the gateway's client left)
  | 'turn_cancelled' // turn.cancelled (agent)
  | 'error_code' // turn.completed with an error code
  | 'other_model' // a call in the turn ran on another model
  | 'no_call' // refused before any call (a quota refusal): not a sample
  | 'in_flight' // an agent turn still running: its first call completed, no turn end yet
  | 'gap'; // a killed process left it open: bus.gap_detected at the restart, no turn end

export interface SeedRequest {
  print: RouteFingerprint;
  model: string;
  cost?: string;
  outcome?: Outcome;
  /** Gateway traffic carries a key, agent traffic a session. */
  keyId?: string | null;
  sessionId?: string | null;
  atUs?: number;
}

let turnSeq = 0;
let eventSeq = 0;

/** Inserts each request's events in order; returns the turn ids. */
export function seedRequests(db: DatabaseSync, requests: readonly SeedRequest[]): string[] {
  const { events, turns } = requestEvents(requests);
  insertEvents(db, events.length, (i) => events[i]);
  return turns;
}

/** Each request's events in order (for a store of either engine), and the turn ids. */
export function requestEvents(requests: readonly SeedRequest[]): { events: SeedEvent[]; turns: string[] } {
  const events: SeedEvent[] = [];
  const turns: string[] = [];
  requests.forEach((r, i) => {
    const turn = `turn_${String(++turnSeq).padStart(8, '0')}`;
    turns.push(turn);
    const at = r.atUs ?? NOW_US - 86_400_000_000 + i * 1_000;
    const keyId = r.sessionId ? null : (r.keyId ?? 'gk_01TESTKEY');
    const ev = (type: string, payload: Record<string, unknown>, dt: number) =>
      events.push({
        id: `01PATTERN${String(++eventSeq).padStart(17, '0')}`,
        timestamp_us: at + dt,
        type,
        actor: type === 'route.decided' ? 'router' : r.sessionId ? 'agent' : 'gateway',
        session_id: r.sessionId ?? null,
        turn_id: turn,
        payload,
      });
    const cost = r.cost ?? '0.001000';
    const outcome = r.outcome ?? 'ok';
    ev(
      'route.decided',
      {
        chain: [{ policy: 'per_message_override', model: r.model, verdict: 'accepted' }],
        winner_index: 0,
        chosen_model: r.model,
        elapsed_ms: 0.05,
        requested_model: r.model,
        gateway_key_id: keyId,
        fingerprint: r.print,
      },
      0,
    );
    if (outcome === 'no_call') {
      ev(
        'turn.completed',
        { gateway_key_id: keyId, status: 429, error_code: 'quota_exceeded', cost_usd: '0' },
        1,
      );
      return;
    }
    const call = { model: outcome === 'other_model' ? MINI : r.model, gateway_key_id: keyId };
    if (outcome === 'call_failed')
      ev('llm.call_failed', { ...call, error_class: 'server_error', cost_usd: '0' }, 2);
    else
      ev(
        'llm.call_completed',
        { ...call, cost_usd: cost, error_class: outcome === 'call_cancelled' ? 'cancelled' : null },
        2,
      );
    if (outcome === 'in_flight') return;
    if (outcome === 'gap') ev('bus.gap_detected', { reason: 'process_ended' }, 3);
    else if (outcome === 'turn_cancelled') ev('turn.cancelled', { reason: 'user', cost_usd: cost }, 3);
    else
      ev(
        'turn.completed',
        {
          gateway_key_id: keyId,
          status: outcome === 'ok' || outcome === 'other_model' ? 200 : 502,
          error_code: outcome === 'ok' || outcome === 'other_model' ? null : 'upstream_error',
          cost_usd: cost,
        },
        3,
      );
  });
  return { events, turns };
}

/** `n` copies of a request. */
export function times(n: number, r: SeedRequest): SeedRequest[] {
  return Array.from({ length: n }, () => ({ ...r }));
}

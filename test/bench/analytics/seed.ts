/**
 * The analytics benchmark's store: N llm.call_completed events spread over 30 days (busier on weekdays
 * and working hours) with their route.decided events, gateway traffic of 60 keys in 12 teams and 400
 * users (1 in 10 calls untagged), agent traffic (1 in 5 calls: sessions, a quarter of them workers),
 * eight models at their real prices (one missing from the price table), prompt-cache reads and writes,
 * latencies with fractions of a millisecond, 1 in 100 requests a hard routing failure (no call), a few
 * rejections, and one
 * heavy user (`usr_heavy`, a tenth of the calls: about 200,000 rows with their routes) for the export. Deterministic (seeded).
 */
import type { DatabaseSync } from 'node:sqlite';
import { formatUs } from '#src/lib/time.ts';
import { priceCall } from '#src/models/pricing.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { openStore } from '#src/store/open.ts';

export const DAY_US = 86_400_000_000;

export interface SeedSummary {
  calls: number;
  events: number;
  sessions: number;
  /** The dataset's end: every event is before it, the 30 days before it hold them all. */
  endUs: number;
  heavyUserRows: number;
  seconds: number;
}

const MODELS: Array<[string, number]> = [
  ['anthropic:claude-sonnet-4-5', 30],
  ['anthropic:claude-haiku-4-5', 20],
  ['openai:gpt-5-mini', 18],
  ['openai:gpt-5', 10],
  ['anthropic:claude-opus-4-5', 6],
  ['openrouter:meta-llama/llama-3.3-70b-instruct', 8],
  ['openai:gpt-4.1', 7.5],
  ['openrouter:mistralai/unlisted-model', 0.5], // not in the price table
];

export async function seedAnalyticsStore(path: string, calls: number, endUs: number): Promise<SeedSummary> {
  const started = performance.now();
  const registry = loadModelRegistry(undefined);
  const store = await openStore(path);
  const rnd = prng(12);
  const pickModel = weighted(MODELS);
  const startUs = endUs - 30 * DAY_US;
  const sessions = Math.max(1, Math.round(calls / 40));
  let events = 0;
  let heavy = 0;
  const insert = prepareInsert(store.db);
  const BATCH = 50_000;
  for (let from = 0; from < calls; from += BATCH) {
    store.db.exec('BEGIN IMMEDIATE');
    for (let i = from; i < Math.min(calls, from + BATCH); i++) {
      const at = startUs + spreadUs(i / calls, rnd);
      const model = pickModel(rnd());
      const agent = rnd() < 0.2;
      const session = agent ? Math.floor(rnd() * sessions) : -1;
      const worker = agent && session % 4 === 3;
      const heavyUser = !agent && rnd() < 0.125;
      const key = Math.floor(rnd() * 60);
      const user = agent
        ? null
        : heavyUser
          ? 'usr_heavy'
          : rnd() < 0.1
            ? null
            : `usr_${Math.floor(rnd() * 400)}`;
      const turn = `turn_${String(i).padStart(9, '0')}`;
      const usage = tokens(model, rnd);
      const cost = priceCall(registry, model, usage);
      insert(
        ev(`${idAt(at)}A${i}`, at - 1500, 'route.decided', 'router', agent ? `sess_${session}` : null, turn, {
          chain: chain(false, model, rnd),
          winner_index: 6,
          chosen_model: model,
          elapsed_ms: 0.04,
          requested_model: null,
          gateway_key_id: agent ? null : `gk_${key}`,
          inbound_shape: agent ? null : 'anthropic',
          user_id: user,
          team_id: agent ? null : `team_${key % 12}`,
        }),
      );
      events++;
      if (user === 'usr_heavy') heavy++;
      if (rnd() < 0.01) {
        // a request nothing could serve: its own turn, a hard failure and no call
        insert(
          ev(`${idAt(at)}H${i}`, at - 1000, 'route.decided', 'router', null, `${turn}h`, {
            chain: chain(true, model, rnd),
            winner_index: -1,
            chosen_model: null,
            elapsed_ms: 0.05,
            gateway_key_id: `gk_${key}`,
            user_id: null,
          }),
        );
        events++;
      }
      insert(
        ev(
          `${idAt(at)}B${i}`,
          at,
          'llm.call_completed',
          agent ? 'agent' : 'gateway',
          agent ? `sess_${session}` : null,
          turn,
          {
            requested_model: null,
            model,
            provider: model.split(':')[0],
            gateway_key_id: agent ? null : `gk_${key}`,
            inbound_shape: agent ? null : rnd() < 0.6 ? 'anthropic' : 'openai',
            user_id: user,
            team_id: agent ? null : `team_${key % 12}`,
            parent_session_id: worker ? `sess_${session - 1}` : null,
            cost_usd: cost.cost_usd,
            pricing_version: cost.pricing_version,
            ...usage,
            latency_ms: Math.round((300 + rnd() ** 3 * 30_000) * 1000) / 1000,
            ttft_ms: 250,
            stop_reason: 'end_turn',
            error_class: null,
            attempts: 1,
          },
        ),
      );
      events++;
      if (user === 'usr_heavy') heavy++;
    }
    store.db.exec('COMMIT');
  }
  insertSessions(store.db, sessions, endUs);
  await store.close();
  return {
    calls,
    events,
    sessions,
    endUs,
    heavyUserRows: heavy,
    seconds: (performance.now() - started) / 1000,
  };
}

// --- internal ---

type Row = [string, string, number, string | null, string, string, string, string];

function prepareInsert(db: DatabaseSync): (row: Row) => void {
  const stmt = db.prepare(
    `INSERT INTO events (id, timestamp, timestamp_us, session_id, turn_id, type, actor, payload, parent_event_id, sensitivity)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, 'pseudonymous')`,
  );
  return (r) => {
    stmt.run(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
  };
}

function ev(
  id: string,
  us: number,
  type: string,
  actor: string,
  session: string | null,
  turn: string,
  payload: object,
): Row {
  return [id, formatUs(us), us, session, turn, type, actor, JSON.stringify(payload)];
}

/** A sortable id by time (ULIDs sort by time too). */
function idAt(us: number): string {
  return `01B${String(us).padStart(17, '0')}`;
}

/** Position `f` (0..1) of the 30 days, nudged towards working hours and weekdays. */
function spreadUs(f: number, rnd: () => number): number {
  const base = f * 30 * DAY_US;
  const hourOfDay = (base % DAY_US) / 3_600_000_000;
  const busy = hourOfDay >= 8 && hourOfDay < 19 ? 0 : rnd() < 0.5 ? 3_600_000_000 * (rnd() * 4) : 0;
  return Math.min(30 * DAY_US - 2000, Math.floor(base + busy));
}

function tokens(model: string, rnd: () => number) {
  const input = Math.floor(200 + rnd() ** 2 * 12_000);
  const cacheable = model.startsWith('anthropic:') || model.startsWith('openai:');
  return {
    input_tokens: input,
    output_tokens: Math.floor(50 + rnd() ** 2 * 2_500),
    cached_input_tokens: cacheable && rnd() < 0.6 ? Math.floor(rnd() * 20_000) : 0,
    cache_creation_input_tokens:
      model.startsWith('anthropic:') && rnd() < 0.2 ? Math.floor(rnd() * 4_000) : 0,
  };
}

function chain(hard: boolean, model: string, rnd: () => number) {
  const entries: object[] = [
    { policy: 'per_message_override', model: null, verdict: 'no_match' },
    { policy: 'manual_sticky', model: null, verdict: 'no_match' },
    rnd() < 0.03
      ? {
          policy: 'rule',
          model: 'openai:gpt-4o',
          verdict: 'rejected',
          validation_failure: 'model_not_allowed',
        }
      : { policy: 'rule', model: null, verdict: 'no_match' },
    { policy: 'pattern', model: null, verdict: 'no_match' },
    { policy: 'delegate_request', model: null, verdict: 'no_match' },
    { policy: 'workspace_default', model: null, verdict: 'no_match' },
  ];
  entries.push(
    hard
      ? { policy: 'global_default', model, verdict: 'rejected', validation_failure: 'provider_unavailable' }
      : { policy: 'global_default', model, verdict: 'accepted' },
  );
  return entries;
}

function insertSessions(db: DatabaseSync, count: number, endUs: number): void {
  const stmt = db.prepare(
    `INSERT INTO sessions (id, workspace_path, active_model, created_at, updated_at, routing_policy_version, turn_count, cost_so_far_usd, is_worker, parent_session_id)
     VALUES (?, ?, 'anthropic:claude-sonnet-4-5', ?, ?, 'bench', ?, ?, ?, ?)`,
  );
  db.exec('BEGIN IMMEDIATE');
  for (let s = 0; s < count; s++) {
    const worker = s % 4 === 3;
    const at = endUs - (count - s) * 60_000_000;
    stmt.run(
      `sess_${s}`,
      `/work/project-${s % 30}`,
      formatUs(at),
      formatUs(at + 600_000_000),
      1 + (s % 9),
      `${s % 97}.${String(s % 1000).padStart(3, '0')}`,
      worker ? 1 : 0,
      worker ? `sess_${s - 1}` : null,
    );
  }
  db.exec('COMMIT');
}

function prng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 48271) % 2147483647;
    return x / 2147483647;
  };
}

function weighted(items: Array<[string, number]>): (r: number) => string {
  const total = items.reduce((n, [, w]) => n + w, 0);
  return (r) => {
    let acc = 0;
    for (const [name, w] of items) {
      acc += w / total;
      if (r < acc) return name;
    }
    return items[items.length - 1][0];
  };
}

/**
 * One set of spend events for any store (appended through the store, so both engines hold the same rows)
 * and every spend endpoint's answer over it, keyed by endpoint and parameters: the cost query under each
 * group_by × filter set × window, and the other six endpoints per window.
 */
import {
  GROUP_BY,
  queryByKey,
  queryByTeam,
  queryCacheEffectiveness,
  queryCost,
  queryReliability,
  queryRouting,
  querySavings,
  type SpendFilters,
  type TimeWindow,
} from '#src/analytics/index.ts';
import { DEFAULT_MODELS_YAML } from '#src/models/default-models.ts';
import { parseModelRegistry } from '#src/models/registry.ts';
import type { Store } from '#src/store/open.ts';
import { type CallSpec, callEvent, DAY_US, HOUR_US, routeEvent, windowOf } from './analytics-events.ts';
import { eventRowOf, type SeedEvent, seqId } from './event-rows.ts';

const HAIKU = 'anthropic:claude-haiku-4-5';
const MINI = 'openai:gpt-5-mini';
const MINI_PRICES = 'prices: { input: 0.25, output: 2, cache_read: 0.025, web_search: 10 }';
/** The built-in table with a priority tier on gpt-5-mini, which savings re-price its priority calls at. */
const TIERED = DEFAULT_MODELS_YAML.replace(
  MINI_PRICES,
  `${MINI_PRICES}\n    service_tiers: { priority: { input: 0.45, output: 3.60 } }`,
);

/**
 * Calls and routes over eight days: exact-sum edge costs, a cost that is no number, agent and worker calls,
 * failures, ties.
 */
export async function seedSpend(store: Store): Promise<void> {
  const rejected = {
    policy: 'rule',
    model: 'openai:x',
    verdict: 'rejected',
    validation_failure: 'model_not_configured',
  };
  const calls: CallSpec[] = [
    // savings price the one-hour part of the writes at cache_write_1h
    {
      at: HOUR_US,
      user: 'u1',
      team: 't1',
      key: 'gk_a',
      cost: '0.1',
      input: 100,
      cached: 50,
      creation: 10,
      creationHour: 4,
    },
    {
      at: 2 * HOUR_US,
      user: 'u2',
      team: 't1',
      key: 'gk_a',
      model: MINI,
      shape: 'openai',
      cost: '0.2',
      latency: 5.5,
    },
    // billed at the priority tier (savings re-price it there), with one-hour writes of its own
    {
      at: 2.5 * HOUR_US,
      key: 'gk_a',
      model: MINI,
      shape: 'openai',
      cost: '0.0009',
      input: 1000,
      output: 100,
      creation: 20,
      creationHour: 8,
      extra: { service_tier: 'priority' },
    },
    // past the nano-dollar form (more than 9 integer digits), then a JSON number and a sub-nano cost
    { at: 26 * HOUR_US, user: 'u1', team: 't2', key: 'gk_b', cost: '12345678901.123456789' },
    { at: 27 * HOUR_US, key: 'gk_b', cost: 1e-7 },
    { at: 30 * HOUR_US, key: null, shape: null, session: 'sess_p', cost: '0.000000001', latency: null },
    { at: 31 * HOUR_US, key: null, shape: null, session: 'sess_w', parent: 'sess_p', cost: '0.5' },
    {
      at: 32 * HOUR_US,
      type: 'llm.call_failed',
      key: null,
      shape: null,
      session: 'sess_p',
      cost: '0.25',
      errorClass: 'cancelled',
    },
    // text from a provider or a client may hold NUL, which the gateway stores as the escape \u0000 and
    // PostgreSQL's json refuses to extract: the rows must read as on SQLite, not fail the whole report
    {
      at: 33 * HOUR_US,
      type: 'llm.call_failed',
      cost: null,
      errorClass: 'overloaded',
      extra: { message: 'upstream said bad\u0000nul' },
    },
    { at: 34 * HOUR_US, type: 'llm.call_failed', model: MINI, cost: null, errorClass: 'rate_limited' },
    // a cost that is no number (another tool's row, a hand edit): a call with tokens but no cost, never a
    // failed query
    { at: 34.5 * HOUR_US, key: 'gk_d', cost: 'n/a' },
    // equal costs: the tie orders by key
    { at: 35 * HOUR_US, key: 'gk_d', cost: '0.3', extra: { stop_reason: 'end\u0000turn' } },
    { at: 36 * HOUR_US, key: 'gk_c', user: 'u3', team: 't2', cost: '0.3' },
    // latencies 1..20 in shuffled order, and six more on another model
    ...Array.from({ length: 20 }, (_, i) => ({
      at: 2 * DAY_US + i * HOUR_US,
      model: HAIKU,
      user: i % 2 ? 'u1' : null,
      team: i % 2 ? 't1' : null,
      key: i % 3 ? 'gk_a' : 'gk_b',
      cost: '0.001',
      latency: ((i * 7) % 20) + 1,
    })),
    ...[3, 12.5, 7, 1.25, 9, 4].map((latency, i) => ({
      at: 3 * DAY_US + i * HOUR_US,
      model: MINI,
      shape: 'openai' as const,
      cost: '0.0000000005',
      latency,
    })),
    // the window's end is exclusive; all time sees both
    { at: 7 * DAY_US, cost: '1000' },
    { at: 8 * DAY_US, cost: '100' },
  ];
  const routes = [
    {
      at: 3 * HOUR_US,
      chain: [rejected, { policy: 'global_default', verdict: 'accepted' }],
      winner: 1,
      chosen: 'anthropic:claude-sonnet-4-5',
      requested: 'sonnet\u0000',
    },
    { at: 4 * HOUR_US, chain: [rejected], winner: -1 },
    { at: 5 * HOUR_US, chain: [{ policy: 'rule', verdict: 'accepted' }], winner: 1.5 },
    { at: 6 * HOUR_US, chain: [{ policy: 'rule', verdict: 'accepted' }], winner: 5 },
    {
      at: 7 * HOUR_US,
      chain: [{ policy: 'rule', model: 'openai:x', verdict: 'accepted' }],
      winner: 0,
      chosen: 'openai:x',
    },
    { at: 8 * DAY_US, chain: [{ policy: 'pattern', verdict: 'accepted' }], winner: 0, chosen: MINI },
  ];
  const events: SeedEvent[] = [
    ...calls.map((c, i) => callEvent(seqId(i, '01SPC'), c)),
    ...routes.map((r, i) => routeEvent(seqId(i, '01SPR'), r)),
  ];
  await store.appendEvents(events.map(eventRowOf));
}

const WINDOWS: Record<string, TimeWindow> = {
  WEEK: windowOf(0, 7 * DAY_US),
  ALL_TIME: { startUs: null, endUs: null },
  NARROW: windowOf(HOUR_US, 26 * HOUR_US + 1),
};

const FILTERS: Record<string, SpendFilters> = {
  all: { gatewayKey: null, user: null, team: null, includeWorkers: true },
  planners: { gatewayKey: null, user: null, team: null, includeWorkers: false },
  team: { gatewayKey: null, user: null, team: 't1', includeWorkers: true },
  every: { gatewayKey: 'gk_a', user: 'u1', team: 't1', includeWorkers: false },
};

/** Each endpoint's answer as its JSON would carry it, by `endpoint window [params]`. */
export async function spendAnswers(store: Store): Promise<Map<string, unknown>> {
  const db = store.kysely;
  const registry = parseModelRegistry(TIERED, 'models.yaml');
  const answers = new Map<string, unknown>();
  for (const [w, window] of Object.entries(WINDOWS)) {
    for (const groupBy of GROUP_BY)
      for (const [f, filters] of Object.entries(FILTERS))
        answers.set(`cost ${w} ${groupBy} ${f}`, await queryCost(db, { window, groupBy, filters }));
    answers.set(`cache_effectiveness ${w}`, await queryCacheEffectiveness(db, window));
    answers.set(`routing ${w}`, await queryRouting(db, window));
    answers.set(`reliability ${w}`, await queryReliability(db, window));
    answers.set(`savings ${w}`, await querySavings(db, registry, { window, baseline: undefined }));
    answers.set(`savings ${w} ${MINI}`, await querySavings(db, registry, { window, baseline: MINI }));
    for (const key of [null, 'gk_a'])
      answers.set(`by_key ${w} ${key}`, await queryByKey(db, { window, gatewayKey: key }));
    for (const team of [null, 't1'])
      answers.set(`by_team ${w} ${team}`, await queryByTeam(db, { window, team }));
  }
  // as the envelope serializes them (a NaN or -0 would not survive)
  return new Map([...answers].map(([k, v]) => [k, JSON.parse(JSON.stringify(v))]));
}

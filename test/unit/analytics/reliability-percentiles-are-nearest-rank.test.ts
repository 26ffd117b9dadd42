/**
 * GET /analytics/reliability's query: llm.call_failed counted by model, provider and error class, and
 * p50/p95 of llm.call_completed latencies per model by nearest rank, checked against a sort of the same
 * values (fractional milliseconds, ties, single samples, buckets crowded with equal values).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queryReliability } from '#src/analytics/index.ts';
import { callEvent, DAY_US, seed, tempStore, windowOf } from '../../helpers/analytics-events.ts';

/** Nearest rank: the value at rank ceil(p/100 × n) in ascending order. */
function nearestRank(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1];
}

test('p50 and p95 per model equal the nearest-rank values of their latencies', async (t) => {
  const store = await tempStore(t);
  let x = 7;
  const next = () => {
    x = (x * 48271) % 2147483647;
    return x / 2147483647;
  };
  const latencies: Record<string, number[]> = {
    'anthropic:claude-sonnet-4-5': Array.from({ length: 997 }, () => Math.round(next() * 9_000_000) / 1000),
    'openai:gpt-5-mini': [
      ...Array.from({ length: 40 }, () => 250.125),
      ...Array.from({ length: 13 }, (_, i) => 250 + i),
    ],
    'anthropic:claude-haiku-4-5': [42.5],
  };
  const events = Object.entries(latencies).flatMap(([model, list]) =>
    list.map((latency, i) => (id: string) => callEvent(id, { at: i, model, latency })),
  );
  // not latencies: a failed call, a completed call without latency, a cancelled agent call's usage
  events.push((id) => callEvent(id, { at: 1, latency: null }));
  events.push((id) =>
    callEvent(id, { at: 2, type: 'llm.call_failed', latency: 1e9, errorClass: 'cancelled' }),
  );
  seed(store, events);
  const r = await queryReliability(store.kysely, windowOf(0, DAY_US));
  assert.deepEqual(
    r.latency_ms_by_model,
    Object.entries(latencies)
      .map(([model, list]) => ({
        model,
        p50: nearestRank(list, 50),
        p95: nearestRank(list, 95),
        sample_size: list.length,
      }))
      .sort((a, b) => b.sample_size - a.sample_size),
  );
});

test('errors are counted by model, provider and class from llm.call_failed only', async (t) => {
  const store = await tempStore(t);
  const failed =
    (errorClass: string, model = 'openai:gpt-5') =>
    (id: string) =>
      callEvent(id, { at: 5, type: 'llm.call_failed', model, cost: null, errorClass });
  seed(store, [
    failed('rate_limit'),
    failed('rate_limit'),
    failed('overloaded', 'anthropic:claude-opus-4-5'),
    failed('cancelled', 'anthropic:claude-opus-4-5'),
    (id) => callEvent(id, { at: 6, errorClass: 'cancelled' }), // a gateway call the client left: completed
    (id) => ({ ...failed('timeout')(id), timestamp_us: 0 }), // outside the window
  ]);
  const r = await queryReliability(store.kysely, windowOf(0, DAY_US));
  assert.deepEqual(r.errors_by_class, [
    { model: 'openai:gpt-5', provider: 'openai', error_class: 'rate_limit', count: 2 },
    { model: 'anthropic:claude-opus-4-5', provider: 'anthropic', error_class: 'cancelled', count: 1 },
    { model: 'anthropic:claude-opus-4-5', provider: 'anthropic', error_class: 'overloaded', count: 1 },
  ]);
});

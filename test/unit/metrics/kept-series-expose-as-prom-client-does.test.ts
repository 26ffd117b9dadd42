/**
 * The collector keeps its counters' and histograms' series itself and writes them into prom-client at scrape
 * (metrics/series.ts; a histogram through prom-client 15's internal hashMap). Their exposition must be what
 * prom-client's own inc and observe give for the same calls, byte for byte: series order, label order,
 * buckets on their bounds, float sums added in order, a metric without labels shown before it moved.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { parseDecimal } from '#src/lib/decimal.ts';
import { LLM_LATENCY_BUCKETS, ROUTING_LATENCY_BUCKETS } from '#src/metrics/collector.ts';
import { createDecimalCounter } from '#src/metrics/decimal-counter.ts';
import { createCounterSeries, createHistogramSeries } from '#src/metrics/series.ts';

/** The same metrics twice: prom-client fed directly (the reference) and fed from svc's kept series. */
function pair() {
  const reference = new Registry();
  const kept = new Registry();
  const calls = createCounterSeries(['provider', 'model', 'status']);
  const latency = createHistogramSeries(['provider', 'model'], LLM_LATENCY_BUCKETS);
  const routing = createHistogramSeries([], ROUTING_LATENCY_BUCKETS);
  const reasons = createCounterSeries(['reason']);
  const cost = createDecimalCounter(['gateway_key_id']);
  const make = (registry: Registry, collect: Record<string, ((this: any) => void) | undefined>) => ({
    calls: new Counter({
      name: 'calls_total',
      help: 'c',
      labelNames: ['provider', 'model', 'status'],
      registers: [registry],
      collect: collect.calls,
    }),
    latency: new Histogram({
      name: 'latency_seconds',
      help: 'h',
      labelNames: ['provider', 'model'],
      buckets: [...LLM_LATENCY_BUCKETS],
      registers: [registry],
      collect: collect.latency,
    }),
    routing: new Histogram({
      name: 'routing_seconds',
      help: 'h',
      buckets: [...ROUTING_LATENCY_BUCKETS],
      registers: [registry],
      collect: collect.routing,
    }),
    reasons: new Counter({
      name: 'reasons_total',
      help: 'never moved',
      labelNames: ['reason'],
      registers: [registry],
      collect: collect.reasons,
    }),
    cost: new Counter({
      name: 'cost_total',
      help: 'c',
      labelNames: ['gateway_key_id'],
      registers: [registry],
      collect: collect.cost,
    }),
  });
  const ref = make(reference, {});
  make(kept, {
    calls() {
      calls.export(this);
    },
    latency() {
      latency.export(this);
    },
    routing() {
      routing.export(this);
    },
    reasons() {
      reasons.export(this);
    },
    cost() {
      cost.export(this);
    },
  });
  let refCost = new Map<string, number>();
  return {
    reference,
    kept,
    inc(provider: string, model: string, status: string) {
      ref.calls.inc({ provider, model, status });
      calls.inc(provider, model, status);
    },
    observe(seconds: number, provider: string, model: string) {
      ref.latency.observe({ provider, model }, seconds);
      latency.observe(seconds, provider, model);
    },
    route(seconds: number) {
      ref.routing.observe({}, seconds);
      routing.observe(seconds);
    },
    /** The reference adds floats (exact here: the amounts are dyadic), the kept counter decimals. */
    cost(amount: string, key: string) {
      refCost = new Map(refCost).set(key, (refCost.get(key) ?? 0) + Number(amount));
      ref.cost.reset();
      for (const [k, v] of refCost) ref.cost.inc({ gateway_key_id: k }, v);
      cost.add(parseDecimal(amount), key);
    },
  };
}

test('kept counters and histograms scrape exactly as prom-client fed directly', async () => {
  const p = pair();
  // both empty: the labelled ones show their HELP and TYPE only, the one without labels its zero series
  assert.equal(await p.kept.metrics(), await p.reference.metrics());

  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  const models = ['openai:gpt-5-mini', 'anthropic:claude-haiku-4-5', 'unknown', 'openai:a,provider:x'];
  const providers = ['openai', 'anthropic', 'unknown'];
  for (let i = 0; i < 3000; i++) {
    const provider = pick(providers);
    const model = pick(models);
    p.inc(provider, model, pick(['ok', 'rate_limit', 'server_error']));
    // on a bound (counted in it), just above one, tiny, past the last bound
    const seconds = pick([
      pick(LLM_LATENCY_BUCKETS),
      pick(LLM_LATENCY_BUCKETS) + 1e-9,
      random() * 3,
      random() * 200,
      0,
    ]);
    p.observe(seconds, provider, model);
    p.route(random() < 0.5 ? pick(ROUTING_LATENCY_BUCKETS) : random() * 0.7);
    p.cost(pick(['0.5', '0.25', '1', '0.125']), pick(['gk_A', 'null', 'gk_B']));
    // scraped while moving, and twice in a row: a scrape rewrites prom-client, never adds to it
    if (i % 700 === 0) {
      assert.equal(await p.kept.metrics(), await p.reference.metrics());
      assert.equal(await p.kept.metrics(), await p.reference.metrics());
    }
  }
  const kept = await p.kept.metrics();
  assert.equal(kept, await p.reference.metrics());
  assert.match(kept, /latency_seconds_bucket\{le="\+Inf",provider="openai",model="openai:gpt-5-mini"\} \d+/);
});

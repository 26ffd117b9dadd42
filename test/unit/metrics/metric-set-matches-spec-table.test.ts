import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { register as globalRegistry } from 'prom-client';
import { silentLogger } from '#src/lib/log.ts';
import {
  createMetricsCollector,
  LLM_LATENCY_BUCKETS,
  METRIC_NAMES,
  METRICS,
  type MetricName,
  metricNamesFor,
  ROUTING_LATENCY_BUCKETS,
  TOOL_LATENCY_BUCKETS,
} from '#src/metrics/collector.ts';
import { parseExposition } from '../../helpers/prometheus-exposition.ts';
import { ROOT } from '../../helpers/svc.ts';

const SPEC = join(ROOT, '..', 'shared', 'spec', '1-gateway-metrics-versioning.md');
const specAvailable = existsSync(SPEC);

/** Rows `| svc_… | type | labels | fed by |` of spec 1 §GET /metrics. */
function specTable(): Map<string, { type: string; labels: string[] }> {
  const rows = new Map<string, { type: string; labels: string[] }>();
  for (const line of readFileSync(SPEC, 'utf8').split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (!/^svc_[a-z_]+$/.test(cells[1] ?? '')) continue;
    const names = cells[3].replace(/\([^)]*\)/g, ''); // drop value lists such as (`key`, `user`, `team`)
    const labels = names === 'none' ? [] : names.split(',').map((l) => l.trim());
    rows.set(cells[1], { type: cells[2], labels });
  }
  return rows;
}

test('the metric set is the sixteen rows of the spec table with the same types and labels', {
  skip: !specAvailable && 'spec folder not beside the repository',
}, () => {
  const table = specTable();
  assert.equal(table.size, 16);
  assert.deepEqual([...METRIC_NAMES].sort(), [...table.keys()].sort());
  for (const [name, row] of table) {
    const def = METRICS[name as MetricName];
    assert.equal(def.type, row.type, name);
    assert.deepEqual([...def.labels], row.labels, name);
  }
});

test('names follow svc_<subject>_<quantity>[_unit] with _total for counters and _seconds for durations', () => {
  for (const name of METRIC_NAMES) {
    const def = METRICS[name];
    assert.match(name, /^svc_[a-z]+(_[a-z]+)+$/);
    assert.equal(def.type === 'counter', name.endsWith('_total'), name);
    if (def.type === 'histogram') assert.ok(name.endsWith('_seconds'), name);
  }
});

test('a fresh gateway scrape exposes every gateway metric with its type, and no session count', async () => {
  const collector = createMetricsCollector({ role: 'gateway', log: silentLogger });
  const families = await parseExposition(await collector.scrape());
  assert.deepEqual([...families.keys()], metricNamesFor('gateway'));
  assert.ok(!families.has('svc_session_count'));
  assert.equal(families.size, 15);
  for (const [name, family] of families) assert.equal(family.type, METRICS[name as MetricName].type, name);
});

test('a fresh agent scrape exposes svc_session_count and omits the gateway key gauges', async () => {
  const collector = createMetricsCollector({
    role: 'agent',
    log: silentLogger,
    gauges: { sessionCount: () => 4 },
  });
  const families = await parseExposition(await collector.scrape());
  assert.deepEqual([...families.keys()], metricNamesFor('agent'));
  assert.ok(!families.has('svc_gateway_keys_active'));
  assert.ok(!families.has('svc_gateway_keys_revoked'));
  assert.equal(families.get('svc_session_count')?.samples[0].value, 4);
});

test('histogram buckets: the spec list for LLM latency, 100 µs–500 ms for routing, 5 ms–30 s for tools', () => {
  assert.deepEqual([...LLM_LATENCY_BUCKETS], [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]);
  assert.equal(ROUTING_LATENCY_BUCKETS[0], 0.0001);
  assert.equal(ROUTING_LATENCY_BUCKETS.at(-1), 0.5);
  assert.equal(TOOL_LATENCY_BUCKETS[0], 0.005);
  assert.equal(TOOL_LATENCY_BUCKETS.at(-1), 30);
  for (const buckets of [LLM_LATENCY_BUCKETS, ROUTING_LATENCY_BUCKETS, TOOL_LATENCY_BUCKETS]) {
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i] > buckets[i - 1]);
  }
});

test('each collector owns a private registry and the global default registry stays empty', async () => {
  const a = createMetricsCollector({ role: 'gateway', log: silentLogger });
  const b = createMetricsCollector({ role: 'gateway', log: silentLogger });
  assert.notEqual(a.registry, b.registry);
  assert.equal(a.registry.getSingleMetric('svc_llm_calls_total') === undefined, false);
  assert.deepEqual(await globalRegistry.getMetricsAsJSON(), []);
});

test('the content type is exactly the Prometheus 0.0.4 text type', () => {
  const collector = createMetricsCollector({ role: 'gateway', log: silentLogger });
  assert.equal(collector.contentType, 'text/plain; version=0.0.4; charset=utf-8');
});

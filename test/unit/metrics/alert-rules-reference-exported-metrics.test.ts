import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parser } from '@prometheus-io/lezer-promql';
import { load } from 'js-yaml';
import { METRICS, type MetricName, metricNamesFor } from '#src/metrics/collector.ts';
import { ROOT } from '../../helpers/svc.ts';

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const FILE = join(ROOT, 'src/metrics/alert-rules.yaml');
const doc = load(readFileSync(FILE, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> };
const rules = doc.groups.flatMap((g) => g.rules);

/** Metric names selected by a PromQL expression, from the official grammar's syntax tree. */
function selectedMetrics(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  const cursor = tree.cursor();
  do {
    assert.ok(!cursor.type.isError, `syntax error in ${expr} at ${cursor.from}`);
    if (cursor.name === 'Identifier' && cursor.node.parent?.name === 'VectorSelector') {
      names.push(expr.slice(cursor.from, cursor.to));
    }
  } while (cursor.next());
  return names;
}

/** What a Prometheus server sees from the gateway: each name, plus _bucket/_sum/_count for histograms. */
function exportedSeriesNames(): Set<string> {
  const out = new Set<string>();
  for (const name of metricNamesFor('gateway')) {
    out.add(name);
    if (METRICS[name as MetricName].type === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) out.add(`${name}${suffix}`);
    }
  }
  return out;
}

test('the rules file holds the four alert templates of spec 1', () => {
  assert.equal(doc.groups.length, 1);
  assert.deepEqual(
    rules.map((r) => r.alert),
    [
      'SvcLlmCallLatencyP99High',
      'SvcLlmErrorRateHigh',
      'SvcGatewayAuthFailuresHigh',
      'SvcGatewayKeyCostHigh',
    ],
  );
});

test('every expression is valid PromQL that selects only metrics the gateway collector exports', () => {
  const exported = exportedSeriesNames();
  for (const rule of rules) {
    const names = selectedMetrics(rule.expr);
    assert.ok(names.length > 0, `${rule.alert} selects no metric`);
    for (const name of names)
      assert.ok(exported.has(name), `${rule.alert} references ${name}, which is not exported`);
  }
});

test('thresholds and durations are the spec values: 30 s for 5m, 5 % for 10m, 0.1/s for 5m, 10 USD/h for 10m', () => {
  const expected: Record<string, { threshold: number; for: string; metric: string }> = {
    SvcLlmCallLatencyP99High: { threshold: 30, for: '5m', metric: 'svc_llm_call_latency_seconds_bucket' },
    SvcLlmErrorRateHigh: { threshold: 0.05, for: '10m', metric: 'svc_llm_call_errors_total' },
    SvcGatewayAuthFailuresHigh: { threshold: 0.1, for: '5m', metric: 'svc_gateway_auth_failures_total' },
    SvcGatewayKeyCostHigh: { threshold: 10, for: '10m', metric: 'svc_gateway_key_cost_usd_total' },
  };
  for (const rule of rules) {
    const want = expected[rule.alert];
    // the threshold is the expression's last plain number, so the chart can template it
    const threshold = /> (\d+(?:\.\d+)?)$/.exec(rule.expr)?.[1];
    assert.equal(Number(threshold), want.threshold, rule.alert);
    assert.equal(rule.for, want.for, rule.alert);
    assert.ok(selectedMetrics(rule.expr).includes(want.metric), rule.alert);
    assert.ok(rule.labels?.severity, `${rule.alert} has a severity`);
    assert.ok(rule.annotations?.summary, `${rule.alert} has a summary`);
  }
  assert.ok(/^histogram_quantile\(0\.99,/.test(rules[0].expr), 'p99 from the latency histogram');
});

test('the checker itself rejects a name the collector does not export', () => {
  const exported = exportedSeriesNames();
  assert.deepEqual(selectedMetrics('rate(svc_llm_calls_total[5m]) > rate(svc_nope_total[5m])'), [
    'svc_llm_calls_total',
    'svc_nope_total',
  ]);
  assert.ok(!exported.has('svc_nope_total'));
  assert.ok(!exported.has('svc_llm_calls_total_bucket'));
  assert.throws(() => selectedMetrics('sum(rate(svc_llm_calls_total[5m]) >'));
});

/**
 * spec 1 §GET /metrics: the alert templates must group, match and describe by labels the metrics carry (a
 * `by (key_id)` or `$labels.route` that no series has yields one unlabelled alert, or an empty description,
 * and no error anywhere). Every label name in an expression (matchers, `by`/`without`) and every
 * `$labels.<name>` of its annotations must be a label of a metric the expression selects (`le` on `_bucket`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parser } from '@prometheus-io/lezer-promql';
import { load } from 'js-yaml';
import { METRICS, type MetricName } from '#src/metrics/collector.ts';
import { ROOT } from '../../helpers/svc.ts';

interface Rule {
  alert: string;
  expr: string;
  annotations?: Record<string, string>;
}

const doc = load(readFileSync(join(ROOT, 'src/metrics/alert-rules.yaml'), 'utf8')) as {
  groups: Array<{ rules: Rule[] }>;
};
const rules = doc.groups.flatMap((g) => g.rules);

/** The metric names an expression selects and every label name it mentions, from the PromQL syntax tree. */
function namesIn(expr: string): { metrics: string[]; labels: string[] } {
  const metrics: string[] = [];
  const labels: string[] = [];
  const cursor = parser.parse(expr).cursor();
  do {
    assert.ok(!cursor.type.isError, `syntax error in ${expr} at ${cursor.from}`);
    const text = expr.slice(cursor.from, cursor.to);
    if (cursor.name === 'Identifier' && cursor.node.parent?.name === 'VectorSelector') metrics.push(text);
    if (cursor.name === 'LabelName') labels.push(text);
  } while (cursor.next());
  return { metrics, labels };
}

/** Labels a series of this exposition name carries: the metric's labels, plus `le` on a histogram's buckets. */
function labelsOf(series: string): string[] {
  const base = series.replace(/_(bucket|sum|count)$/, '');
  const def = METRICS[(base in METRICS ? base : series) as MetricName];
  assert.ok(def, `${series} is not a metric of the collector`);
  return series.endsWith('_bucket') && def.type === 'histogram' ? [...def.labels, 'le'] : [...def.labels];
}

function unknownLabels(rule: Rule): string[] {
  const { metrics, labels } = namesIn(rule.expr);
  const known = new Set(metrics.flatMap(labelsOf));
  const described = Object.values(rule.annotations ?? {}).flatMap((text) =>
    [...text.matchAll(/\$labels\.([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]),
  );
  return [...labels, ...described].filter((l) => !known.has(l));
}

test('every label an alert rule groups, matches or describes by is a label of its metrics', () => {
  assert.equal(rules.length, 4);
  for (const rule of rules) assert.deepEqual(unknownLabels(rule), [], rule.alert);
});

test('the check itself finds a label no selected metric has', () => {
  assert.deepEqual(
    unknownLabels({
      alert: 'x',
      expr: 'sum by (key_id) (rate(svc_gateway_key_cost_usd_total{route="a"}[5m])) > 1',
      annotations: { description: '{{ $labels.key_id }} {{ $labels.gateway_key_id }}' },
    }),
    ['key_id', 'route', 'key_id'],
  );
  assert.deepEqual(unknownLabels({ alert: 'y', expr: 'sum by (le) (rate(svc_llm_calls_total[5m])) > 1' }), [
    'le',
  ]);
});

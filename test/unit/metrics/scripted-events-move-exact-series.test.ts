import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Bus, createBus } from '#src/events/bus.ts';
import type { EventInput } from '#src/events/envelope.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import {
  createMetricsCollector,
  LLM_LATENCY_BUCKETS,
  ROUTING_LATENCY_BUCKETS,
  TOOL_LATENCY_BUCKETS,
} from '#src/metrics/collector.ts';
import {
  canonicalLabels,
  type Family,
  histogramOf,
  labelSets,
  parseExposition,
  sampleOf,
} from '../../helpers/prometheus-exposition.ts';

const SONNET = 'anthropic:claude-sonnet-4-5';
const MINI = 'openai:gpt-5-mini';

function setup() {
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const collector = createMetricsCollector({ role: 'gateway', bus, log: silentLogger });
  const publish = (type: string, payload: Record<string, unknown>) =>
    bus.publish({ type, payload } as EventInput as never);
  return { bus, collector, publish };
}

function completed(model: string, provider: string, extra: Record<string, unknown>) {
  return { model, provider, requested_model: model, gateway_key_id: null, inbound_shape: 'openai', ...extra };
}

/** The script: every metric moves, including the collapsing and ignoring rules. */
function runScript(publish: ReturnType<typeof setup>['publish']) {
  publish(
    'llm.call_completed',
    completed(SONNET, 'anthropic', { latency_ms: 1200, cost_usd: '0.0015', gateway_key_id: 'gk_A' }),
  );
  publish(
    'llm.call_completed',
    completed(SONNET, 'anthropic', { latency_ms: 40, cost_usd: '0.25', gateway_key_id: null }),
  );
  publish(
    'llm.call_completed',
    completed(SONNET, 'anthropic', { latency_ms: 700, cost_usd: '0', gateway_key_id: 'gk_A' }),
  );
  publish(
    'llm.call_completed',
    completed(SONNET, 'anthropic', {
      latency_ms: 700,
      cost_usd: '-1',
      error_class: 'cancelled',
      gateway_key_id: 'gk_A',
    }),
  );
  publish('llm.call_completed', completed('made-up', 'mystery', { latency_ms: 200000, cost_usd: 'n/a' }));
  publish('llm.call_failed', completed(MINI, 'openai', { error_class: 'rate_limit', latency_ms: 300 }));
  publish('llm.call_failed', completed(MINI, 'openai', { error_class: 'Rate Limit!', latency_ms: 'slow' }));
  publish('route.decided', {
    chain: [
      { policy: 'per_message_override', model: null, verdict: 'no_match' },
      { policy: 'rule', model: MINI, verdict: 'accepted' },
    ],
    winner_index: 1,
    chosen_model: MINI,
    elapsed_ms: 0.3,
  });
  publish('route.decided', { chain: [], winner_index: -1, chosen_model: null, elapsed_ms: 2 });
  publish('pattern.matched', { chose_model: SONNET, fingerprint_version: 'structural' });
  publish('pattern.matched', { chose_model: SONNET, fingerprint_version: 'v9' });
  publish('quota.alert', { identity_kind: 'key', identity_id: 'gk_A', ratio: 0.85 });
  publish('quota.alert', { identity_kind: 'key', identity_id: 'gk_B', spent_usd: '4.5', cap_usd: '5' });
  publish('gateway.quota_exceeded', {
    identity_kind: 'key',
    identity_id: 'gk_B',
    spent_usd: '4.9',
    cap_usd: '5',
  });
  publish('gateway.quota_exceeded', { identity_kind: 'team', identity_id: 'team_x' });
  publish('gateway.quota_exceeded', { identity_kind: 'org' });
  publish('eval.completed', { judge_kind: 'heuristic', subject_kind: 'turn' });
  publish('eval.completed', { judge_kind: 'heuristic', subject_kind: 'turn' });
  publish('eval.failed', { judge_kind: 'llm', subject_kind: 'session' });
  publish('tool.called', { tool_use_id: 'tu_1', tool_name: 'read_file' });
  publish('tool.completed', { tool_use_id: 'tu_1', latency_ms: 40 });
  publish('tool.completed', { tool_use_id: 'tu_1', latency_ms: 7 }); // already matched once → unknown
  publish('tool.called', { tool_use_id: 'tu_2', tool_name: 'bash' });
  publish('tool.failed', { tool_use_id: 'tu_2', latency_ms: 31000, error_class: 'timeout' });
  publish('tool.failed', { tool_use_id: 'tu_never_called', latency_ms: 3, error_class: 'made_up' });
  publish('gateway.auth_failed', { reason: 'missing_token', inbound_shape: 'openai' });
  publish('gateway.auth_failed', { reason: 'missing_token', inbound_shape: 'anthropic' });
  publish('gateway.auth_failed', { reason: 'key_revoked', inbound_shape: 'openai', gateway_key_id: 'gk_C' });
  publish('gateway.auth_failed', { reason: 'bogus', inbound_shape: 'openai' });
}

/** Exactly these series with these values, nothing else. */
function assertSeries(
  families: Map<string, Family>,
  name: string,
  expected: Array<[Record<string, string>, number]>,
) {
  const family = families.get(name);
  assert.ok(family, `${name} missing`);
  const expectedSets = expected.map(([labels]) => canonicalLabels(labels));
  assert.deepEqual(labelSets(family), expectedSets.sort(), `${name} label sets`);
  for (const [labels, value] of expected)
    assert.equal(sampleOf(families, name, labels), value, `${name} ${JSON.stringify(labels)}`);
}

/** Cumulative bucket counts for the given observations in seconds. */
function cumulative(bounds: readonly number[], observations: number[]): Array<[number, number]> {
  return [...bounds, Number.POSITIVE_INFINITY].map((le) => [le, observations.filter((o) => o <= le).length]);
}

function assertHistogram(
  families: Map<string, Family>,
  name: string,
  bounds: readonly number[],
  expected: Array<[Record<string, string>, number[]]>,
) {
  const family = families.get(name);
  assert.ok(family, `${name} missing`);
  assert.equal(family.histograms.length, expected.length, `${name} series count`);
  for (const [labels, observations] of expected) {
    const h = histogramOf(families, name, labels);
    assert.ok(h, `${name} ${JSON.stringify(labels)} missing`);
    assert.deepEqual(h.buckets, cumulative(bounds, observations), `${name} buckets`);
    assert.equal(h.count, observations.length);
    assert.ok(Math.abs(h.sum - observations.reduce((a, b) => a + b, 0)) < 1e-9, `${name} sum`);
  }
}

test('a scripted series of bus events moves exactly the expected series of every metric', async () => {
  const { collector, publish } = setup();
  runScript(publish);
  const f = await parseExposition(await collector.scrape());
  const anthropicSonnet = { provider: 'anthropic', model: SONNET };
  const openaiMini = { provider: 'openai', model: MINI };
  const unknownCall = { provider: 'unknown', model: 'unknown' };

  assertSeries(f, 'svc_llm_calls_total', [
    [{ ...anthropicSonnet, status: 'ok' }, 4],
    [{ ...unknownCall, status: 'ok' }, 1],
    [{ ...openaiMini, status: 'rate_limit' }, 1],
    [{ ...openaiMini, status: 'unknown' }, 1],
  ]);
  assertHistogram(f, 'svc_llm_call_latency_seconds', LLM_LATENCY_BUCKETS, [
    [anthropicSonnet, [1.2, 0.04, 0.7, 0.7]],
    [unknownCall, [200]],
    [openaiMini, [0.3]],
  ]);
  assertSeries(f, 'svc_llm_cost_usd_total', [[anthropicSonnet, 0.2515]]);
  assertSeries(f, 'svc_llm_call_errors_total', [
    [{ ...openaiMini, error_class: 'rate_limit' }, 1],
    [{ ...openaiMini, error_class: 'unknown' }, 1],
  ]);
  assertSeries(f, 'svc_gateway_key_cost_usd_total', [
    [{ gateway_key_id: 'gk_A' }, 0.0015],
    [{ gateway_key_id: 'null' }, 0.25],
  ]);
  assertSeries(f, 'svc_routing_decisions_total', [
    [{ winning_slot: 'rule', chosen_model: MINI }, 1],
    [{ winning_slot: 'unknown', chosen_model: 'unknown' }, 1],
  ]);
  assertHistogram(f, 'svc_routing_decision_latency_seconds', ROUTING_LATENCY_BUCKETS, [
    [{}, [0.0003, 0.002]],
  ]);
  assertSeries(f, 'svc_pattern_matches_total', [
    [{ chose_model: SONNET, fingerprint_version: 'structural' }, 1],
    [{ chose_model: SONNET, fingerprint_version: 'unknown' }, 1],
  ]);
  assertSeries(f, 'svc_quota_used_ratio', [
    [{ identity_kind: 'key', identity_id: 'gk_A' }, 0.85],
    [{ identity_kind: 'key', identity_id: 'gk_B' }, 1],
    [{ identity_kind: 'team', identity_id: 'team_x' }, 1],
    [{ identity_kind: 'unknown', identity_id: 'unknown' }, 1],
  ]);
  assertSeries(f, 'svc_eval_verdicts_total', [[{ judge_kind: 'heuristic', subject_kind: 'turn' }, 2]]);
  assertHistogram(f, 'svc_tool_call_latency_seconds', TOOL_LATENCY_BUCKETS, [
    [{ tool_name: 'read_file' }, [0.04]],
    [{ tool_name: 'bash' }, [31]],
    [{ tool_name: 'unknown' }, [0.007, 0.003]],
  ]);
  assertSeries(f, 'svc_tool_failures_total', [
    [{ tool_name: 'bash', error_class: 'timeout' }, 1],
    [{ tool_name: 'unknown', error_class: 'unknown' }, 1],
  ]);
  assertSeries(f, 'svc_gateway_auth_failures_total', [
    [{ reason: 'missing_token' }, 2],
    [{ reason: 'key_revoked' }, 1],
    [{ reason: 'unknown' }, 1],
  ]);
  assertSeries(f, 'svc_gateway_keys_active', [[{}, 0]]);
  assertSeries(f, 'svc_gateway_keys_revoked', [[{}, 0]]);
});

test('a quota alert computes the ratio from spent and cap when the payload has none', async () => {
  const { collector, publish } = setup();
  publish('quota.alert', { identity_kind: 'user', identity_id: 'usr_1', spent_usd: '4.5', cap_usd: '5' });
  const f = await parseExposition(await collector.scrape());
  assert.equal(sampleOf(f, 'svc_quota_used_ratio', { identity_kind: 'user', identity_id: 'usr_1' }), 0.9);
});

test('gateway.quota_exceeded pins the ratio to 1.0 after an alert', async () => {
  const { collector, publish } = setup();
  publish('quota.alert', { identity_kind: 'key', identity_id: 'gk_A', ratio: 0.8 });
  publish('gateway.quota_exceeded', {
    identity_kind: 'key',
    identity_id: 'gk_A',
    spent_usd: '0.9',
    cap_usd: '1',
  });
  const f = await parseExposition(await collector.scrape());
  assert.equal(sampleOf(f, 'svc_quota_used_ratio', { identity_kind: 'key', identity_id: 'gk_A' }), 1);
});

test('cost counters sum decimals exactly and convert only at export', async () => {
  const { collector, publish } = setup();
  for (let i = 0; i < 1000; i++) {
    publish(
      'llm.call_completed',
      completed(SONNET, 'anthropic', { latency_ms: 1, cost_usd: '0.000001', gateway_key_id: 'gk_A' }),
    );
  }
  const f = await parseExposition(await collector.scrape());
  // 1000 float additions of 1e-6 drift away from 0.001; the exact sum does not
  assert.equal(sampleOf(f, 'svc_llm_cost_usd_total', { provider: 'anthropic', model: SONNET }), 0.001);
  assert.equal(sampleOf(f, 'svc_gateway_key_cost_usd_total', { gateway_key_id: 'gk_A' }), 0.001);
});

test('scraping twice does not double the cost counters', async () => {
  const { collector, publish } = setup();
  publish(
    'llm.call_completed',
    completed(SONNET, 'anthropic', { latency_ms: 1, cost_usd: '0.5', gateway_key_id: 'gk_A' }),
  );
  await collector.scrape();
  const f = await parseExposition(await collector.scrape());
  assert.equal(sampleOf(f, 'svc_gateway_key_cost_usd_total', { gateway_key_id: 'gk_A' }), 0.5);
});

test('the tool-name cache keeps the 1000 most recent tool uses; older ones fall back to unknown', async () => {
  const { collector, publish } = setup();
  for (let i = 0; i <= 1000; i++) publish('tool.called', { tool_use_id: `tu_${i}`, tool_name: 'grep' });
  publish('tool.completed', { tool_use_id: 'tu_0', latency_ms: 10 }); // evicted by the 1001st
  publish('tool.completed', { tool_use_id: 'tu_1', latency_ms: 10 });
  publish('tool.completed', { tool_use_id: 'tu_1000', latency_ms: 10 });
  const f = await parseExposition(await collector.scrape());
  assert.equal(histogramOf(f, 'svc_tool_call_latency_seconds', { tool_name: 'unknown' })?.count, 1);
  assert.equal(histogramOf(f, 'svc_tool_call_latency_seconds', { tool_name: 'grep' })?.count, 2);
});

test('subscribing registers the collector on the bus as "metrics"', () => {
  const bus: Bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const seen: string[] = [];
  bus.subscribe({
    name: 'spy',
    types: ['bus.subscriber_registered'],
    handle: (e) => seen.push(String((e.payload as { subscriber: string }).subscriber)),
  });
  const collector = createMetricsCollector({ role: 'gateway', bus, log: silentLogger });
  assert.deepEqual(seen, ['spy', 'metrics']);
  assert.ok(bus.subscriberNames.includes('metrics'));
  collector.stop();
  assert.ok(!bus.subscriberNames.includes('metrics'));
});

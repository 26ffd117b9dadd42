/**
 * /metrics through the real gateway pipeline: one successful call, one failed call and one quota refusal
 * each move exactly the series spec 1 §GET /metrics says they feed, and nothing else; after a scripted mix
 * every series equals what the trace store recorded for the same requests, histogram buckets and sums included.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { LLM_LATENCY_BUCKETS, ROUTING_LATENCY_BUCKETS } from '#src/metrics/collector.ts';
import { type EventRow, readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { createScraper, flattenSeries } from '../helpers/prometheus-exposition.ts';
import { requestLogLine } from '../helpers/svc.ts';

const MODEL = 'openai:gpt-5-mini';

test('each call outcome moves exactly its metric series', async (t) => {
  const stack = await startGatewayStack({ env: { SVC_GATEWAY_MAX_RETRIES: '2' } });
  t.after(() => stack.stop());
  const { gw, fake } = stack;

  const { scrape, movedBy } = createScraper(gw.url);
  const names = (moved: Map<string, number>) => [...moved.keys()].map((k) => k.replace(/\{.*$/, ''));

  await t.test('a successful call moves the call, latency, cost and routing series', async () => {
    fake.script(['usage=in:1000,out:500']);
    const moved = await movedBy(async () => {
      const r = await stack.openai.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'hi' }],
      });
      assert.equal(r.choices[0].finish_reason, 'stop');
    });
    const call = readEvents(stack.files.db, 'llm.call_completed').at(-1)!.payload;
    // gpt-5-mini: 0.25 USD/M input, 2 USD/M output → 1000 × 0.25e-6 + 500 × 2e-6
    assert.equal(call.cost_usd, '0.001250');
    const labels = `model=${MODEL},provider=openai`;
    assert.equal(moved.get(`svc_llm_calls_total{${labels},status=ok}`), 1);
    assert.equal(moved.get(`svc_llm_call_latency_seconds_count{${labels}}`), 1);
    assert.ok(Math.abs((moved.get(`svc_llm_cost_usd_total{${labels}}`) ?? 0) - 0.00125) < 1e-12);
    assert.ok(
      Math.abs((moved.get(`svc_gateway_key_cost_usd_total{gateway_key_id=${stack.keyId}}`) ?? 0) - 0.00125) <
        1e-12,
    );
    assert.equal(
      moved.get(`svc_routing_decisions_total{chosen_model=${MODEL},winning_slot=per_message_override}`),
      1,
    );
    assert.equal(moved.get('svc_routing_decision_latency_seconds_count{}'), 1);
    assert.deepEqual([...new Set(names(moved))].sort(), [
      'svc_gateway_key_cost_usd_total',
      'svc_llm_call_latency_seconds_bucket',
      'svc_llm_call_latency_seconds_count',
      'svc_llm_call_latency_seconds_sum',
      'svc_llm_calls_total',
      'svc_llm_cost_usd_total',
      'svc_routing_decision_latency_seconds_bucket',
      'svc_routing_decision_latency_seconds_count',
      'svc_routing_decision_latency_seconds_sum',
      'svc_routing_decisions_total',
    ]);
  });

  await t.test('a failed call moves the call-status and error series', async () => {
    fake.script(Array(3).fill('error=500;retry-after-ms=1'));
    const moved = await movedBy(async () => {
      await assert.rejects(
        stack.openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 502,
      );
    });
    const labels = `model=${MODEL},provider=openai`;
    assert.equal(moved.get(`svc_llm_calls_total{${labels},status=server_error}`), 1);
    assert.equal(moved.get(`svc_llm_call_errors_total{error_class=server_error,${labels}}`), 1);
    assert.equal(moved.get(`svc_llm_call_latency_seconds_count{${labels}}`), 1);
    assert.equal(moved.get(`svc_llm_calls_total{${labels},status=ok}`), undefined);
    assert.equal(moved.get(`svc_llm_cost_usd_total{${labels}}`), undefined);
  });

  const capped = await stack.issue(['--daily-cap-usd', '0.000001']);
  const cappedClient = new Anthropic({ apiKey: capped.token, baseURL: gw.url, maxRetries: 0 });

  await t.test('a quota refusal pins svc_quota_used_ratio of the key to 1', async () => {
    const client = cappedClient;
    const requestsBefore = fake.requests.length;
    const moved = await movedBy(async () => {
      await assert.rejects(
        client.messages.create({
          model: 'anthropic:claude-haiku-4-5',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'hi' }],
        }),
        (err: unknown) => err instanceof Anthropic.APIError && err.status === 429,
      );
    });
    assert.equal(fake.requests.length, requestsBefore, 'a refused request never reaches the provider');
    assert.equal(moved.get(`svc_quota_used_ratio{identity_id=${capped.keyId},identity_kind=key}`), 1);
    assert.ok(!names(moved).includes('svc_llm_calls_total'));
  });

  await t.test('after a scripted mix every series equals what the trace store recorded', async () => {
    const messages = [{ role: 'user' as const, content: 'hi' }];
    // a stream the client cuts: its cancelled call is published before its request-log line
    fake.script(['stall-after=3']);
    const cut = new AbortController();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      signal: cut.signal,
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, stream: true, messages }),
    });
    await res.body!.getReader().read();
    cut.abort();
    await requestLogLine(gw, res.headers.get('svc-request-id')!);
    const bad = new OpenAI({ apiKey: 'gw_not_a_key', baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await assert.rejects(bad.chat.completions.create({ model: MODEL, messages }), { status: 401 });
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        cappedClient.messages.create({ model: 'anthropic:claude-haiku-4-5', max_tokens: 100, messages }),
        { status: 429 },
      );
    }
    // three upstream 429s, each retried twice: two run out of retries, the third succeeds on its last try
    for (const last of ['error=429', 'error=429', 'ok']) {
      fake.script(['error=429;retry-after-ms=1', 'error=429;retry-after-ms=1', `${last};retry-after-ms=1`]);
      const call = stack.openai.chat.completions.create({ model: MODEL, messages });
      if (last === 'ok') await call;
      else await assert.rejects(call, { status: 429 });
    }
    // ten successes, last: each is in the trace before it is answered, so every event before it is too
    for (let i = 0; i < 10; i++) {
      fake.script(['usage=in:1000,out:500']);
      const stream = i % 2 === 1;
      if (i < 5) await stack.openai.chat.completions.create({ model: MODEL, messages, stream });
      else await stack.anthropic.messages.create({ model: 'haiku', max_tokens: 100, messages, stream });
    }
    const scraped = flattenSeries(await scrape());

    // the whole trace since the gateway started, the earlier cases' calls included (one success, one
    // server_error, one quota refusal)
    const events = readEvents(stack.files.db);
    const count = (type: string, ok: (p: EventRow['payload']) => boolean = () => true) =>
      events.filter((e) => e.type === type && ok(e.payload)).length;
    assert.equal(
      count('llm.call_completed', (p) => p.error_class === null),
      12,
    );
    assert.equal(
      count('llm.call_completed', (p) => p.error_class === 'cancelled'),
      1,
    );
    assert.equal(
      count('llm.call_failed', (p) => p.error_class === 'rate_limit' && p.attempts === 3),
      2,
    );
    assert.equal(count('gateway.quota_exceeded'), 3);
    assert.equal(count('gateway.auth_failed'), 1);

    const expected = new Map<string, number>();
    const add = (series: string, n = 1) => expected.set(series, (expected.get(series) ?? 0) + n);
    // a histogram series from the durations in trace order: sums added in the order the gateway added them
    const observe = (name: string, labels: string, bounds: readonly number[], ms: unknown) => {
      const seconds = (ms as number) / 1000;
      add(`${name}_count{${labels}}`);
      add(`${name}_sum{${labels}}`, seconds);
      for (const le of [...bounds, Number.POSITIVE_INFINITY]) {
        const bound = le === Number.POSITIVE_INFINITY ? '+Inf' : String(le);
        add(`${name}_bucket{le=${bound}${labels ? `,${labels}` : ''}}`, seconds <= le ? 1 : 0);
      }
    };
    for (const { type, payload: p } of events) {
      const call = `model=${p.model},provider=${p.provider}`;
      if (type === 'llm.call_completed' || type === 'llm.call_failed') {
        add(`svc_llm_calls_total{${call},status=${type === 'llm.call_failed' ? p.error_class : 'ok'}}`);
        observe('svc_llm_call_latency_seconds', call, LLM_LATENCY_BUCKETS, p.latency_ms);
        if (type === 'llm.call_failed')
          add(`svc_llm_call_errors_total{error_class=${p.error_class},${call}}`);
        if (Number(p.cost_usd ?? 0) > 0) {
          add(`svc_llm_cost_usd_total{${call}}`, Number(p.cost_usd));
          add(`svc_gateway_key_cost_usd_total{gateway_key_id=${p.gateway_key_id}}`, Number(p.cost_usd));
        }
      } else if (type === 'route.decided') {
        const winner = (p.chain as Array<{ policy: string }>)[p.winner_index as number];
        add(`svc_routing_decisions_total{chosen_model=${p.chosen_model},winning_slot=${winner.policy}}`);
        observe('svc_routing_decision_latency_seconds', '', ROUTING_LATENCY_BUCKETS, p.elapsed_ms);
      } else if (type === 'gateway.auth_failed') add(`svc_gateway_auth_failures_total{reason=${p.reason}}`);
      else if (type === 'gateway.quota_exceeded')
        expected.set(
          `svc_quota_used_ratio{identity_id=${p.identity_id},identity_kind=${p.identity_kind}}`,
          1,
        );
    }
    // every series but the keystore gauges polled at scrape (and those at 0, empty buckets among them)
    const nonZero = (all: Map<string, number>) =>
      new Map([...all].filter(([k, v]) => !/^svc_gateway_keys_/.test(k) && v !== 0));
    const series = nonZero(scraped);
    assert.deepEqual([...series.keys()].sort(), [...nonZero(expected).keys()].sort());
    for (const [name, value] of nonZero(expected)) {
      // exact but for the cost counters, which svc sums as decimals and this test as floats
      if (/_cost_usd_total\{/.test(name))
        assert.ok(Math.abs(series.get(name)! - value) < 1e-9, `${name}: ${series.get(name)} != ${value}`);
      else assert.equal(series.get(name), value, name);
    }
  });
});

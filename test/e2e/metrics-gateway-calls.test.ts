/**
 * /metrics through the real gateway pipeline: one successful call, one failed call and one quota refusal
 * each move exactly the series spec 1 §GET /metrics says they feed, and nothing else.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { createScraper } from '../helpers/prometheus-exposition.ts';

const MODEL = 'openai:gpt-5-mini';

test('each call outcome moves exactly its metric series', async (t) => {
  const stack = await startGatewayStack({ env: { SVC_GATEWAY_MAX_RETRIES: '0' } });
  t.after(() => stack.stop());
  const { gw, fake } = stack;

  const { movedBy } = createScraper(gw.url);
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
    fake.script(['error=500']);
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

  await t.test('a quota refusal pins svc_quota_used_ratio of the key to 1', async () => {
    const capped = await stack.issue(['--daily-cap-usd', '0.000001']);
    const client = new Anthropic({ apiKey: capped.token, baseURL: gw.url, maxRetries: 0 });
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
});

/**
 * A stream that breaks after the provider reported usage (Anthropic states the input in message_start) is an
 * llm.call_failed that carries that usage priced: the provider bills it and the key's budget keeps it. The
 * cost counters of /metrics (svc_llm_cost_usd_total, svc_gateway_key_cost_usd_total) count it too, so the
 * per-key cost alert sees the same spend as the budget and the trace.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { createScraper } from '../helpers/prometheus-exposition.ts';

const MODEL = 'anthropic:claude-haiku-4-5';

test('the billed cost of a broken stream moves the cost counters', async (t) => {
  const stack = await startGatewayStack({ env: { SVC_GATEWAY_MAX_RETRIES: '0' } });
  t.after(() => stack.stop());
  const { movedBy } = createScraper(stack.gw.url);

  let turnId: string | null = null;
  const moved = await movedBy(async () => {
    const { data, response } = await stack.anthropic.messages
      .create({
        model: MODEL,
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'hi [[fake:reset-after=3;usage=in:4000,out:20]]' }],
      })
      .withResponse();
    turnId = response.headers.get('svc-request-id');
    await assert.rejects(
      (async () => {
        for await (const _ of data);
      })(),
      (err: unknown) => err instanceof Anthropic.APIError,
      'the reset ends the stream with an error event',
    );
  });

  const failed = readEvents(stack.files.db, 'llm.call_failed').filter((e) => e.turn_id === turnId);
  assert.equal(failed.length, 1);
  const cost = Number(failed[0].payload.cost_usd);
  assert.ok(cost > 0, `the broken call is priced: ${failed[0].payload.cost_usd}`);

  const labels = `model=${MODEL},provider=anthropic`;
  assert.equal(moved.get(`svc_llm_calls_total{${labels},status=connection_error}`), 1);
  const llmCost = moved.get(`svc_llm_cost_usd_total{${labels}}`);
  const keyCost = moved.get(`svc_gateway_key_cost_usd_total{gateway_key_id=${stack.keyId}}`);
  assert.ok(
    llmCost !== undefined && Math.abs(llmCost - cost) < 1e-12,
    `svc_llm_cost_usd_total moved by ${llmCost}`,
  );
  assert.ok(keyCost !== undefined && Math.abs(keyCost - cost) < 1e-12, `key cost moved by ${keyCost}`);
});

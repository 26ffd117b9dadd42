/**
 * Analytics over real gateway traffic, read by `svc serve` from the gateway's store. GET /analytics/savings
 * re-prices each call's tokens under the current table (spec 3), one-hour cache writes included: a gateway
 * call with one-hour writes, re-priced on its own model under the unchanged table, costs what was stamped
 * on it, and the baseline prices those writes at its own one-hour rate. The turn drill-down of a request
 * the gateway refused at authentication shows it finished, as for every other answered request.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { type AgentServer, startAgentServer } from '../helpers/agent-server.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';

const MODEL = 'anthropic:claude-haiku-4-5';

/** One gateway (a 401 without a key, then a call with one-hour cache writes) and one svc serve on its store. */
let shared: Promise<{ stack: GatewayStack; server: AgentServer; refusedId: string }> | undefined;
const started: Array<() => unknown> = [];
after(async () => {
  for (const stop of started.reverse()) await stop();
});

function traffic() {
  shared ??= (async () => {
    const stack = await startGatewayStack();
    started.push(() => stack.stop());
    const refused = await fetch(`${stack.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(refused.status, 401);
    await refused.text();
    stack.fake.script(['usage=in:10,cache_write:1000,cache_write_1h:600,out:10']);
    await stack.anthropic.messages.create({
      model: MODEL,
      max_tokens: 64,
      system: [{ type: 'text', text: 'a long preamble', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [{ role: 'user', content: 'hi' }],
    });
    const server = await startAgentServer(
      { after: (fn) => started.push(fn) },
      { env: { SVC_DB_PATH: stack.files.db } },
    );
    return { stack, server, refusedId: refused.headers.get('svc-request-id') as string };
  })();
  return shared;
}

test('savings re-price one-hour cache writes at the one-hour rate on both sides', async () => {
  const { server } = await traffic();
  let same: any;
  for (let i = 0; i < 100; i++) {
    same = (await server.api('GET', `/analytics/savings?baseline=${MODEL}`)).body.data;
    if (same.rows_total === 1) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  // haiku (input 1, five-minute write 1.25, one-hour write 2, output 5 per million tokens):
  // 10 × 1 + 400 × 1.25 + 600 × 2 + 10 × 5 = 1760 → the stamped 0.001760
  assert.deepEqual(same, {
    baseline_model: MODEL,
    actual_repriced_usd: 0.00176,
    baseline_repriced_usd: 0.00176,
    savings_usd: 0,
    savings_pct: 0,
    actual_stamped_usd: 0.00176,
    rows_total: 1,
    rows_missing_from_price_table: 0,
  });
  // sonnet (input 3, five-minute write 3.75, one-hour write 6, output 15):
  // 10 × 3 + 400 × 3.75 + 600 × 6 + 10 × 15 = 5280 → 0.00528
  const sonnet = (await server.api('GET', '/analytics/savings?baseline=anthropic:claude-sonnet-4-5')).body
    .data;
  assert.equal(sonnet.baseline_repriced_usd, 0.00528);
  assert.equal(sonnet.actual_repriced_usd, 0.00176);
  assert.equal(sonnet.savings_usd, 0.00352);
});

test('the drill-down of a request refused at authentication shows it finished, not in flight', async () => {
  const { server, refusedId } = await traffic();
  // the refusal's audit event was committed before the later call's, which the savings poll waited for
  let res = await server.api('GET', `/analytics/turns/${refusedId}`);
  for (let i = 0; i < 100 && res.status === 404; i++) {
    await new Promise((r) => setTimeout(r, 50));
    res = await server.api('GET', `/analytics/turns/${refusedId}`);
  }
  assert.equal(res.status, 200);
  assert.deepEqual(
    res.body.data.events.map((e: { type: string; payload: { reason?: string } }) => [
      e.type,
      e.payload.reason,
    ]),
    [['gateway.auth_failed', 'missing_token']],
  );
  assert.equal(res.body.data.in_flight, false, 'the 401 was answered: nothing of that request is in flight');
  assert.deepEqual([res.body.data.session_id, res.body.data.messages], [null, []]);
});

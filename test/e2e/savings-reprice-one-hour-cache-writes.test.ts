/**
 * Analytics over real gateway traffic, read by `svc serve` (and the report commands) from the store the
 * running gateway writes: spend by key, inbound shape, user, team and UTC hour is the exact sum of the
 * costs stamped on the stored calls. GET /analytics/savings
 * re-prices each call's tokens under the current table (spec 3), one-hour cache writes included: a gateway
 * call with one-hour writes, re-priced on its own model under the unchanged table, costs what was stamped
 * on it, and the baseline prices those writes at its own one-hour rate. The turn drill-down of a request
 * the gateway refused at authentication shows it finished, as for every other answered request.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { type AgentServer, startAgentServer, withStore } from '../helpers/agent-server.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';
import { runSvc } from '../helpers/svc.ts';

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

/** Exact sum of decimal strings (the stamped costs), as decimal text with 18 fraction digits. */
function exactSum(costs: readonly string[]): string {
  const SCALE = 18;
  const units = costs.reduce((acc, c) => {
    const [whole, fraction = ''] = c.split('.');
    return acc + BigInt(whole + fraction.padEnd(SCALE, '0').slice(0, SCALE));
  }, 0n);
  const text = units.toString().padStart(SCALE + 1, '0');
  return `${text.slice(0, -SCALE)}.${text.slice(-SCALE)}`;
}

test('spend of live traffic from two keys in both shapes is the exact sum of the stamped costs, by key, shape, user, team and hour, from the endpoints and the report command', async () => {
  const { stack, server } = await traffic();
  const a = await stack.issue(['--user', 'usr_live_a', '--team', 'team_live']);
  const b = await stack.issue(['--user', 'usr_live_b', '--team', 'team_live']);
  const anthropicA = new Anthropic({ apiKey: a.token, baseURL: stack.gw.url, maxRetries: 0 });
  const openaiA = new OpenAI({ apiKey: a.token, baseURL: `${stack.gw.url}/v1`, maxRetries: 0 });
  const openaiB = new OpenAI({ apiKey: b.token, baseURL: `${stack.gw.url}/v1`, maxRetries: 0 });
  stack.fake.script([
    'usage=in:1234,cache_read:777,cache_write:55,out:321',
    'usage=in:100,cache_read:300,out:20',
    'usage=in:7,out:3',
  ]);
  await anthropicA.messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 400,
    messages: [{ role: 'user', content: 'a' }],
  });
  const streamed = await openaiA.chat.completions.create({
    model: 'gpt-5-mini',
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'b' }],
  });
  for await (const _ of streamed);
  await openaiB.chat.completions.create({ model: 'gpt-5-nano', messages: [{ role: 'user', content: 'c' }] });

  // the stored calls of the two keys, read while the gateway still runs
  type Call = {
    key: string;
    user: string;
    shape: string;
    cost: string;
    hour: string;
    input: number;
    cached: number;
  };
  const calls = (): Call[] =>
    withStore(stack.files.db, (db) =>
      db
        .prepare(
          `SELECT gateway_key_id AS key, user_id AS user, json_extract(payload, '$.inbound_shape') AS shape,
             cost_usd AS cost, substr(timestamp, 1, 13) AS hour, json_extract(payload, '$.input_tokens') AS input,
             json_extract(payload, '$.cached_input_tokens') AS cached
           FROM events WHERE type = 'llm.call_completed' AND team_id = 'team_live' ORDER BY id`,
        )
        .all(),
    ) as Call[];
  for (let i = 0; i < 200 && calls().length < 3; i++) await new Promise((r) => setTimeout(r, 25));
  const stored = calls();
  assert.equal(stored.length, 3);
  const sum = (pick: (c: Call) => boolean) => Number(exactSum(stored.filter(pick).map((c) => c.cost)));
  const ofA = (c: Call) => c.key === a.keyId;

  const byKey = (await server.api('GET', `/analytics/by_key?gateway_key=${a.keyId}`)).body.data;
  assert.deepEqual(byKey, [
    {
      gateway_key_id: a.keyId,
      cost_usd: sum(ofA),
      input_tokens: 1234 + 100,
      output_tokens: 321 + 20,
      cached_input_tokens: 777 + 300,
      cache_creation_input_tokens: 55,
      call_count: 2,
      by_inbound_shape: [
        {
          inbound_shape: 'anthropic',
          call_count: 1,
          cost_usd: sum((c) => ofA(c) && c.shape === 'anthropic'),
        },
        { inbound_shape: 'openai', call_count: 1, cost_usd: sum((c) => ofA(c) && c.shape === 'openai') },
      ],
    },
  ]);
  const byTeam = (await server.api('GET', '/analytics/by_team?team=team_live')).body.data;
  assert.deepEqual(
    byTeam.map((t: any) => [t.team_id, t.cost_usd, t.call_count, t.user_count, t.by_user]),
    [
      [
        'team_live',
        sum(() => true),
        3,
        2,
        [
          { user_id: 'usr_live_a', cost_usd: sum(ofA), call_count: 2 },
          { user_id: 'usr_live_b', cost_usd: sum((c) => !ofA(c)), call_count: 1 },
        ],
      ],
    ],
  );
  // filters are AND-combined: key B's calls were never user A's
  const none = await server.api(
    'GET',
    `/analytics/cost?group_by=none&gateway_key=${b.keyId}&user=usr_live_a`,
  );
  assert.equal(none.body.data.call_count, 0);
  assert.equal(none.body.data.cost_usd, 0);
  // hour buckets are the UTC hours of the stored timestamps
  const hours = (await server.api('GET', '/analytics/cost?group_by=hour&team=team_live')).body.data;
  const expectedHours = [...new Set(stored.map((c) => c.hour))];
  assert.deepEqual(
    hours.map((h: any) => [h.bucket, h.cost_usd, h.call_count]),
    expectedHours.map((h) => [h, sum((c) => c.hour === h), stored.filter((c) => c.hour === h).length]),
  );

  // the report command reads the store the running gateway writes, and prints the endpoint's data
  const env = { ...stack.files.env, SVC_DB_PATH: stack.files.db };
  const report = await runSvc(['analytics', 'by-key', '--gateway-key', a.keyId, '--format', 'json'], { env });
  assert.equal(report.code, 0, report.stderr);
  assert.deepEqual(JSON.parse(report.stdout).data, byKey);
});

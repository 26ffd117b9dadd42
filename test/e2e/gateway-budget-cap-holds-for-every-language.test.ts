/**
 * Issue 17 #1: a daily cap is never overshot, whatever the request is made of. For CJK text, emoji,
 * base64 images and large tool schemas, in both shapes (one on the model's own wire, one translated), 50
 * concurrent requests with max_tokens 200 go to a key whose cap pays for about 10 of them at what the fake
 * provider really bills (1.5 tokens per CJK character, images by the documented formula); the settled
 * spend read back with SQL from the trace store never passes the cap.
 */
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { compare, formatDecimal, mul, parseDecimal, sumDecimals } from '#src/lib/decimal.ts';
import { priceCall } from '#src/models/pricing.ts';
import { billedInputTokens } from '../fake-provider/billing.ts';
import { CASES, registry, type Shape, upstreamBody } from '../helpers/budget-probes.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

const REQUESTS = 50;
const AFFORDABLE = 10;
const MAX_TOKENS = 200;
// images go to gpt-4o-mini, which bills 2,833 + 5,667 tokens per tile: a flat per-image guess falls far short
const PROBES = [
  { name: 'CJK text', model: 'anthropic:claude-haiku-4-5' },
  { name: 'emoji', model: 'anthropic:claude-haiku-4-5' },
  { name: 'base64 images', model: 'openai:gpt-4o-mini' },
  { name: 'large tool schemas, tool calls and tool results', model: 'anthropic:claude-haiku-4-5' },
];

async function send(url: string, token: string, shape: Shape, body: string): Promise<number> {
  const res = await fetch(`${url}${shape === 'anthropic' ? '/v1/messages' : '/v1/chat/completions'}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

/** Settled spend of one key, summed exactly from the llm.call_completed rows. */
function spentBy(dbPath: string, keyId: string): { costs: string[]; inputTokens: number[] } {
  const db = new DatabaseSync(dbPath);
  try {
    const rows = db
      .prepare(
        `SELECT json_extract(payload, '$.cost_usd') AS cost,
                json_extract(payload, '$.input_tokens') + coalesce(json_extract(payload, '$.cached_input_tokens'), 0)
                  + coalesce(json_extract(payload, '$.cache_creation_input_tokens'), 0) AS input
           FROM events
          WHERE type = 'llm.call_completed' AND json_extract(payload, '$.gateway_key_id') = ?`,
      )
      .all(keyId) as Array<{ cost: string; input: number }>;
    return { costs: rows.map((r) => String(r.cost)), inputTokens: rows.map((r) => Number(r.input)) };
  } finally {
    db.close();
  }
}

test('a daily cap is never overshot by 50 concurrent requests, for every kind of content and both shapes', {
  timeout: 120_000,
}, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  // every request is in flight at once; each is billed out:200 and its real input
  stack.fake.setDefault(`slow-headers=300;usage=out:${MAX_TOKENS}`);

  // each case's key, its cap paying for AFFORDABLE calls, issued all at once up front
  const cases = await Promise.all(
    PROBES.flatMap((probe) =>
      (['anthropic', 'openai'] as const).map(async (shape) => {
        const body = { ...CASES[probe.name][shape], model: probe.model, max_tokens: MAX_TOKENS };
        const up = upstreamBody(shape, body, probe.model);
        const billed = billedInputTokens(up.wire, up.body);
        const oneCall = priceCall(registry, probe.model, { input_tokens: billed, output_tokens: MAX_TOKENS });
        const cap = formatDecimal(mul(oneCall.cost, parseDecimal(String(AFFORDABLE))));
        const key = await stack.issue(['--daily-cap-usd', cap]);
        return { probe, shape, body, billed, cap, key };
      }),
    ),
  );
  for (const { probe, shape, body, billed, cap, key } of cases) {
    await t.test(`${probe.name}, ${shape} shape → ${probe.model}`, async (t) => {
      const text = JSON.stringify(body);
      const statuses = await Promise.all(
        Array.from({ length: REQUESTS }, () => send(stack.gw.url, key.token, shape, text)),
      );
      const admitted = statuses.filter((s) => s === 200).length;
      assert.equal(statuses.filter((s) => s === 429).length, REQUESTS - admitted, String(statuses));

      const spent = spentBy(stack.files.db, key.keyId);
      assert.equal(spent.costs.length, admitted, 'one settled call per admitted request');
      const total = sumDecimals(spent.costs);
      t.diagnostic(`${probe.name}/${shape}: ${admitted} admitted, spent ${formatDecimal(total)} of ${cap}`);
      assert.ok(compare(total, parseDecimal(cap)) <= 0, `spent ${formatDecimal(total)} > cap ${cap}`);
      assert.ok(admitted >= 1 && admitted <= AFFORDABLE, `${admitted} admitted`);
      for (const input of spent.inputTokens) assert.equal(input, billed, 'the fake billed its real count');
    });
  }

  // A Responses follow-up on an OpenAI model names state OpenAI holds and bills as input (an earlier
  // response, a stored conversation or prompt template), which the body does not show: each call here is
  // billed 150,000 input tokens for a body of a few words.
  const model = 'openai:gpt-5-mini';
  const oneCall = priceCall(registry, model, { input_tokens: 150_000, output_tokens: 16 });
  const cap = formatDecimal(mul(oneCall.cost, parseDecimal('4')));
  // a key per case, each with its own budget, and one whose small cap the refusals below must not reach
  const [refusalKey, ...keys] = await Promise.all(
    ['0.01', cap, cap, cap].map((c) => stack.issue(['--daily-cap-usd', c])),
  );
  // a response OpenAI stored, asked for by the key that follows it up (another key naming it is refused
  // before anything goes upstream, a050f52): the follow-up goes to OpenAI naming it, as sent
  const stored = (await (
    await fetch(`${stack.gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys[0].token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, input: 'hi', max_output_tokens: 16 }),
    })
  ).json()) as { id: string };
  for (const [i, held] of [
    { previous_response_id: stored.id },
    { conversation: 'conv_held' },
    { prompt: { id: 'pmpt_held' } },
  ].entries()) {
    await t.test(`a Responses request on ${Object.keys(held)[0]} never spends past the cap`, async () => {
      stack.fake.setDefault('usage=in:150000,out:16');
      const key = keys[i];
      const body = JSON.stringify({ model, input: 'and then?', max_output_tokens: 16, ...held });
      const statuses = await Promise.all(
        Array.from({ length: 8 }, async () => {
          const res = await fetch(`${stack.gw.url}/v1/responses`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key.token}`, 'content-type': 'application/json' },
            body,
          });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      const spent = sumDecimals(spentBy(stack.files.db, key.keyId).costs);
      assert.ok(compare(spent, parseDecimal(cap)) <= 0, `spent ${formatDecimal(spent)} > cap ${cap}`);
      assert.ok(statuses.includes(200) && statuses.includes(429), String(statuses));
    });
  }

  // A field only the other provider serves (conversation state it holds, its MCP connector) is
  // refused by a model of another provider with a 400 naming it, which the Anthropic SDK's tool runner needs
  // to replay a thread: the reservation for it must not refuse the request with a 429 first.
  const refusals = [
    {
      path: '/v1/responses',
      body: {
        model: 'anthropic:claude-haiku-4-5',
        input: 'and then?',
        max_output_tokens: 16,
        previous_response_id: 'resp_held',
      },
      param: 'previous_response_id',
    },
    {
      path: '/v1/messages',
      body: {
        model: 'openai:gpt-5-mini',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'and then?' }],
        thread: { type: 'continue', previous_message_id: 'msg_held' },
      },
      param: 'thread',
    },
    {
      path: '/v1/messages',
      body: {
        model: 'openai:gpt-5-mini',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
        mcp_servers: [{ type: 'url', url: 'https://mcp.example/sse', name: 'x' }],
      },
      param: 'mcp_servers',
    },
    {
      // no max_tokens: Claude's whole output limit would be held, past this cap
      path: '/v1/chat/completions',
      body: {
        model: 'anthropic:claude-haiku-4-5',
        messages: [{ role: 'user', content: 'hi' }],
        logprobs: true,
      },
      param: 'logprobs',
    },
  ];
  for (const r of refusals) {
    await t.test(
      `${r.param} to a model of another provider is the 400 that says why, not a 429`,
      async () => {
        const res = await fetch(`${stack.gw.url}${r.path}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${refusalKey.token}`,
            'anthropic-version': '2023-06-01',
            'content-type': 'application/json',
          },
          body: JSON.stringify(r.body),
        });
        const body = (await res.json()) as { error: { message: string; details?: { param?: string } } };
        assert.equal(res.status, 400, body.error.message);
        assert.equal(body.error.details?.param, r.param);
      },
    );
  }
});

/**
 * Per-key spend caps and allowed models through the real gateway (DECISIONS §4): admission reserves each
 * request's worst case, so a burst of concurrent requests never spends past a daily cap; refusals are 429
 * `quota_exceeded` with `x-should-retry: false` and the cap's details in each path's error body; the 80 %
 * alert is written once; a model outside `allowed_models` is 403 with no upstream call and no fallback.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { compare, formatDecimal, mul, parseDecimal, sumDecimals } from '#src/lib/decimal.ts';
import { worstCaseCost } from '#src/models/pricing.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { boundCallTokens } from '#src/models/token-bound.ts';
import { decode } from '../helpers/budget-probes.ts';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

// claude-haiku-4-5: input 1, cache_write 1.25 (the dearest input rate), output 5 USD per million tokens
const MODEL = 'anthropic:claude-haiku-4-5';
const PROMPT = 'budget probe';
const MAX_TOKENS = 100;
const ADMITTED = 10;
const REQUESTS = 50;

// Both SDKs send this very body, which both shapes decode to the same request, so the gateway's token
// bound (token-bound.ts) is the same on either path.
const BODY = { model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user' as const, content: PROMPT }] };
const registry = loadModelRegistry(undefined);
const bounds = (['anthropic', 'openai'] as const).map((shape) =>
  boundCallTokens(decode(shape, BODY), registry.get(MODEL)!, JSON.stringify(BODY)),
);
const BOUND = bounds[0];
const worst = worstCaseCost(registry, MODEL, BOUND).cost;
const CAP = formatDecimal(mul(worst, parseDecimal(String(ADMITTED))));
// Each admitted call really costs its worst case (every input token of the bound billed as a cache write),
// so the cap admits exactly ADMITTED however the requests interleave; slow headers keep them all in flight.
const REPLY = `slow-headers=300;usage=in:0,cache_write:${BOUND.inputTokens},out:${MAX_TOKENS}`;

interface Outcome {
  status: number;
  headers: Headers;
  error?: Record<string, unknown>;
}

async function send(client: { anthropic: Anthropic; openai: OpenAI }, i: number): Promise<Outcome> {
  const messages = BODY.messages;
  try {
    const { response } =
      i % 2 === 0
        ? await client.anthropic.messages
            .create({ model: MODEL, max_tokens: MAX_TOKENS, messages })
            .withResponse()
        : await client.openai.chat.completions
            .create({ model: MODEL, max_tokens: MAX_TOKENS, messages })
            .withResponse();
    return { status: response.status, headers: response.headers };
  } catch (err) {
    if (err instanceof Anthropic.APIError) {
      return {
        status: err.status ?? 0,
        headers: err.headers ?? new Headers(),
        error: (err.error as { error: Record<string, unknown> }).error,
      };
    }
    if (err instanceof OpenAI.APIError) {
      return {
        status: err.status ?? 0,
        headers: err.headers ?? new Headers(),
        error: err.error as Record<string, unknown>,
      };
    }
    throw err;
  }
}

test('a daily cap admits exactly what it can pay for, under a concurrent burst', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack({ keyArgs: ['--daily-cap-usd', CAP] });
  t.after(() => stack.stop());
  stack.fake.setDefault(REPLY);
  assert.deepEqual(bounds[1], BOUND, 'the same bound on both paths');

  const outcomes = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => send(stack, i)));
  const db = stack.files.db;

  await t.test('exactly the affordable requests are admitted and the rest are 429 quota_exceeded', () => {
    const ok = outcomes.filter((o) => o.status === 200);
    const refused = outcomes.filter((o) => o.status !== 200);
    assert.equal(ok.length, ADMITTED);
    assert.equal(stack.fake.requests.length, ADMITTED, 'refused requests never reach the upstream');
    for (const o of refused) {
      assert.equal(o.status, 429);
      assert.equal(o.error?.code, 'quota_exceeded');
      assert.equal(o.headers.get('x-should-retry'), 'false');
      const details = o.error?.details as Record<string, unknown>;
      assert.equal(details.cap_kind, 'daily');
      assert.equal(details.cap_usd, CAP);
      assert.ok(compare(parseDecimal(String(details.spent_usd)), parseDecimal(CAP)) <= 0);
      const tomorrow = new Date();
      tomorrow.setUTCHours(24, 0, 0, 0);
      assert.equal(Date.parse(String(details.resets_at)), tomorrow.getTime(), 'next UTC midnight');
    }
  });

  await t.test('the settled spend never passes the cap', () => {
    const completed = readEvents(db, 'llm.call_completed');
    assert.equal(completed.length, ADMITTED);
    const spent = sumDecimals(completed.map((e) => String(e.payload.cost_usd)));
    assert.ok(compare(spent, parseDecimal(CAP)) <= 0, `${formatDecimal(spent)} > ${CAP}`);
    assert.equal(compare(spent, parseDecimal(CAP)), 0, 'the admitted calls used the whole cap');
  });

  await t.test('quota.alert is written once, when 80 % is crossed', () => {
    const alerts = readEvents(db, 'quota.alert');
    assert.equal(alerts.length, 1);
    assert.equal(alerts[0].payload.cap_kind, 'daily');
    assert.equal(alerts[0].payload.gateway_key_id, stack.keyId);
    assert.equal(alerts[0].payload.cap_usd, CAP);
    const spent = parseDecimal(String(alerts[0].payload.spent_usd));
    assert.ok(compare(spent, mul(parseDecimal(CAP), parseDecimal('0.8'))) >= 0);
    assert.ok(compare(spent, mul(parseDecimal(CAP), parseDecimal('0.9'))) < 0, 'at the crossing call');
  });

  await t.test('gateway.quota_exceeded is written once per refused request', () => {
    const exceeded = readEvents(db, 'gateway.quota_exceeded');
    assert.equal(exceeded.length, REQUESTS - ADMITTED);
    for (const e of exceeded) {
      assert.equal(e.payload.gateway_key_id, stack.keyId);
      assert.equal(e.payload.cap_kind, 'daily');
    }
    const turns = readEvents(db, 'turn.completed');
    assert.equal(turns.length, REQUESTS, 'every request, refused or not, completes its turn');
    assert.equal(turns.filter((e) => e.payload.error_code === 'quota_exceeded').length, REQUESTS - ADMITTED);
  });

  await t.test('a refusal is final on both SDKs (no SDK retry is invited)', async () => {
    const before = readEvents(db, 'gateway.quota_exceeded').length;
    const retrying = {
      anthropic: new Anthropic({ apiKey: stack.token, baseURL: stack.gw.url, maxRetries: 3 }),
      openai: new OpenAI({ apiKey: stack.token, baseURL: `${stack.gw.url}/v1`, maxRetries: 3 }),
    };
    for (const i of [0, 1]) {
      const o = await send(retrying, i);
      assert.equal(o.status, 429);
      assert.equal(o.error?.code, 'quota_exceeded');
    }
    assert.equal(readEvents(db, 'gateway.quota_exceeded').length, before + 2, 'one request each');
  });
});

test('a model outside allowed_models is 403 with no upstream call and no fallback', {
  timeout: 60_000,
}, async (t) => {
  // the global default is allowed: a refused model must not be swapped for it
  const stack = await startGatewayStack({
    keyArgs: ['--allow-model', 'openai:gpt-5-mini', '--allow-model', 'anthropic:claude-sonnet-4-5'],
  });
  t.after(() => stack.stop());
  const { fake } = stack;
  t.beforeEach(() => fake.reset());

  // canonical ids, and the provider-native names the SDKs and Claude Code send (mapped by built-in rules)
  const refusedModels = ['anthropic:claude-haiku-4-5', 'openai:gpt-5', 'claude-haiku-4-5', 'gpt-5'];
  for (const model of refusedModels) {
    for (const shape of ['anthropic', 'openai'] as const) {
      await t.test(`${model} on the ${shape} path is 403 model_not_allowed`, async () => {
        const messages = [{ role: 'user' as const, content: 'hi' }];
        const err = await (shape === 'anthropic'
          ? stack.anthropic.messages.create({ model, max_tokens: 16, messages })
          : stack.openai.chat.completions.create({ model, messages })
        ).then(
          () => assert.fail('answered'),
          (e: unknown) => e,
        );
        const error =
          err instanceof Anthropic.APIError
            ? (err.error as { error: Record<string, unknown> }).error
            : err instanceof OpenAI.APIError
              ? (err.error as Record<string, unknown>)
              : assert.fail(String(err));
        assert.equal((err as { status: number }).status, 403);
        assert.equal(error.code, 'model_not_allowed');
        assert.equal(fake.requests.length, 0, 'no upstream request');
        const turnId = (err as { headers: Headers }).headers.get('svc-request-id');
        const events = readEvents(stack.files.db).filter((e) => e.turn_id === turnId);
        assert.deepEqual(
          events.map((e) => e.type),
          ['route.decided', 'turn.completed'],
        );
        assert.equal(events[0].payload.winner_index, -1, 'no fallback to another model');
        assert.equal(events[0].payload.chosen_model, null);
        assert.equal(events[1].payload.error_code, 'model_not_allowed');
      });
    }
  }

  await t.test('the allowed model answers', async () => {
    const r = await stack.openai.chat.completions.create({
      model: 'openai:gpt-5-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(r.object, 'chat.completion');
    assert.equal(fake.requests.length, 1);
  });
});

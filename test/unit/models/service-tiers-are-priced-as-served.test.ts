/**
 * Paid service tiers (models.yaml `service_tiers`: OpenAI `service_tier` priority / flex, Anthropic fast mode):
 * validated like `prices`; a call is billed at the tier its answer says it ran at, else at the one it asked
 * for; the budget hold uses the asked tier's rates; a same-wire request asking for a tier the routed model has
 * no prices for leaves its field out, and one asking for no paid tier passes as sent. Anthropic's Priority Tier:
 * a Claude call is billed at its `priority` prices when its usage says it ran there (`service_tier: "priority"`),
 * and held at them unless the request says `service_tier: "standard_only"` (`auto`, the default, may run there).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeAnthropicUsage } from '#src/adapters/anthropic/response.ts';
import { decodeOpenAIResponse } from '#src/adapters/openai/response.ts';
import { decodeResponsesObject } from '#src/adapters/openai/responses.ts';
import { askedServiceTier } from '#src/gateway/service-tier.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { priceCall, worstCaseCost } from '#src/models/pricing.ts';
import { loadModelRegistry, parseModelRegistry } from '#src/models/registry.ts';

const CAPS =
  '{ supports_images: false, supports_tools: true, max_context_tokens: 1000, max_output_tokens: 100 }';
const file = (tiers: string, prices = '{ input: 1.25, output: 10 }') => `pricing_version: t1
models:
  - id: openai:gpt-5
    tier: balanced
    capabilities: ${CAPS}
    prices: ${prices}
    service_tiers: ${tiers}
  - id: anthropic:claude-opus-4-6
    tier: deep
    capabilities: ${CAPS}
    prices: { input: 5, output: 25 }
    service_tiers: { fast: { input: 30, output: 150 } }
  - id: anthropic:claude-sonnet-4-5
    tier: balanced
    capabilities: ${CAPS}
    prices: { input: 3, output: 15 }
    service_tiers: { priority: { input: 6, output: 30 } }
`;
const reg = parseModelRegistry(
  file('{ priority: { input: 2.50, output: 20, cache_read: 0.25 }, flex: { input: 0.625, output: 5 } }'),
  'models.yaml',
);
const GPT = 'openai:gpt-5';
const OPUS = 'anthropic:claude-opus-4-6';
const SONNET = 'anthropic:claude-sonnet-4-5';
const USAGE = { input_tokens: 1_000_000, output_tokens: 100_000, cached_input_tokens: 1_000_000 };

function refusal(text: string): string {
  try {
    parseModelRegistry(text, 'models.yaml');
  } catch (err) {
    assert.ok(isSvcError(err), String(err));
    assert.equal(err.code, 'config_invalid');
    return err.message;
  }
  assert.fail('expected config_invalid');
}

test('service_tiers is read like prices: cache rates default to the tier input, web_search stays the model one', () => {
  assert.deepEqual(reg.get(GPT)!.service_tiers, {
    priority: {
      input: '2.50',
      output: '20',
      cache_read: '0.25',
      cache_write: '2.50',
      cache_write_1h: '5',
      web_search: '10',
    },
    flex: {
      input: '0.625',
      output: '5',
      cache_read: '0.625',
      cache_write: '0.625',
      cache_write_1h: '1.25',
      web_search: '10',
    },
  });
  // the built-in table states no tier prices (none in the repo's references)
  assert.ok(
    loadModelRegistry(undefined)
      .list()
      .every((m) => m.service_tiers === null),
  );
  // a model without prices stays unpriced at every tier
  const unpriced = parseModelRegistry(
    file('{ priority: { input: 2, output: 20 } }').replace('    prices: { input: 1.25, output: 10 }\n', ''),
    'models.yaml',
  );
  assert.equal(unpriced.get(GPT)!.service_tiers, null);
});

test('a tier that is not priority, flex or fast, or a bad tier price, is refused naming the field', () => {
  const scale = refusal(file('{ scale: { input: 2, output: 20 } }'));
  assert.match(scale, /models\[0\]\.service_tiers/);
  assert.match(scale, /scale/);
  assert.match(
    refusal(file('{ priority: { input: -1, output: 20 } }')),
    /models\[0\]\.service_tiers\.priority\.input: must be a non-negative decimal number/,
  );
  assert.match(refusal(file('{ flex: { input: 1 } }')), /models\[0\]\.service_tiers\.flex\.output/);
});

test('a call is billed at the tier its answer names, else at the tier it asked for; default is standard', () => {
  // standard: 1.25 input + 1.25 cache reads (read rate defaults to input) + 1.0 output
  assert.equal(priceCall(reg, GPT, USAGE).cost_usd, '3.500000');
  const priority = priceCall(reg, GPT, { ...USAGE, service_tier: 'priority' });
  assert.equal(priority.cost_usd, '4.750000'); // 2.50 + 0.25 + 2.0
  assert.equal(priority.service_tier, 'priority');
  assert.equal(priceCall(reg, GPT, { ...USAGE, service_tier: 'flex' }).cost_usd, '1.750000');
  // the provider ran it at the standard tier although priority was asked: standard prices, no tier stamped
  const ranDefault = priceCall(reg, GPT, { ...USAGE, service_tier: 'default' }, undefined, 'priority');
  assert.equal(ranDefault.cost_usd, '3.500000');
  assert.equal(ranDefault.service_tier, undefined);
  // the answer named no tier: the asked one
  assert.equal(priceCall(reg, GPT, USAGE, undefined, 'priority').cost_usd, '4.750000');
  assert.equal(
    priceCall(reg, OPUS, { input_tokens: 1_000_000, output_tokens: 0, service_tier: 'fast' }).cost_usd,
    '30.000000',
  );
  // a tier the model has no prices for, or an unknown name, is standard
  assert.equal(
    priceCall(reg, OPUS, { input_tokens: 1_000_000, output_tokens: 0, service_tier: 'flex' }).cost_usd,
    '5.000000',
  );
  assert.equal(priceCall(reg, GPT, { ...USAGE, service_tier: 'toString' }).cost_usd, '3.500000');
});

test('the worst case held at admission uses the asked tier rates', () => {
  const bound = { inputTokens: 1_000_000, outputTokens: 100_000, longContext: false, hourCache: false };
  assert.equal(worstCaseCost(reg, GPT, bound).cost_usd, '2.250000');
  assert.equal(worstCaseCost(reg, GPT, bound, 'priority').cost_usd, '4.500000');
  assert.equal(worstCaseCost(reg, OPUS, bound, 'fast').cost_usd, '45.000000');
});

test('the answers name the tier they ran at: OpenAI service_tier, Anthropic usage.speed', () => {
  const chat = {
    id: 'c',
    object: 'chat.completion',
    model: 'gpt-5',
    service_tier: 'priority',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1 },
  };
  assert.equal(decodeOpenAIResponse(chat).usage.service_tier, 'priority');
  const response = {
    id: 'r',
    object: 'response',
    status: 'completed',
    service_tier: 'flex',
    output: [],
    usage: { input_tokens: 3, output_tokens: 1 },
  };
  assert.equal(decodeResponsesObject(response).usage.service_tier, 'flex');
  assert.equal(decodeAnthropicUsage({ input_tokens: 3, speed: 'fast' }).service_tier, 'fast');
  assert.equal(decodeAnthropicUsage({ input_tokens: 3, service_tier: 'standard' }).service_tier, undefined);
  // Anthropic's Priority Tier: the usage says the call ran on the organisation's priority capacity
  const ranPriority = {
    input_tokens: 1_000_000,
    output_tokens: 0,
    service_tier: 'priority',
    speed: 'standard',
  };
  const usage = decodeAnthropicUsage(ranPriority);
  assert.equal(usage.service_tier, 'priority');
  assert.equal(priceCall(reg, SONNET, { ...ranPriority, ...usage }).cost_usd, '6.000000');
  assert.equal(decodeAnthropicUsage({ input_tokens: 3, service_tier: 'batch' }).service_tier, undefined);
});

test('a same-wire request keeps a priced tier, leaves out an unpriced one, passes the no-paid-tier values', () => {
  const gpt = reg.get(GPT)!;
  const opus = reg.get(OPUS)!;
  assert.deepEqual(askedServiceTier('openai', { service_tier: 'priority' }, gpt, true), {
    tier: 'priority',
    leftOut: [],
    hold: 'priority',
  });
  assert.deepEqual(askedServiceTier('openai_responses', { service_tier: 'flex' }, gpt, true), {
    tier: 'flex',
    leftOut: [],
    hold: 'flex',
  });
  assert.deepEqual(askedServiceTier('openai', { service_tier: 'scale' }, gpt, true).leftOut, [
    'service_tier',
  ]);
  assert.deepEqual(askedServiceTier('anthropic', { speed: 'fast' }, opus, true), {
    tier: 'fast',
    leftOut: [],
    hold: 'fast',
  });
  const haiku = loadModelRegistry(undefined).get('anthropic:claude-haiku-4-5')!;
  assert.deepEqual(askedServiceTier('anthropic', { speed: 'fast' }, haiku, true), { leftOut: ['speed'] });
  for (const value of ['default', 'standard', 'standard_only', 7])
    assert.deepEqual(askedServiceTier('openai', { service_tier: value }, gpt, true), { leftOut: [] });
  assert.deepEqual(askedServiceTier('anthropic', { speed: 'standard', service_tier: 'auto' }, opus, true), {
    leftOut: [],
  });
});

test('a Claude model with priority prices is held at them unless the request says standard_only', () => {
  const sonnet = reg.get(SONNET)!;
  // Anthropic's service_tier defaults to auto: the organisation's priority capacity may run the call
  for (const body of [{}, { service_tier: 'auto' }])
    assert.deepEqual(askedServiceTier('anthropic', body, sonnet, true), { leftOut: [], hold: 'priority' });
  assert.deepEqual(askedServiceTier('anthropic', { service_tier: 'standard_only' }, sonnet, true), {
    leftOut: [],
  });
  // a translated request is sent without the field, so at auto
  assert.deepEqual(askedServiceTier('openai', { service_tier: 'default' }, sonnet, false), {
    leftOut: [],
    hold: 'priority',
  });
  // fast mode it has no prices for is left out; the call may still run at priority
  assert.deepEqual(askedServiceTier('anthropic', { speed: 'fast' }, sonnet, true), {
    leftOut: ['speed'],
    hold: 'priority',
  });
  // no priority prices: the standard hold
  assert.deepEqual(askedServiceTier('anthropic', {}, reg.get(OPUS)!, true), { leftOut: [] });
});

test('an OpenAI model with priority prices is held at them unless the request names a tier', () => {
  const gpt = reg.get(GPT)!;
  // OpenAI runs no service_tier, null (the field is nullable) or auto at the project's default tier, which can be
  // priority
  for (const body of [{}, { service_tier: null }, { service_tier: 'auto' }])
    for (const shape of ['openai', 'openai_responses'] as const)
      assert.deepEqual(askedServiceTier(shape, body, gpt, true), { leftOut: [], hold: 'priority' });
  // default is the standard tier; flex is its own
  assert.deepEqual(askedServiceTier('openai', { service_tier: 'default' }, gpt, true), { leftOut: [] });
  assert.equal(askedServiceTier('openai', { service_tier: 'flex' }, gpt, true).hold, 'flex');
  // an unpriced tier left out, and a translated request, are sent without the field: the project's default
  assert.deepEqual(askedServiceTier('openai', { service_tier: 'scale' }, gpt, true), {
    leftOut: ['service_tier'],
    hold: 'priority',
  });
  assert.deepEqual(askedServiceTier('anthropic', { service_tier: 'standard_only' }, gpt, false), {
    leftOut: [],
    hold: 'priority',
  });
  // no priority prices: the standard hold
  const flexOnly = parseModelRegistry(file('{ flex: { input: 0.625, output: 5 } }'), 'models.yaml').get(GPT)!;
  assert.deepEqual(askedServiceTier('openai', {}, flexOnly, true), { leftOut: [] });
});

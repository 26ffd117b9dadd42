/**
 * Anthropic's 1M-token window (models.yaml `long_context`, beta context-1m-2025-08-07 on Claude Sonnet 4 / 4.5):
 * routing's context check takes it only for a request whose anthropic-beta names it, on a model that has it;
 * the budget bound and its worst case use it and its rates; a finished call whose whole input (uncached, cache
 * reads, cache writes) exceeds 200,000 tokens is priced whole at the long-context rates, exactly, where a
 * models.yaml states them (the built-in table states the window only).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeAnthropicRequest } from '#src/gateway/shapes/anthropic/decode.ts';
import { decodeOpenAIRequest } from '#src/gateway/shapes/openai/decode.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { DEFAULT_MODELS_YAML } from '#src/models/default-models.ts';
import { priceCall, worstCaseCost } from '#src/models/pricing.ts';
import { parseModelRegistry } from '#src/models/registry.ts';
import { boundCallTokens } from '#src/models/token-bound.ts';
import { describeRequest } from '#src/routing/request-facts.ts';
import { registry, route } from '../routing/routing-fixture.ts';

const SONNET = 'anthropic:claude-sonnet-4-5';
const BETA = 'context-1m-2025-08-07';
const body = (text: string) => ({
  model: SONNET,
  max_tokens: 64,
  messages: [{ role: 'user', content: text }],
});
// the built-in table with Anthropic's long-context rates stated, as README's models.yaml example does
const WINDOW = `long_context: { max_context_tokens: 1000000, beta: ${'context-1m-2025-08-07'} }`;
const priced = parseModelRegistry(
  DEFAULT_MODELS_YAML.replaceAll(
    WINDOW,
    `${WINDOW.slice(0, -2)}, prices: { input: 6, output: 22.50, cache_read: 0.60, cache_write: 7.50, cache_write_1h: 12 } }`,
  ),
  'models.yaml',
);
const anthropic = (text: string, beta?: string) =>
  decodeAnthropicRequest(body(text), { 'anthropic-version': '2023-06-01', 'anthropic-beta': beta });

test('the built-in Sonnet 4 and 4.5 have the 1M window without long-context rates; Opus and Haiku have neither', () => {
  assert.ok(DEFAULT_MODELS_YAML.split(WINDOW).length === 3, 'the window is stated on two models');
  for (const id of [SONNET, 'anthropic:claude-sonnet-4']) {
    const long = registry.get(id)!.long_context!;
    assert.equal(long.max_context_tokens, 1_000_000);
    assert.equal(long.beta, BETA);
    assert.equal(long.above_input_tokens, 200_000);
    assert.ok(!long.prices, 'the built-in table states no long-context rates');
    assert.deepEqual(priced.get(id)!.long_context!.prices, {
      input: '6',
      output: '22.50',
      cache_read: '0.60',
      cache_write: '7.50',
      cache_write_1h: '12',
      web_search: '10',
    });
  }
  for (const id of ['anthropic:claude-opus-4-5', 'anthropic:claude-haiku-4-5', 'openai:gpt-5'])
    assert.equal(registry.get(id)!.long_context, null);
  // with the built-in table a call above the threshold is billed at the standard rates
  assert.equal(
    priceCall(registry, SONNET, { input_tokens: 200_001, output_tokens: 1_000 }).cost_usd,
    '0.615003',
  );
});

test('routing: a 225k-token prompt fits Sonnet only with the beta among the anthropic-beta values', () => {
  const text = 'x'.repeat(900_000);
  const withBeta = describeRequest(anthropic(text, `interleaved-thinking-2025-05-14, ${BETA}`), {
    workspacePath: null,
  });
  assert.deepEqual(withBeta.anthropicBetas, ['interleaved-thinking-2025-05-14', BETA]);
  assert.equal(route({ ...withBeta, requestedModel: SONNET }).chosen?.id, SONNET);
  // without the beta, or from a Chat client (which cannot send it), the 200k window stays
  for (const req of [
    anthropic(text),
    anthropic(text, 'interleaved-thinking-2025-05-14'),
    decodeOpenAIRequest(body(text)),
  ]) {
    const d = route({ ...describeRequest(req, { workspacePath: null }), requestedModel: SONNET });
    assert.equal(d.chain[0].validation_failure, 'context_too_small');
  }
  // a model without the window is not widened by the beta
  const opus = route({ ...withBeta, requestedModel: 'anthropic:claude-opus-4-5' });
  assert.equal(opus.chain[0].validation_failure, 'context_too_small');
  // the window is 1M: input plus max_tokens above it is still refused
  const over = route({
    ...withBeta,
    requestedModel: SONNET,
    estimatedInputTokens: 990_000,
    maxOutputTokens: 20_000,
  });
  assert.equal(over.chain[0].validation_failure, 'context_too_small');
});

test('priced call: above 200,000 input tokens (cache reads and writes counted) the whole call is at long-context rates', () => {
  const at = (usage: Parameters<typeof priceCall>[2]) => priceCall(priced, SONNET, usage).cost_usd;
  // exactly 200,000: standard. 200,000 × 3 + 1,000 × 15 = 615,000 µ$
  assert.equal(at({ input_tokens: 200_000, output_tokens: 1_000 }), '0.615000');
  // 200,001: long. 200,001 × 6 + 1,000 × 22.50 = 1,222,506 µ$
  assert.equal(at({ input_tokens: 200_001, output_tokens: 1_000 }), '1.222506');
  // the threshold counts cache reads and writes: 1,000 + 150,000 + 60,000 (20,000 for an hour) = 211,000
  // 1,000 × 6 + 150,000 × 0.60 + 40,000 × 7.50 + 20,000 × 12 + 10 × 22.50 = 636,225 µ$
  assert.equal(
    at({
      input_tokens: 1_000,
      cached_input_tokens: 150_000,
      cache_creation_input_tokens: 60_000,
      cache_creation_1h_input_tokens: 20_000,
      output_tokens: 10,
    }),
    '0.636225',
  );
  // the same tokens on a model without long-context rates: standard (haiku 1 / 0.10 / 1.25 / 2 / 5)
  assert.equal(
    priceCall(priced, 'anthropic:claude-haiku-4-5', {
      input_tokens: 1_000,
      cached_input_tokens: 150_000,
      cache_creation_input_tokens: 60_000,
      cache_creation_1h_input_tokens: 20_000,
      output_tokens: 10,
    }).cost_usd,
    '0.106050',
  );
});

test('budget: the bound reserves at long-context rates only with the beta and above the threshold', () => {
  const model = priced.get(SONNET)!;
  const big = 'x'.repeat(900_000);
  const withBeta = boundCallTokens(anthropic(big, BETA), model, JSON.stringify(body(big)));
  assert.equal(withBeta.longContext, true);
  assert.ok(withBeta.inputTokens > 200_000);
  // every input token at the dearest long input rate (7.50, five-minute writes), output at 22.50
  const expected = (withBeta.inputTokens * 7.5 + 64 * 22.5) / 1e6;
  assert.equal(Number(worstCaseCost(priced, SONNET, withBeta).cost_usd), expected);
  // a small request with the beta stays at the standard rates (3.75 / 15)
  const small = boundCallTokens(anthropic('hi', BETA), model);
  assert.equal(small.longContext, true);
  assert.equal(
    Number(worstCaseCost(priced, SONNET, small).cost_usd),
    (small.inputTokens * 3.75 + 64 * 15) / 1e6,
  );
  // without the beta the bound never takes the long rates, and what the provider adds (an MCP server)
  // reserves the 200k window, with it the 1M one
  const mcp = (beta?: string) =>
    boundCallTokens(
      decodeAnthropicRequest(
        { ...body('hi'), mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'm' }] },
        { 'anthropic-version': '2023-06-01', 'anthropic-beta': beta },
      ),
      model,
    );
  assert.equal(mcp().inputTokens, 200_000);
  assert.equal(mcp().longContext, false);
  assert.equal(mcp(BETA).inputTokens, 1_000_000);
  assert.equal(worstCaseCost(priced, SONNET, mcp(BETA)).cost_usd, '7.501440'); // 1M × 7.50 + 64 × 22.50
});

test('models.yaml long_context: defaults filled in, and mistakes named', () => {
  const model = (id: string, long: string, prices = 'prices: { input: 2, output: 10 }') =>
    `pricing_version: t\nmodels:\n  - id: ${id}\n    tier: fast\n    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 1000 }\n    ${prices}\n    long_context: ${long}\n`;
  const reg = parseModelRegistry(
    model(
      'anthropic:claude-x',
      `{ max_context_tokens: 1000000, beta: ${BETA}, prices: { input: 4, output: 15 } }`,
    ),
    'models.yaml',
  );
  assert.deepEqual(reg.get('anthropic:claude-x')!.long_context, {
    max_context_tokens: 1_000_000,
    beta: BETA,
    above_input_tokens: 200_000, // the standard window
    prices: {
      input: '4',
      output: '15',
      cache_read: '4',
      cache_write: '4',
      cache_write_1h: '8',
      web_search: '10',
    },
  });
  const refused = (text: string, pattern: RegExp) =>
    assert.throws(
      () => parseModelRegistry(text, 'models.yaml'),
      (err: unknown) => isSvcError(err) && err.code === 'config_invalid' && pattern.test(err.message),
    );
  refused(
    model('openai:x', `{ max_context_tokens: 1000000, beta: ${BETA} }`),
    /long_context: only an anthropic model/,
  );
  refused(
    model('anthropic:x', `{ max_context_tokens: 100000, beta: ${BETA} }`),
    /must be above capabilities/,
  );
  refused(
    model('anthropic:x', `{ max_context_tokens: 1000000, beta: ${BETA}, above_input_tokens: 1000000 }`),
    /above_input_tokens: must be below/,
  );
  refused(
    model(
      'anthropic:x',
      `{ max_context_tokens: 1000000, beta: ${BETA}, prices: { input: 4, output: 15 } }`,
      '',
    ),
    /long_context\.prices: the model has no prices/,
  );
  refused(model('anthropic:x', `{ max_context_tokens: 1000000, beta: 'a b' }`), /beta/);
});

// A step without a beta (Claude Haiku 5.5: every rate 5x above a 100,000-token prompt): any request meets it
const STEP = parseModelRegistry(
  `pricing_version: t
models:
  - id: anthropic:claude-step
    tier: fast
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1000000, max_output_tokens: 1000 }
    prices: { input: 0.10, output: 0.50, cache_read: 0.01, cache_write: 0.125, cache_write_1h: 0.20 }
    long_context: { above_input_tokens: 100000, prices: { input: 0.50, output: 2.50, cache_read: 0.05, cache_write: 0.625, cache_write_1h: 1 } }
  - id: openai:step
    tier: fast
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1050000, max_output_tokens: 1000 }
    prices: { input: 2, output: 10, cache_read: 0.10, cache_write: 2.50 }
    long_context: { above_input_tokens: 272000, prices: { input: 4, output: 15, cache_read: 0.20, cache_write: 5 } }
`,
  'models.yaml',
);

test('a price step without a beta: priced by the whole input below, at and above its threshold', () => {
  const step = (usage: Parameters<typeof priceCall>[2]) =>
    priceCall(STEP, 'anthropic:claude-step', usage).cost_usd;
  // at the threshold: standard (100,000 × 0.10 + 10 × 0.50 = 10,005 µ$)
  assert.equal(step({ input_tokens: 100_000, output_tokens: 10 }), '0.010005');
  // one above: every token at the step's rates (100,001 × 0.50 + 10 × 2.50)
  assert.equal(step({ input_tokens: 100_001, output_tokens: 10 }), '0.0500255');
  // cache reads and writes count toward the threshold: 1,000 + 90,000 read + 10,000 written (4,000 for an hour)
  const cached = {
    input_tokens: 1_000,
    cached_input_tokens: 90_000,
    cache_creation_input_tokens: 10_000,
    cache_creation_1h_input_tokens: 4_000,
    output_tokens: 10,
  };
  // 101,000 > 100,000: 1,000 × 0.50 + 90,000 × 0.05 + 6,000 × 0.625 + 4,000 × 1 + 10 × 2.50 = 12,775 µ$
  assert.equal(step(cached), '0.012775');
  // 100,000 exactly (1,000 writes fewer): standard, 1,000 × 0.10 + 90,000 × 0.01 + 6,000 × 0.125 + 3,000 × 0.20
  // + 10 × 0.50 = 2,355 µ$
  assert.equal(
    step({ ...cached, cache_creation_input_tokens: 9_000, cache_creation_1h_input_tokens: 3_000 }),
    '0.002355',
  );
  // OpenAI counts cached tokens in its input: 200,000 uncached + 80,000 cached > 272,000: 2x input, 1.5x output
  assert.equal(
    priceCall(STEP, 'openai:step', { input_tokens: 200_000, cached_input_tokens: 80_000, output_tokens: 100 })
      .cost_usd,
    '0.817500', // 200,000 × 4 + 80,000 × 0.20 + 100 × 15
  );
  assert.equal(
    priceCall(STEP, 'openai:step', { input_tokens: 192_000, cached_input_tokens: 80_000, output_tokens: 100 })
      .cost_usd,
    '0.393000', // 272,000 in all: 192,000 × 2 + 80,000 × 0.10 + 100 × 10
  );
  // the window stays the model's own; the step is listed like any long-context threshold
  assert.deepEqual(STEP.get('anthropic:claude-step')!.long_context, {
    max_context_tokens: 1_000_000,
    beta: null,
    above_input_tokens: 100_000,
    prices: {
      input: '0.50',
      output: '2.50',
      cache_read: '0.05',
      cache_write: '0.625',
      cache_write_1h: '1',
      web_search: '10',
    },
  });
});

test('a price step without a beta: the hold takes the step rates when the request could pass it', () => {
  const model = STEP.get('anthropic:claude-step')!;
  const ask = (text: string) =>
    decodeAnthropicRequest(
      { model: 'claude-step', max_tokens: 64, messages: [{ role: 'user', content: text }] },
      { 'anthropic-version': '2023-06-01' },
    );
  const json = (text: string) =>
    JSON.stringify({ model: 'claude-step', max_tokens: 64, messages: [{ role: 'user', content: text }] });
  const big = 'x'.repeat(150_000);
  const over = boundCallTokens(ask(big), model, json(big));
  assert.equal(over.longContext, true);
  assert.ok(over.inputTokens > 100_000);
  // every input token at the dearest step rate (the five-minute write, 0.625: no one-hour write is asked for),
  // output at 2.50
  assert.equal(
    Number(worstCaseCost(STEP, 'anthropic:claude-step', over).cost_usd),
    (over.inputTokens * 0.625 + 64 * 2.5) / 1e6,
  );
  // a small request stays at the standard rates (0.125 / 0.50)
  const small = boundCallTokens(ask('hi'), model, json('hi'));
  assert.equal(small.longContext, true);
  assert.equal(
    Number(worstCaseCost(STEP, 'anthropic:claude-step', small).cost_usd),
    (small.inputTokens * 0.125 + 64 * 0.5) / 1e6,
  );
  // what the gateway cannot measure (an MCP server) holds the model's own whole window at the step's rates
  const mcp = boundCallTokens(
    decodeAnthropicRequest(
      {
        model: 'claude-step',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi' }],
        mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'm' }],
      },
      { 'anthropic-version': '2023-06-01' },
    ),
    model,
  );
  assert.equal(mcp.inputTokens, 1_000_000);
  assert.equal(worstCaseCost(STEP, 'anthropic:claude-step', mcp).cost_usd, '0.625160');
});

test('models.yaml: a price step without a beta states its threshold and prices, inside the window', () => {
  const model = (id: string, long: string) =>
    `pricing_version: t\nmodels:\n  - id: ${id}\n    tier: fast\n    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 1000 }\n    prices: { input: 2, output: 10 }\n    long_context: ${long}\n`;
  const refused = (text: string, pattern: RegExp) =>
    assert.throws(
      () => parseModelRegistry(text, 'models.yaml'),
      (err: unknown) => isSvcError(err) && err.code === 'config_invalid' && pattern.test(err.message),
    );
  refused(
    model('openai:x', '{ prices: { input: 4, output: 15 } }'),
    /above_input_tokens: required without beta/,
  );
  refused(model('openai:x', '{ above_input_tokens: 100000 }'), /long_context\.prices: required without beta/);
  refused(
    model('openai:x', '{ above_input_tokens: 200000, prices: { input: 4, output: 15 } }'),
    /above_input_tokens: must be below capabilities\.max_context_tokens \(200000\)/,
  );
  refused(
    model(
      'openai:x',
      '{ max_context_tokens: 400000, above_input_tokens: 100000, prices: { input: 4, output: 15 } }',
    ),
    /max_context_tokens: only with beta/,
  );
  refused(model('anthropic:x', `{ beta: ${BETA} }`), /max_context_tokens: required with beta/);
  // an OpenAI model takes a step (no header is involved)
  const ok = parseModelRegistry(
    model('openai:x', '{ above_input_tokens: 100000, prices: { input: 4, output: 15 } }'),
    'models.yaml',
  );
  assert.equal(ok.get('openai:x')!.long_context!.beta, null);
});

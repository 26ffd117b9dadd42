import assert from 'node:assert/strict';
import { test } from 'node:test';
import { priceCall, worstCaseCost } from '#src/models/pricing.ts';
import { loadModelRegistry, parseModelRegistry } from '#src/models/registry.ts';

const reg = loadModelRegistry(undefined);

test('each token class is billed at its own rate, exactly', () => {
  // sonnet 4.5: 3 in, 15 out, 0.30 cache read, 3.75 cache write per million
  const c = priceCall(reg, 'anthropic:claude-sonnet-4-5', {
    input_tokens: 1000,
    output_tokens: 500,
    cached_input_tokens: 2000,
    cache_creation_input_tokens: 100,
  });
  // 1000*3 + 2000*0.30 + 100*3.75 + 500*15 = 3000 + 600 + 375 + 7500 = 11475 → 0.011475
  assert.equal(c.cost_usd, '0.011475');
  assert.equal(c.priced, true);
  assert.equal(c.pricing_version, reg.pricingVersion);
});

test('one-hour cache writes are billed at cache_write_1h (twice input unless the table says otherwise)', () => {
  // 100 written, 60 of them for an hour: 40*3.75 + 60*6 = 150 + 360 = 510 → 0.000510
  const c = priceCall(reg, 'anthropic:claude-sonnet-4-5', {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 100,
    cache_creation_1h_input_tokens: 60,
  });
  assert.equal(c.cost_usd, '0.000510');
  assert.equal(reg.get('anthropic:claude-sonnet-4-5')!.prices!.cache_write_1h, '6');
  const custom = parseModelRegistry(
    `pricing_version: t\nmodels:\n  - id: anthropic:claude-x\n    tier: fast\n    aliases: []\n    can_delegate: false\n    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1000, max_output_tokens: 100 }\n    prices: { input: 1, output: 2, cache_write: 1.25, cache_write_1h: 2.5 }\n`,
    'models.yaml',
  );
  const written = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 1_000_000 };
  assert.equal(priceCall(custom, 'anthropic:claude-x', written).cost_usd, '1.250000');
  assert.equal(
    priceCall(custom, 'anthropic:claude-x', { ...written, cache_creation_1h_input_tokens: 1_000_000 })
      .cost_usd,
    '2.500000',
  );
  // the hour share can never exceed the writes
  assert.equal(
    priceCall(custom, 'anthropic:claude-x', { ...written, cache_creation_1h_input_tokens: 5_000_000 })
      .cost_usd,
    '2.500000',
  );
});

test('the current Claude models are billed at their list prices, one-hour writes included', () => {
  // a million tokens of each class: input, output, cache read, 5-minute write, one-hour write (platform.claude.com
  // model pages and pricing page: Opus 5.5 4/20/0.20/5/8, Sonnet 5.5 2/10/0.10/2.50/4, Fable 5.1 10/50/0.25/12.50/20)
  const M = 1_000_000;
  const usage = {
    input_tokens: M,
    output_tokens: M,
    cached_input_tokens: M,
    cache_creation_input_tokens: 2 * M,
    cache_creation_1h_input_tokens: M,
  };
  for (const [id, cost] of [
    ['anthropic:claude-opus-5-5', '37.200000'],
    ['anthropic:claude-sonnet-5-5', '18.600000'],
    ['anthropic:claude-fable-5-1', '92.750000'],
  ] as const) {
    assert.equal(priceCall(reg, id, usage).cost_usd, cost, id);
    // a 1M-token window at the standard rates (no long-context premium, no beta) and 128K output
    const m = reg.get(id)!;
    assert.deepEqual(
      [m.capabilities.max_context_tokens, m.capabilities.max_output_tokens, m.long_context],
      [1_000_000, 128_000, null],
      id,
    );
  }
});

test('server-side web searches are billed at web_search per 1,000 searches on top of the tokens', () => {
  // sonnet 4.5: 1000 × 3 + 100 × 15 = 4500 per million → 0.0045; 3 searches × 10 / 1000 = 0.03
  const usage = { input_tokens: 1000, output_tokens: 100 };
  const c = priceCall(reg, 'anthropic:claude-sonnet-4-5', { ...usage, web_search_requests: 3 });
  assert.equal(c.cost_usd, '0.034500');
  assert.equal(
    priceCall(reg, 'openai:gpt-5-mini', { ...usage, web_search_requests: 1 }).cost_usd,
    '0.010450',
  );
  // the table's own price, exact to the last digit; absent it is the providers' list price (openrouter: 0)
  const custom = parseModelRegistry(
    `pricing_version: t
models:
  - id: openai:x
    tier: fast
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1000, max_output_tokens: 100 }
    prices: { input: 0, output: 0, web_search: 25.000000001 }
  - id: anthropic:y
    tier: fast
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1000, max_output_tokens: 100 }
    prices: { input: 0, output: 0 }
  - id: openrouter:z
    tier: fast
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1000, max_output_tokens: 100 }
    prices: { input: 0, output: 0 }
`,
    'models.yaml',
  );
  const searches = { input_tokens: 0, output_tokens: 0, web_search_requests: 7 };
  assert.equal(priceCall(custom, 'openai:x', searches).cost_usd, '0.175000000007');
  assert.equal(priceCall(custom, 'anthropic:y', searches).cost_usd, '0.070000');
  assert.equal(priceCall(custom, 'openrouter:z', searches).cost_usd, '0.000000');
  // a count that is not a positive number bills nothing
  assert.equal(priceCall(custom, 'openai:x', { ...searches, web_search_requests: -1 }).cost_usd, '0.000000');
  assert.throws(
    () =>
      parseModelRegistry(
        `pricing_version: t
models:
  - id: openai:x
    tier: fast
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1000, max_output_tokens: 100 }
    prices: { input: 0, output: 0, web_search: 1e1 }
`,
        'models.yaml',
      ),
    /models\[0\]\.prices\.web_search/,
  );
});

test('sub-micro-dollar costs keep every digit', () => {
  const c = priceCall(reg, 'openai:gpt-5-nano', {
    input_tokens: 1,
    output_tokens: 0,
    cached_input_tokens: 1,
  });
  // 1*0.05 + 1*0.005 = 0.055 per million → 0.000000055
  assert.equal(c.cost_usd, '0.000000055');
});

test('missing cache fields count as zero tokens', () => {
  const c = priceCall(reg, 'anthropic:claude-haiku-4-5', {
    input_tokens: 1_000_000,
    output_tokens: 1_000_000,
  });
  assert.equal(c.cost_usd, '6.000000');
});

test('an unknown or unpriced model costs "0" and says priced false', () => {
  assert.deepEqual(
    { ...priceCall(reg, 'openai:nope', { input_tokens: 5, output_tokens: 5 }), cost: undefined },
    { cost_usd: '0', cost: undefined, priced: false, pricing_version: reg.pricingVersion },
  );
  const unpricedReg = parseModelRegistry(
    'pricing_version: v\nmodels:\n  - id: openai:x\n    tier: fast\n    capabilities: { supports_images: false, supports_tools: false, max_context_tokens: 10, max_output_tokens: 10 }\n',
    'm.yaml',
  );
  assert.equal(priceCall(unpricedReg, 'openai:x', { input_tokens: 5, output_tokens: 5 }).priced, false);
});

test('a million calls of one token sum without drift', () => {
  const one = priceCall(reg, 'openai:gpt-5-mini', { input_tokens: 4, output_tokens: 0 }); // 4 × 0.25 = 1 µ$
  assert.equal(one.cost_usd, '0.000001');
});

test('worst case prices the bound: input at the dearest input rate, output at the output rate', () => {
  // sonnet: dearest input rate is cache_write 3.75; 1000 × 3.75 + 2000 × 15 = 33750 → 0.03375
  const bound = { inputTokens: 1000, outputTokens: 2000, hourCache: false, longContext: false };
  assert.equal(worstCaseCost(reg, 'anthropic:claude-sonnet-4-5', bound).cost_usd, '0.033750');
  // a request with a one-hour breakpoint: its writes cost 6; 1000 × 6 + 2000 × 15 = 36000 → 0.036
  assert.equal(
    worstCaseCost(reg, 'anthropic:claude-sonnet-4-5', { ...bound, hourCache: true }).cost_usd,
    '0.036000',
  );
  // haiku: 64000 output tokens × 5 = 320000 → 0.32
  assert.equal(
    worstCaseCost(reg, 'anthropic:claude-haiku-4-5', {
      inputTokens: 0,
      outputTokens: 64_000,
      hourCache: false,
      longContext: false,
    }).cost_usd,
    '0.320000',
  );
  assert.equal(
    worstCaseCost(reg, 'openai:none', {
      inputTokens: 10,
      outputTokens: 1,
      hourCache: false,
      longContext: false,
    }).priced,
    false,
  );
});

test('built in, only Claude Haiku 5.5 and GPT-6.2 Sol step by prompt size: every other model bills linearly', () => {
  const stepped = reg
    .list()
    .filter((m) => m.long_context?.prices)
    .map((m) => m.id);
  assert.deepEqual(stepped.sort(), ['anthropic:claude-haiku-5-5', 'openai:gpt-6.2-sol']);
  // either side of both steps (100,000 and 272,000 tokens) and of the 1M windows' 200,000: the same per-token rates
  const usage = (n: number) => ({
    input_tokens: n,
    cached_input_tokens: n,
    cache_creation_input_tokens: n,
    output_tokens: n,
  });
  for (const m of reg.list()) {
    if (!m.prices || stepped.includes(m.id)) continue;
    const small = priceCall(reg, m.id, usage(10_000)).cost_usd;
    const large = priceCall(reg, m.id, usage(100_000)).cost_usd;
    // in nano-dollars, integers: 10 times the tokens cost 10 times as much
    assert.equal(Math.round(Number(large) * 1e9), Math.round(Number(small) * 1e10), m.id);
  }
});

/**
 * GET /analytics/savings' query: both sides re-priced exactly under the current table (actual on each
 * row's own model, baseline on the baseline), stamped spend apart, rows of unpriced models counted and
 * left out of the actual side, negative savings kept, savings_pct null on a zero baseline, and 400
 * unknown_baseline_model for a baseline without prices.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultBaseline, querySavings } from '#src/analytics/index.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { loadModelRegistry, parseModelRegistry } from '#src/models/registry.ts';
import { callEvent, DAY_US, seed, tempStore, windowOf } from '../../helpers/analytics-events.ts';

const CAPS =
  '{ supports_images: true, supports_tools: true, max_context_tokens: 100000, max_output_tokens: 1000 }';
const REGISTRY = parseModelRegistry(
  `pricing_version: test-7
models:
  - { id: 'anthropic:small', tier: fast, capabilities: ${CAPS}, prices: { input: 1, output: 2, cache_read: 0.1, cache_write: 1.25 } }
  - { id: 'anthropic:mid', tier: balanced, capabilities: ${CAPS}, prices: { input: 3, output: 15, cache_read: 0.30, cache_write: 3.75 } }
  - { id: 'openai:big', tier: deep, capabilities: ${CAPS}, prices: { input: 10, output: 40 } }
  - { id: 'openai:unpriced', tier: fast, capabilities: ${CAPS} }
`,
  'test models.yaml',
);
const WINDOW = windowOf(0, DAY_US);

async function seeded(t: { after: (fn: () => unknown) => void }) {
  const store = await tempStore(t);
  seed(store, [
    // 1M input + 100k output + 200k cache reads + 40k cache writes on small: $1 + $0.2 + $0.02 + $0.05
    (id) =>
      callEvent(id, {
        at: 1,
        model: 'anthropic:small',
        cost: '1.27',
        input: 1_000_000,
        output: 100_000,
        cached: 200_000,
        creation: 40_000,
      }),
    // 1000 input + 10 output on big: $0.01 + $0.0004
    (id) => callEvent(id, { at: 2, model: 'openai:big', cost: '0.0104', input: 1000, output: 10 }),
    // not in the table: counts in the baseline and the stamped sum only
    (id) => callEvent(id, { at: 3, model: 'openrouter:gone/model', cost: '0.5', input: 1000, output: 0 }),
    (id) => callEvent(id, { at: 4, model: 'openai:unpriced', cost: '0', input: 0, output: 1000 }),
  ]);
  return store;
}

test('the default baseline is the first priced balanced anthropic model', () => {
  assert.equal(defaultBaseline(REGISTRY), 'anthropic:mid');
  assert.equal(defaultBaseline(loadModelRegistry(undefined)), 'anthropic:claude-sonnet-4-5');
});

test('both sides are re-priced exactly and unpriced rows are counted', async (t) => {
  const store = await seeded(t);
  const r = await querySavings(store.kysely, REGISTRY, { window: WINDOW, baseline: undefined });
  // tokens of all four rows: input 1,002,000, output 101,010, cache reads 200,000, cache writes 40,000
  // baseline (mid): 1,002,000 × 3 + 101,010 × 15 + 200,000 × 0.3 + 40,000 × 3.75 = 4,731,150 per 1e6
  // actual: small 1,270,000 + big 10,400 per 1e6; savings 3.45075 of 4.73115
  assert.deepEqual(r, {
    baseline_model: 'anthropic:mid',
    actual_repriced_usd: 1.2804,
    baseline_repriced_usd: 4.73115,
    savings_usd: 3.45075,
    savings_pct: 3.45075 / 4.73115, // the double nearest the exact quotient
    actual_stamped_usd: 1.7804,
    rows_total: 4,
    rows_missing_from_price_table: 2,
  });
});

test('a dearer baseline saves money, a cheaper one shows negative savings with the sign kept', async (t) => {
  const store = await seeded(t);
  const r = await querySavings(store.kysely, REGISTRY, { window: WINDOW, baseline: 'anthropic:small' });
  // small: 1,002,000 × 1 + 101,010 × 2 + 200,000 × 0.1 + 40,000 × 1.25 = 1.27402 against actual 1.2804
  assert.equal(r.baseline_repriced_usd, 1.27402);
  assert.equal(r.savings_usd, -0.00638);
  assert.equal(r.savings_pct, -0.00638 / 1.27402);
});

test('savings_pct is null when the baseline costs nothing, and an empty window is all zeros', async (t) => {
  const store = await tempStore(t);
  const r = await querySavings(store.kysely, REGISTRY, { window: WINDOW, baseline: undefined });
  assert.deepEqual(r, {
    baseline_model: 'anthropic:mid',
    actual_repriced_usd: 0,
    baseline_repriced_usd: 0,
    savings_usd: 0,
    savings_pct: null,
    actual_stamped_usd: 0,
    rows_total: 0,
    rows_missing_from_price_table: 0,
  });
});

test('a baseline absent from the price table is 400 unknown_baseline_model', async (t) => {
  const store = await tempStore(t);
  for (const baseline of ['openai:unpriced', 'anthropic:nope', 'mid']) {
    await assert.rejects(
      querySavings(store.kysely, REGISTRY, { window: WINDOW, baseline }),
      (err) => isSvcError(err) && err.code === 'unknown_baseline_model' && err.status === 400,
      baseline,
    );
  }
});

test('a call above a long-context threshold is re-priced at the long rates of its model, and of the baseline when it has them', async (t) => {
  const caps =
    '{ supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 1000 }';
  const registry = parseModelRegistry(
    `pricing_version: test-8
models:
  - { id: 'anthropic:mid', tier: balanced, capabilities: ${caps}, prices: { input: 3, output: 15, cache_read: 0.30 } }
  - id: 'anthropic:wide'
    tier: balanced
    capabilities: ${caps}
    prices: { input: 3, output: 15, cache_read: 0.30 }
    long_context: { max_context_tokens: 1000000, beta: context-1m-2025-08-07, prices: { input: 6, output: 22.50, cache_read: 0.60 } }
`,
    'test models.yaml',
  );
  const store = await tempStore(t);
  seed(store, [
    // 150,000 + 60,000 cache reads = 210,000 > 200,000: 150,000 × 6 + 60,000 × 0.60 + 1,000 × 22.50 = 958,500 µ$
    (id) =>
      callEvent(id, {
        at: 1,
        model: 'anthropic:wide',
        cost: '0.9585',
        input: 150_000,
        output: 1_000,
        cached: 60_000,
      }),
    // 100,000: standard, 100,000 × 3 + 100 × 15 = 301,500 µ$ (the two rows' sums, 310,000, exceed the threshold)
    (id) => callEvent(id, { at: 2, model: 'anthropic:wide', cost: '0.3015', input: 100_000, output: 100 }),
  ]);
  const own = await querySavings(store.kysely, registry, { window: WINDOW, baseline: 'anthropic:wide' });
  assert.equal(own.actual_repriced_usd, 1.26);
  assert.equal(own.baseline_repriced_usd, 1.26);
  assert.equal(own.actual_stamped_usd, 1.26);
  // mid has no long-context rates: 150,000 × 3 + 60,000 × 0.30 + 1,000 × 15 + 301,500 = 784,500 µ$
  const mid = await querySavings(store.kysely, registry, { window: WINDOW, baseline: 'anthropic:mid' });
  assert.equal(mid.baseline_repriced_usd, 0.7845);
  assert.equal(mid.actual_repriced_usd, 1.26);
  assert.equal(mid.savings_usd, -0.4755);
});

test('a call billed at a paid service tier is re-priced at that tier, on its model and on the baseline', async (t) => {
  const registry = parseModelRegistry(
    `pricing_version: test-9
models:
  - { id: 'anthropic:mid', tier: balanced, capabilities: ${CAPS}, prices: { input: 3, output: 15 }, service_tiers: { priority: { input: 6, output: 30 } } }
  - { id: 'openai:big', tier: deep, capabilities: ${CAPS}, prices: { input: 10, output: 40 } }
`,
    'test models.yaml',
  );
  const store = await tempStore(t);
  seed(store, [
    // llm.call_completed names the tier it was billed at: 100,000 × 6 + 10,000 × 30 = 900,000 µ$
    (id) =>
      callEvent(id, {
        at: 1,
        model: 'anthropic:mid',
        cost: '0.9',
        input: 100_000,
        output: 10_000,
        extra: { service_tier: 'priority' },
      }),
    // the standard tier: 100,000 × 3 + 10,000 × 15 = 450,000 µ$
    (id) => callEvent(id, { at: 2, model: 'anthropic:mid', cost: '0.45', input: 100_000, output: 10_000 }),
  ]);
  const own = await querySavings(store.kysely, registry, { window: WINDOW, baseline: 'anthropic:mid' });
  assert.equal(own.actual_stamped_usd, 1.35);
  assert.equal(own.actual_repriced_usd, 1.35);
  assert.equal(own.baseline_repriced_usd, 1.35);
  assert.equal(own.savings_usd, 0);
  // a baseline without priority prices costs its standard ones: 200,000 × 10 + 20,000 × 40 = 2,800,000 µ$
  const big = await querySavings(store.kysely, registry, { window: WINDOW, baseline: 'openai:big' });
  assert.equal(big.baseline_repriced_usd, 2.8);
  assert.equal(big.actual_repriced_usd, 1.35);
  assert.equal(big.savings_usd, 1.45);
});

/**
 * A call's attempts billed together (a failed attempt that stated its usage, then the retry that answers;
 * llm/usage-sum.ts): every count is the sum, and so is the cost the upstream itself stated (OpenRouter
 * `usage.cost`, upstream_cost_usd), exact in decimals.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CanonicalUsage, emptyUsage } from '#src/canonical/response.ts';
import { addUsage } from '#src/llm/usage-sum.ts';

const usage = (fields: Partial<CanonicalUsage>): CanonicalUsage => ({ ...emptyUsage(), ...fields });

test("the upstream's stated cost of every attempt is billed, summed exactly", () => {
  const failed = usage({ input_tokens: 40, upstream_cost: '0.1' });
  const answered = usage({ input_tokens: 40, output_tokens: 7, upstream_cost: '0.2' });
  const sum = addUsage(failed, answered);
  assert.deepEqual([sum.input_tokens, sum.output_tokens], [80, 7]);
  // 0.1 + 0.2 in binary floats is 0.30000000000000004
  assert.equal(sum.upstream_cost, '0.3');
  assert.equal(addUsage(undefined, answered), answered);
});

test('an attempt that stated no cost adds none, whichever attempt it was', () => {
  assert.equal(addUsage(usage({ upstream_cost: '0.00000012' }), usage({})).upstream_cost, '0.00000012');
  assert.equal(addUsage(usage({}), usage({ upstream_cost: '0.0123' })).upstream_cost, '0.0123');
  assert.equal(addUsage(usage({}), usage({})).upstream_cost, undefined);
});

test('counts only one attempt stated are kept, and an estimate in either marks the sum', () => {
  const sum = addUsage(
    usage({
      reasoning_tokens: 5,
      cache_creation_1h_input_tokens: 3,
      web_search_requests: 1,
      estimated: true,
    }),
    usage({ reasoning_tokens: 2 }),
  );
  assert.deepEqual(
    [sum.reasoning_tokens, sum.cache_creation_1h_input_tokens, sum.web_search_requests, sum.estimated],
    [7, 3, 1, true],
  );
  assert.equal(addUsage(usage({}), usage({})).reasoning_tokens, undefined);
});

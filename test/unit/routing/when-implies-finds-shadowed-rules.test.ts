import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadModelRegistry } from '#src/models/registry.ts';
import { compilePolicyText } from '#src/routing/compile-policy.ts';
import type { Predicate } from '#src/routing/policy-schema.ts';
import { predicateImplies } from '#src/routing/when-implies.ts';

const implies = (a: Predicate, b: Predicate) => predicateImplies(a, b);

test('a narrower conjunction implies each of its parts, never the other way round', () => {
  assert.equal(implies({ has_images: true, has_tools: true }, { has_images: true }), true);
  assert.equal(implies({ has_images: true }, { has_images: true, has_tools: true }), false);
  assert.equal(implies({ all: [{ has_tools: true }, { workspace: '/w' }] }, { workspace: '/w' }), true);
  assert.equal(implies({ has_images: false }, { has_images: true }), false);
});

test('thresholds: above a higher number implies above a lower one (tokens and decimal dollars)', () => {
  assert.equal(implies({ input_tokens_above: 100_000 }, { input_tokens_above: 50_000 }), true);
  assert.equal(implies({ input_tokens_above: 50_000 }, { input_tokens_above: 100_000 }), false);
  assert.equal(implies({ cost_today_above: '10.5' }, { cost_today_above: '10.25' }), true);
  assert.equal(implies({ cost_today_above: '2' }, { cost_today_above: '10' }), false);
});

test('regexes, globs and negations are compared for equality only', () => {
  assert.equal(implies({ text_matches: 'deploy' }, { text_matches: { pattern: 'deploy' } }), true);
  assert.equal(
    implies({ text_matches: 'deploy' }, { text_matches: { pattern: 'deploy', ignore_case: true } }),
    false,
  );
  assert.equal(implies({ text_matches: 'deploy now' }, { text_matches: 'deploy' }), false);
  assert.equal(implies({ workspace: '/w/a' }, { workspace: '/w/*' }), false);
  assert.equal(implies({ not: { has_tools: true } }, { not: { has_tools: true } }), true);
});

test('disjunctions: any branch on the right suffices, every branch on the left is needed', () => {
  assert.equal(implies({ has_images: true }, { any: [{ has_tools: true }, { has_images: true }] }), true);
  assert.equal(implies({ any: [{ has_images: true }, { has_tools: true }] }, { has_images: true }), false);
  assert.equal(
    implies({ any: [{ input_tokens_above: 9 }, { input_tokens_above: 20 }] }, { input_tokens_above: 5 }),
    true,
  );
});

test('routing/check reports a rule shadowed by an earlier, wider rule', () => {
  const registry = loadModelRegistry(undefined);
  const yaml = `rules:
  - { name: big, when: { input_tokens_above: 50000 }, use: deep }
  - { name: huge-with-images, when: { input_tokens_above: 150000, has_images: true }, use: fast }
  - { name: images, when: { has_images: true }, use: balanced }
`;
  const r = compilePolicyText(yaml, 'routing.yaml', { registry });
  assert.equal(r.valid, true);
  assert.deepEqual(r.warnings, [
    'rules[1] (huge-with-images) is shadowed: rules[0] (big) matches every request it matches',
  ]);
});

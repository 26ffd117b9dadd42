import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadModelRegistry } from '#src/models/registry.ts';
import { compilePolicyText } from '#src/routing/compile-policy.ts';
import type { Predicate } from '#src/routing/policy-schema.ts';
import { firstImpliedEarlier, predicateImplies } from '#src/routing/when-implies.ts';

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

test('the first earlier rule each rule implies is what a scan of every earlier rule finds', () => {
  // a mix of every predicate kind, overlapping globs and disjunctions on both sides; a small LCG keeps it
  // the same on every run
  let seed = 7;
  const pick = <T>(items: readonly T[]): T => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return items[seed % items.length];
  };
  const atoms: Predicate[] = [
    { has_tools: true },
    { has_images: false },
    { input_tokens_above: 1000 },
    { input_tokens_above: 5000 },
    { requested_model: 'a*' },
    { requested_model: ['a*', 'b*'] },
    { requested_model: 'B*' },
    { workspace: '/w' },
    { not: { has_tools: true } },
    { not: { has_images: true } },
    { any: [{ requested_model: 'a*' }, { has_tools: true }] },
    { any: [{ has_images: true }, { text_matches: 'x' }] },
    { text_matches: 'x' },
    { text_matches: { pattern: 'x' } },
    { text_matches: { pattern: 'x', ignore_case: true } },
    { has_images: true },
    { cost_today_above: '2' },
  ];
  const whens: Array<Predicate | undefined> = Array.from({ length: 300 }, () => {
    const n = pick([0, 1, 1, 2, 2, 3]);
    if (n === 0) return pick([undefined, { has_tools: true }]);
    return { all: Array.from({ length: n }, () => pick(atoms)) };
  });
  const scanned = whens.map((when, i) =>
    when === undefined ? -1 : whens.slice(0, i).findIndex((e) => e !== undefined && implies(when, e)),
  );
  assert.deepEqual(firstImpliedEarlier(whens), scanned);
  assert.ok(scanned.filter((j) => j >= 0).length > 50); // the mix does shadow rules
});

test('a generated policy of thousands of model-name or text rules is checked for shadowing at once', () => {
  // compile-policy compared each rule with every earlier one (~2.5 µs a pair): 8,000 such rules held a
  // server's event loop for 80 s at each start, SIGHUP reload and routing check, and these 20,000 for over
  // 8 minutes; rules naming other globs are now never compared
  const whens: Predicate[] = Array.from({ length: 20_000 }, (_, i) => ({
    requested_model: `m${i}-*`,
    has_tools: true,
  }));
  whens.push({ requested_model: 'M7-*', has_tools: true, has_images: true });
  const implied = firstImpliedEarlier(whens);
  assert.equal(implied.at(-1), 7);
  assert.equal(implied.filter((j) => j >= 0).length, 1);
  const texts: Predicate[] = Array.from({ length: 20_000 }, (_, i) => ({ text_matches: `ticket-${i}\\b` }));
  texts.push({ text_matches: { pattern: 'ticket-9\\b' }, has_images: true });
  assert.deepEqual(
    firstImpliedEarlier(texts).flatMap((j, i) => (j >= 0 ? [[i, j]] : [])),
    [[20_000, 9]],
  );
});

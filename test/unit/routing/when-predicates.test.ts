import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDecimal } from '#src/lib/decimal.ts';
import { compilePolicyText } from '#src/routing/compile-policy.ts';
import type { RouteFacts } from '#src/routing/facts.ts';
import { compileWorkspaceMatcher } from '#src/routing/glob.ts';
import type { Predicate } from '#src/routing/policy-schema.ts';
import { compilePredicate, createPredicateEnv, TEXT_MATCH_LIMIT } from '#src/routing/when.ts';
import { facts, policyOf, registry, route } from './routing-fixture.ts';

function holds(pred: Predicate, f: Partial<RouteFacts> = {}, costToday = '0'): boolean {
  const errors: string[] = [];
  const fn = compilePredicate(pred, 'when', errors);
  assert.deepEqual(errors, []);
  const env = createPredicateEnv(facts(f), {
    policy: policyOf('rules: []'),
    registry,
    availableAdapters: new Set(),
    costTodayUsd: () => costToday,
  });
  return fn(env);
}

function whenErrors(when: string): string[] {
  return compilePolicyText(`rules:\n  - name: r\n    when: ${when}\n    use: fast\n`, 'routing.yaml', {
    registry,
  }).errors;
}

test('has_images and has_tools compare with the request', () => {
  assert.equal(holds({ has_images: true }, { hasImages: true }), true);
  assert.equal(holds({ has_images: true }, { hasImages: false }), false);
  assert.equal(holds({ has_images: false }, { hasImages: false }), true);
  assert.equal(holds({ has_tools: true }, { hasTools: true }), true);
  assert.equal(holds({ has_tools: true }, { hasTools: false }), false);
});

test('input_tokens_above is strictly above the estimate', () => {
  assert.equal(holds({ input_tokens_above: 1000 }, { estimatedInputTokens: 1001 }), true);
  assert.equal(holds({ input_tokens_above: 1000 }, { estimatedInputTokens: 1000 }), false);
});

test('text_matches finds an RE2 pattern anywhere in the text', () => {
  assert.equal(holds({ text_matches: '\\brefactor\\b' }, { text: 'please refactor this' }), true);
  assert.equal(holds({ text_matches: '\\brefactor\\b' }, { text: 'please Refactor this' }), false);
  assert.equal(
    holds({ text_matches: { pattern: 'refactor', ignore_case: true } }, { text: 'REFACTOR' }),
    true,
  );
  assert.equal(holds({ text_matches: 'x' }, {}), false);
});

test('text_matches calls a text function at most once and sees at most the first 32768 characters', () => {
  let calls = 0;
  const text = () => {
    calls++;
    return `${'a'.repeat(TEXT_MATCH_LIMIT)}needle`;
  };
  assert.equal(holds({ any: [{ text_matches: 'needle' }, { text_matches: 'a{3}' }] }, { text }), true);
  assert.equal(holds({ all: [{ text_matches: 'a' }, { text_matches: 'needle' }] }, { text }), false);
  assert.equal(calls, 2); // once per evaluation
});

test('text_matches stays linear on a pattern that backtracking engines explode on', () => {
  assert.equal(holds({ text_matches: '(a+)+$' }, { text: `${'a'.repeat(5000)}!` }), false);
});

test('requested_model globs match whole names, * and ? as wildcards, case ignored', () => {
  const m = (glob: string | string[], requestedModel: string | null) =>
    holds({ requested_model: glob }, { requestedModel });
  assert.equal(m('claude-opus-*', 'Claude-Opus-4-8'), true);
  assert.equal(m('claude-opus-*', 'x-claude-opus-4'), false);
  assert.equal(m('gpt-?o', 'gpt-4o'), true);
  assert.equal(m('gpt-?o', 'gpt-44o'), false);
  assert.equal(m('claude-3-*-sonnet*', 'claude-3-7-sonnet-latest'), true);
  assert.equal(m('*mini*', 'o4-mini'), true);
  assert.equal(m('a*b*c', 'abxbyc'), true);
  assert.equal(m('a*b*c', 'abxbyd'), false);
  assert.equal(m('gpt-4.1', 'gpt-401'), false); // `.` is a character, not a wildcard
  assert.equal(m(['x*', 'gpt-(5)'], 'gpt-(5)'), true);
  assert.equal(m('*', ''), true);
  assert.equal(m('*', null), false);
});

test('requested_model stays linear on a glob that backtracking engines explode on', () => {
  // as a RegExp (^.*a.*a…c$) this took 90 s for a 60-character name and holds the whole process
  const glob = `${'*a'.repeat(12)}*c`;
  assert.equal(holds({ requested_model: glob }, { requestedModel: 'a'.repeat(256) }), false);
  assert.equal(holds({ requested_model: glob }, { requestedModel: `${'a'.repeat(255)}c` }), true);
});

test('backreferences, lookaround and malformed patterns are rejected at load with the field path', () => {
  assert.match(
    whenErrors('{ text_matches: "(a)\\\\1" }')[0],
    /^rules\[0\]\.when\.text_matches: not a valid RE2/,
  );
  assert.match(whenErrors('{ text_matches: "foo(?=bar)" }')[0], /rules\[0\]\.when\.text_matches/);
  assert.match(whenErrors('{ text_matches: "(?<!x)y" }')[0], /rules\[0\]\.when\.text_matches/);
  assert.match(
    whenErrors('{ any: [ { has_tools: true }, { text_matches: "[" } ] }')[0],
    /rules\[0\]\.when\.any\[1\]\.text_matches/,
  );
});

test('workspace globs match the workspace path', () => {
  assert.equal(holds({ workspace: '/srv/**' }, { workspacePath: '/srv/a/b' }), true);
  assert.equal(holds({ workspace: '/srv/**' }, { workspacePath: '/opt/a' }), false);
  assert.equal(holds({ workspace: '/srv' }, { workspacePath: null }), false);
});

test('cost_today_above compares USD spent since UTC midnight, strictly and exactly', () => {
  assert.equal(holds({ cost_today_above: '5' }, {}, '5.000001'), true);
  assert.equal(holds({ cost_today_above: '5' }, {}, '5.00'), false);
  const errors: string[] = [];
  const fn = compilePredicate({ cost_today_above: '0.10' }, 'w', errors);
  let reads = 0;
  const env = createPredicateEnv(facts(), {
    policy: policyOf('rules: []'),
    registry,
    availableAdapters: new Set(),
    costTodayUsd: () => {
      reads++;
      return parseDecimal('0.2');
    },
  });
  assert.equal(fn(env) && fn(env), true);
  assert.equal(reads, 1);
});

test('cost_today_above reads zero when no getter is supplied', () => {
  const d = route({}, { yaml: 'rules:\n  - { name: r, when: { cost_today_above: 0 }, use: fast }\n' });
  assert.equal(d.chain[2].verdict, 'no_match');
});

test('the cost getter is not called when no rule needs it', () => {
  let reads = 0;
  route({ requestedModel: 'fast' }, { costTodayUsd: () => String(++reads) });
  assert.equal(reads, 0);
});

test('all, any and not combine; several keys in one object must all hold', () => {
  assert.equal(holds({ all: [{ has_tools: true }, { has_images: true }] }, { hasTools: true }), false);
  assert.equal(holds({ any: [{ has_tools: true }, { has_images: true }] }, { hasTools: true }), true);
  assert.equal(holds({ not: { has_tools: true } }, { hasTools: true }), false);
  assert.equal(holds({ has_tools: true, has_images: true }, { hasTools: true }), false);
  assert.equal(holds({ has_tools: true, input_tokens_above: 5 }, { hasTools: true }), true);
});

test('predicate shape errors name the field path', () => {
  assert.match(
    whenErrors('{ has_images: maybe }')[0],
    /^rules\[0\]\.when\.has_images: must be true or false/,
  );
  assert.match(whenErrors('{ colour: red }')[0], /rules\[0\]\.when\.colour/);
  assert.match(whenErrors('{}')[0], /rules\[0\]\.when: must name at least one condition/);
  assert.match(whenErrors('{ any: [] }')[0], /rules\[0\]\.when\.any: must not be empty/);
  assert.match(whenErrors('{ cost_today_above: -1 }')[0], /rules\[0\]\.when\.cost_today_above/);
  assert.match(whenErrors('{ input_tokens_above: 1.5 }')[0], /rules\[0\]\.when\.input_tokens_above/);
  assert.match(
    whenErrors('{ not: { all: [ { has_tools: 3 } ] } }')[0],
    /rules\[0\]\.when\.not\.all\[0\]\.has_tools/,
  );
});

test('workspace matcher: plain paths cover their subtree, globs match whole paths', () => {
  const dir = compileWorkspaceMatcher('/srv/app/');
  assert.equal(dir('/srv/app'), true);
  assert.equal(dir('/srv/app/x/y'), true);
  assert.equal(dir('/srv/apple'), false);
  const one = compileWorkspaceMatcher('/home/*/proj');
  assert.equal(one('/home/ann/proj'), true);
  assert.equal(one('/home/ann/x/proj'), false);
  const deep = compileWorkspaceMatcher('/repos/**/svc');
  assert.equal(deep('/repos/svc'), true);
  assert.equal(deep('/repos/a/b/svc'), true);
  const tail = compileWorkspaceMatcher('/repos/**');
  assert.equal(tail('/repos'), true);
  assert.equal(tail('/repos/a'), true);
  assert.equal(tail('/reposx'), false);
  const q = compileWorkspaceMatcher('/w/proj-?');
  assert.equal(q('/w/proj-1'), true);
  assert.equal(q('/w/proj-12'), false);
  assert.equal(compileWorkspaceMatcher('/a.b')('/axb'), false);
});

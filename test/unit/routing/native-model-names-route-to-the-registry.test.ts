/**
 * Issue 13: Claude Code and Codex send provider-native model names (bare, dated, newer than the registry).
 * The built-in policy's slot-3 rules send each to the registry model it names or its nearest sibling, so
 * `--model opus` is not served (and billed) as sonnet; a name no rule knows still falls to the global
 * default; agent turns (no requested model) never match; and the built-in policy stays valid with a
 * models.yaml that lacks some of the rules' models.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadModelRegistry } from '#src/models/registry.ts';
import { resolveRoute } from '#src/routing/chain.ts';
import { compilePolicyText } from '#src/routing/compile-policy.ts';
import {
  DEFAULT_POLICY_SOURCE,
  DEFAULT_POLICY_YAML,
  defaultPolicyYaml,
} from '#src/routing/default-policy.ts';
import { loadRoutingPolicy } from '#src/routing/load-policy.ts';
import { predicateImplies } from '#src/routing/when-implies.ts';
import { ALL_ADAPTERS, facts, policyOf, registry, silent } from './routing-fixture.ts';

/**
 * Every default or selectable model name of Claude Code (1.x–2.1.332) and Codex CLI (0.x–0.171) over the
 * last year; the 2.1.328 and 0.169 names are what those builds sent to the gateway (test/e2e/clients-*).
 */
const NATIVE: ReadonlyArray<readonly [string, string]> = [
  ['claude-opus-5-5', 'anthropic:claude-opus-5-5'], // Claude Code 2.1.332 --model opus
  ['claude-haiku-5-5', 'anthropic:claude-haiku-5-5'], // Claude Code 2.1.332 --model haiku
  ['claude-haiku-5-5-20261007', 'anthropic:claude-haiku-5-5'],
  ['claude-haiku-5', 'anthropic:claude-haiku-4-5'], // the family rule: a name of no built-in model
  ['claude-sonnet-5-5', 'anthropic:claude-sonnet-5-5'], // Claude Code 2.1.332 --model sonnet
  ['claude-opus-5-5-20260922', 'anthropic:claude-opus-5-5'],
  ['claude-sonnet-5-5-20260928', 'anthropic:claude-sonnet-5-5'],
  ['claude-fable-5-1', 'anthropic:claude-fable-5-1'], // Claude Code --model fable
  ['claude-fable-5-1-20260801', 'anthropic:claude-fable-5-1'],
  ['claude-fable-5', 'anthropic:claude-fable-5-1'],
  ['claude-opus-4-8', 'anthropic:claude-opus-5-5'],
  ['claude-opus-5', 'anthropic:claude-opus-5-5'],
  ['claude-opus-4-5-20251101', 'anthropic:claude-opus-4-5'],
  ['claude-opus-4-5', 'anthropic:claude-opus-4-5'],
  ['claude-opus-4-1-20250805', 'anthropic:claude-opus-4-1'],
  ['claude-opus-4-1', 'anthropic:claude-opus-4-1'],
  ['claude-opus-4-20250514', 'anthropic:claude-opus-4-1'],
  ['claude-opus-4-0', 'anthropic:claude-opus-4-1'],
  ['claude-sonnet-5', 'anthropic:claude-sonnet-5-5'],
  ['claude-sonnet-4-6', 'anthropic:claude-sonnet-5-5'],
  ['claude-sonnet-4-5-20250929', 'anthropic:claude-sonnet-4-5'],
  ['claude-sonnet-4-5', 'anthropic:claude-sonnet-4-5'],
  ['claude-sonnet-4-20250514', 'anthropic:claude-sonnet-4'],
  ['claude-sonnet-4-0', 'anthropic:claude-sonnet-4'],
  ['claude-3-7-sonnet-20250219', 'anthropic:claude-sonnet-5-5'],
  ['claude-3-7-sonnet-latest', 'anthropic:claude-sonnet-5-5'],
  ['claude-haiku-4-5-20251001', 'anthropic:claude-haiku-4-5'],
  ['claude-haiku-4-5', 'anthropic:claude-haiku-4-5'],
  ['claude-3-5-haiku-20241022', 'anthropic:claude-haiku-4-5'],
  ['claude-3-5-haiku-latest', 'anthropic:claude-haiku-4-5'],
  ['gpt-6.2-sol', 'openai:gpt-6.2-sol'], // Codex 0.171 default
  ['gpt-6.2-sol-2026-11-17', 'openai:gpt-6.2-sol'],
  ['gpt-6.1-sol', 'openai:gpt-5'], // Codex 0.169 default
  ['gpt-6-mini', 'openai:gpt-5-mini'],
  ['gpt-5', 'openai:gpt-5'],
  ['gpt-5-2025-08-07', 'openai:gpt-5'],
  ['gpt-5-codex', 'openai:gpt-5'],
  ['gpt-5.1', 'openai:gpt-5'],
  ['gpt-5.1-codex', 'openai:gpt-5'],
  ['gpt-5.1-codex-max', 'openai:gpt-5'],
  ['gpt-5.2-codex', 'openai:gpt-5'],
  ['gpt-5-mini', 'openai:gpt-5-mini'],
  ['gpt-5-mini-2025-08-07', 'openai:gpt-5-mini'],
  ['gpt-5.1-codex-mini', 'openai:gpt-5-mini'],
  ['codex-mini-latest', 'openai:gpt-5-mini'],
  ['o4-mini', 'openai:gpt-5-mini'],
  ['o3-mini', 'openai:gpt-5-mini'],
  ['o1-mini', 'openai:gpt-5-mini'],
  ['o4-mini-2025-04-16', 'openai:gpt-5-mini'],
  ['o3', 'openai:gpt-5'],
  ['gpt-5-nano', 'openai:gpt-5-nano'],
  ['gpt-4.1', 'openai:gpt-4.1'],
  ['gpt-4.1-2025-04-14', 'openai:gpt-4.1'],
  ['gpt-4.1-mini', 'openai:gpt-4.1-mini'],
  ['gpt-4o', 'openai:gpt-4o'],
  ['gpt-4o-2024-08-06', 'openai:gpt-4o'],
  ['gpt-4o-mini', 'openai:gpt-4o-mini'],
  ['GPT-4o', 'openai:gpt-4o'],
  // older names the README lists too: the nearest model of the same family
  ['gpt-4.1-nano', 'openai:gpt-4.1-mini'],
  ['chatgpt-4o-latest', 'openai:gpt-4o'],
  ['claude-3-opus-20240229', 'anthropic:claude-opus-4-1'],
  ['claude-3-5-sonnet-20241022', 'anthropic:claude-sonnet-5-5'],
  ['claude-3-haiku-20240307', 'anthropic:claude-haiku-4-5'],
  // Claude 3 Sonnet went to the global default (whatever SVC_GATEWAY_GLOBAL_DEFAULT names) while its opus and
  // haiku siblings had rules; bare claude-opus-4 went to opus 4.5 while claude-sonnet-4 meant Sonnet 4
  ['claude-3-sonnet-20240229', 'anthropic:claude-sonnet-5-5'],
  ['claude-opus-4', 'anthropic:claude-opus-4-1'],
];

const builtIn = () => policyOf(DEFAULT_POLICY_YAML);

test('every Claude Code and Codex model name routes by a rule to the intended registry model', () => {
  const policy = builtIn();
  for (const [name, id] of NATIVE) {
    const d = resolveRoute(facts({ requestedModel: name }), {
      policy,
      registry,
      availableAdapters: ALL_ADAPTERS,
    });
    const winner = d.chain[d.winner_index];
    assert.equal(winner?.policy, 'rule', `${name} wins slot 3`);
    assert.equal(d.chosen?.id, id, name);
    assert.equal(d.chain[0].verdict, 'no_match', `${name} is not an alias`);
  }
});

test('a name no rule knows, and an agent turn without a requested model, go on to the global default', () => {
  const policy = builtIn();
  for (const requestedModel of ['llama3.2:3b', 'my-finetune', 'claude', 'gpt', null]) {
    const d = resolveRoute(facts({ requestedModel }), { policy, registry, availableAdapters: ALL_ADAPTERS });
    if (requestedModel === 'gpt') {
      assert.equal(d.chain[0].policy, 'per_message_override', 'gpt stays an alias (slot 1)');
      continue;
    }
    assert.equal(d.chain[d.winner_index]?.policy, 'global_default', String(requestedModel));
    assert.equal(d.chosen?.id, 'anthropic:claude-sonnet-4-5');
  }
});

test('a model of the rules that the registry lacks drops its rule; the policy still loads valid', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-native-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'models.yaml');
  writeFileSync(
    file,
    [
      'pricing_version: t1',
      'models:',
      '  - id: anthropic:claude-sonnet-4-5',
      '    tier: balanced',
      '    aliases: [balanced]',
      '    can_delegate: true',
      '    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }',
      '    prices: { input: 3, output: 15 }',
      '',
    ].join('\n'),
  );
  const small = loadModelRegistry(file);
  const text = defaultPolicyYaml(small);
  assert.match(text, /native-claude-sonnet/);
  assert.doesNotMatch(text, /native-claude-opus|native-gpt/);
  const store = loadRoutingPolicy({ path: undefined, registry: small, log: silent });
  assert.equal(store.view().valid, true);
  assert.equal(store.view().source, DEFAULT_POLICY_SOURCE);
  assert.equal(defaultPolicyYaml(registry), DEFAULT_POLICY_YAML, 'the built-in registry keeps every rule');
});

test("a Claude family's names reach your models.yaml's model of that family when it lacks the rule's", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-native-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'models.yaml');
  const caps =
    'capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 8192 }';
  // older models only: no opus 4.5, sonnet 4.5 or haiku 4.5 (and no global default: the names must not need it)
  const ids = [
    'anthropic:claude-opus-4-1',
    'anthropic:claude-sonnet-4',
    'anthropic:claude-3-5-haiku-20241022',
  ];
  writeFileSync(
    file,
    [
      'pricing_version: t1',
      'models:',
      ...ids.flatMap((id) => [`  - id: ${id}`, '    tier: balanced', `    ${caps}`]),
      '',
    ].join('\n'),
  );
  const own = loadModelRegistry(file);
  const store = loadRoutingPolicy({ path: undefined, registry: own, log: silent });
  assert.equal(store.view().valid, true);
  for (const [name, id] of [
    ['claude-opus-5-5', 'anthropic:claude-opus-4-1'], // Claude Code's --model opus
    ['claude-opus-4-5-20251101', 'anthropic:claude-opus-4-1'],
    ['claude-3-opus-latest', 'anthropic:claude-opus-4-1'],
    ['claude-sonnet-4-5-20250929', 'anthropic:claude-sonnet-4'],
    ['claude-haiku-5-5', 'anthropic:claude-3-5-haiku-20241022'],
  ]) {
    const d = resolveRoute(facts({ requestedModel: name }), {
      policy: store.current(),
      registry: own,
      availableAdapters: ALL_ADAPTERS,
    });
    assert.equal(d.chain[d.winner_index]?.policy, 'rule', name);
    assert.equal(d.chosen?.id, id, name);
  }
  // with no opus 4.1 rule, Claude 3 Opus names are the family rule's (listed there only then)
  const opus3 = join(dir, 'opus3.yaml');
  writeFileSync(
    opus3,
    [
      'pricing_version: t1',
      'models:',
      '  - id: anthropic:claude-3-opus-20240229',
      '    tier: balanced',
      `    ${caps}`,
      '',
    ].join('\n'),
  );
  const old = loadModelRegistry(opus3);
  const d = resolveRoute(facts({ requestedModel: 'claude-3-opus-latest' }), {
    policy: loadRoutingPolicy({ path: undefined, registry: old, log: silent }).current(),
    registry: old,
    availableAdapters: ALL_ADAPTERS,
  });
  assert.deepEqual([d.rule, d.chosen?.id], ['native-claude-opus', 'anthropic:claude-3-opus-20240229']);
});

test('the built-in rules shadow none of each other; requested_model globs imply only a superset', () => {
  const check = compilePolicyText(DEFAULT_POLICY_YAML, DEFAULT_POLICY_SOURCE, { registry });
  assert.deepEqual([check.valid, check.errors, check.warnings], [true, [], []]);
  assert.ok((check.policy?.rules.length ?? 0) > 10);
  // each name glob is listed by one rule: a later rule's copy could never win (first match wins)
  const globs = [...DEFAULT_POLICY_YAML.matchAll(/requested_model: \[([^\]]*)\]/g)].flatMap((m) =>
    m[1].split(', '),
  );
  assert.deepEqual(
    globs.filter((g, i) => globs.indexOf(g) !== i),
    [],
  );
  assert.equal(
    predicateImplies({ requested_model: 'claude-opus-*' }, { requested_model: ['CLAUDE-OPUS-*', 'x'] }),
    true,
  );
  assert.equal(predicateImplies({ requested_model: ['a*', 'b*'] }, { requested_model: 'a*' }), false);
  assert.equal(predicateImplies({ requested_model: 'a*' }, { has_tools: true }), false);
});

test('a bare name of a model your models.yaml has goes to that model, not to a sibling a rule names', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-native-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'models.yaml');
  const caps =
    'capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 8192 }';
  const ids = [
    'anthropic:claude-sonnet-4-5',
    'anthropic:claude-haiku-4-5',
    'anthropic:claude-3-5-haiku-20241022',
    'openai:gpt-5',
    'openai:gpt-4.1-mini',
    'openai:gpt-4.1-nano',
    'openai:o3',
    'openai:gpt-oss-120b', // an OpenAI-compatible local server's model
  ];
  writeFileSync(
    file,
    [
      'pricing_version: t1',
      'models:',
      ...ids.flatMap((id) => [`  - id: ${id}`, '    tier: balanced', `    ${caps}`]),
      '',
    ].join('\n'),
  );
  const own = loadModelRegistry(file);
  const store = loadRoutingPolicy({ path: undefined, registry: own, log: silent });
  assert.deepEqual([store.view().valid, store.view().warnings], [true, []]);
  const route = (requestedModel: string) =>
    resolveRoute(facts({ requestedModel }), {
      policy: store.current(),
      registry: own,
      availableAdapters: ALL_ADAPTERS,
    });
  for (const [name, id] of [
    ['gpt-4.1-nano', 'openai:gpt-4.1-nano'],
    ['GPT-4.1-nano', 'openai:gpt-4.1-nano'],
    ['o3', 'openai:o3'],
    ['gpt-oss-120b', 'openai:gpt-oss-120b'],
    ['claude-3-5-haiku-20241022', 'anthropic:claude-3-5-haiku-20241022'],
    // the other names of those families still go to the nearest sibling
    ['gpt-4.1-nano-2025-04-14', 'openai:gpt-4.1-mini'],
    ['o3-pro', 'openai:gpt-5'],
    ['claude-3-5-haiku-latest', 'anthropic:claude-haiku-4-5'],
  ]) {
    const d = route(name);
    assert.equal(d.chain[d.winner_index]?.policy, 'rule', name);
    assert.equal(d.chosen?.id, id, name);
  }
  assert.equal(defaultPolicyYaml(registry), DEFAULT_POLICY_YAML, 'the built-in registry needs no such rule');
});

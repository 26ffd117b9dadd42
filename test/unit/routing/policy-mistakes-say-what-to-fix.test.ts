/**
 * An operator's typical mistakes in routing.yaml (and models.yaml, which shares the reader) are each
 * reported as `<field path>: <what to do>`, never as valibot's own wording ("Invalid key: Expected never
 * but received …"): a misspelt key names the keys allowed there, a missing key says it is required, and
 * a file that is a list or a scalar says it must be a mapping.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSvcError } from '#src/lib/errors.ts';
import { loadModelRegistry, parseModelRegistry } from '#src/models/registry.ts';
import { compilePolicyText } from '#src/routing/compile-policy.ts';
import { registry } from './routing-fixture.ts';

const errorsOf = (yaml: string) => compilePolicyText(yaml, 'routing.yaml', { registry }).errors;

test('a misspelt key names the keys allowed at that place', () => {
  assert.deepEqual(errorsOf('global_defualt: fast\n'), [
    'global_defualt: is not a known key; use one of global_default, tiers, rules, workspaces, pattern',
  ]);
  assert.deepEqual(errorsOf('tiers: { premium: deep }\n'), [
    'tiers.premium: is not a known key; use one of fast, balanced, deep',
  ]);
  assert.deepEqual(errorsOf('pattern: { enabled: true, lookback: 3 }\n'), [
    'pattern.lookback: is not a known key; use one of enabled, fingerprint, min_samples, min_success_rate, lookback_days, candidates',
  ]);
  assert.deepEqual(errorsOf('rules:\n  - { name: x, when: { has_image: true }, use: fast }\n'), [
    'rules[0].when.has_image: is not a known key; use one of has_images, has_tools, input_tokens_above, text_matches, workspace, cost_today_above, requested_model, all, any, not',
  ]);
  assert.deepEqual(errorsOf('rules:\n  - { name: x, when: { not: { has_tool: true } }, use: fast }\n'), [
    'rules[0].when.not.has_tool: is not a known key; use one of has_images, has_tools, input_tokens_above, text_matches, workspace, cost_today_above, requested_model, all, any, not',
  ]);
});

test('one check names every mistake: what the schema refuses and what the rest then finds', () => {
  const yaml = `global_default: nope
rules:
  - { name: a, when: { has_image: true }, use: fats }
  - { name: b, when: { text_matches: '(?=x)' }, use: fast }
workspaces:
  - { match: relative/path, use: deep }
  - { match: /srv, use: depe }
`;
  assert.deepEqual(errorsOf(yaml), [
    'rules[0].when.has_image: is not a known key; use one of has_images, has_tools, input_tokens_above, text_matches, workspace, cost_today_above, requested_model, all, any, not',
    'workspaces[0].match: must be an absolute path or a glob such as /srv/app or /home/*/scratch/** (~ and relative paths are not expanded)',
    'rules[0].use: unknown model "fats" (not a canonical id or alias in built-in models.yaml); did you mean fast?',
    'rules[1].when.text_matches: not a valid RE2 regular expression: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
    'workspaces[1].use: unknown model "depe" (not a canonical id or alias in built-in models.yaml); did you mean deep?',
    'global_default: unknown model "nope" (not a canonical id or alias in built-in models.yaml)',
  ]);
});

test('a missing key is "is required" under its own name', () => {
  assert.deepEqual(errorsOf('workspaces:\n  - /srv/infra: deep\n'), [
    'workspaces[0].match: is required',
    'workspaces[0].use: is required',
    'workspaces[0]./srv/infra: is not a known key; use one of match, use',
  ]);
  assert.deepEqual(errorsOf('rules:\n  - { when: { has_tools: true } }\n'), [
    'rules[0].name: is required',
    'rules[0].use: is required',
  ]);
});

test('a file that is a list or a scalar must be a mapping', () => {
  const message =
    'the file must be a mapping with the keys global_default, tiers, rules, workspaces, pattern';
  assert.deepEqual(errorsOf('- name: x\n  use: fast\n'), [message]);
  assert.deepEqual(errorsOf('fast\n'), [message]);
  // an empty list is no mapping either (valibot read it as one with no keys: `[]` was a valid, empty policy)
  assert.deepEqual(errorsOf('[]\n'), [message]);
  assert.deepEqual(errorsOf('tiers: []\npattern: []\n'), [
    'tiers: must be a mapping with the keys fast, balanced, deep, not a list',
    'pattern: must be a mapping with the keys enabled, fingerprint, min_samples, min_success_rate, lookback_days, candidates, not a list',
  ]);
  assert.deepEqual(errorsOf('rules:\n  - { name: x, when: { not: [] }, use: fast }\n'), [
    'rules[0].when.not: must be a mapping with the keys has_images, has_tools, input_tokens_above, text_matches, workspace, cost_today_above, requested_model, all, any, not, not a list',
  ]);
  // an empty list where a list belongs stays valid, as does `{}`; a document of no policy (YAML null, an empty
  // file: what a reload meets while the file is rewritten) is refused, so the rules in force stay
  assert.deepEqual(errorsOf('rules: []\nworkspaces: []\npattern: { candidates: [] }\n'), []);
  assert.deepEqual(errorsOf('{}\n'), []);
  for (const none of ['~\n', '', '# later\n'])
    assert.deepEqual(errorsOf(none), [
      'holds no policy (an empty file, only comments, or ~); write {} for a policy with no rules of its own',
    ]);
});

test('models.yaml mistakes read the same way', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-models-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'models.yaml');
  writeFileSync(
    file,
    [
      'pricing_version: t1',
      'models:',
      '  - id: anthropic:claude-sonnet-4-5',
      '    tier: balanced',
      '    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }',
      '    prise: { input: 3, output: 15 }',
      '',
    ].join('\n'),
  );
  assert.throws(
    () => loadModelRegistry(file),
    (err) =>
      isSvcError(err) &&
      /models\[0\]\.prise: is not a known key; use one of id, adapter, tier, aliases, can_delegate, capabilities, prices/.test(
        err.message,
      ) &&
      !err.message.includes('Expected never'),
  );
});

test('a workspace written as ~/… or a relative path, which could never match, is refused', () => {
  const hint =
    'must be an absolute path or a glob such as /srv/app or /home/*/scratch/** (~ and relative paths are not expanded)';
  assert.deepEqual(
    errorsOf(
      'workspaces:\n  - { match: ~/projects, use: fast }\n  - { match: "projects/**", use: fast }\n  - { match: "**/tmp/**", use: fast }\nrules:\n  - { name: a, when: { workspace: "~/x" }, use: fast }\n',
    ),
    [`rules[0].when.workspace: ${hint}`, `workspaces[0].match: ${hint}`, `workspaces[1].match: ${hint}`],
  );
});

test('an unknown model suggests the id it most likely means', () => {
  const unknown = (ref: string) =>
    `unknown model "${ref}" (not a canonical id or alias in built-in models.yaml)`;
  assert.deepEqual(errorsOf('global_default: gpt-5\n'), [
    `global_default: ${unknown('gpt-5')}; did you mean openai:gpt-5?`,
  ]);
  assert.deepEqual(errorsOf('rules:\n  - { name: a, use: anthropic:claude-sonet-4-5 }\n'), [
    `rules[0].use: ${unknown('anthropic:claude-sonet-4-5')}; did you mean anthropic:claude-sonnet-4-5?`,
  ]);
  assert.deepEqual(errorsOf('tiers: { deep: Opus }\n'), [
    `tiers.deep: ${unknown('Opus')}; did you mean opus?`,
  ]);
  assert.deepEqual(errorsOf('workspaces:\n  - { match: /srv, use: something-else-entirely }\n'), [
    `workspaces[0].use: ${unknown('something-else-entirely')}`,
  ]);
});

test('a section left empty (its entries commented out) reads as absent', () => {
  const check = compilePolicyText(
    'global_default: fast\nrules:\n#  - { name: a, use: deep }\nworkspaces:\ntiers:\npattern:\n',
    'routing.yaml',
    { registry },
  );
  assert.deepEqual(check.errors, []);
  assert.equal(check.valid, true);
  assert.deepEqual(check.policy?.rules, []);
  assert.equal(check.policy?.tiers.deep, 'anthropic:claude-opus-5-5');
  assert.equal(check.policy?.pattern.enabled, false);
});

test('a list where one mapping belongs is named once, at its own field', () => {
  assert.deepEqual(
    errorsOf(
      'rules:\n  - name: a\n    when:\n      not:\n        - has_tools: true\n        - has_images: true\n    use: fast\n',
    ),
    [
      'rules[0].when.not: must be a mapping with the keys has_images, has_tools, input_tokens_above, text_matches, workspace, cost_today_above, requested_model, all, any, not, not a list',
    ],
  );
});

test('SVC_GATEWAY_GLOBAL_DEFAULT naming no model is warned with the id it most likely means', () => {
  const check = compilePolicyText('rules: []\n', 'routing.yaml', {
    registry,
    envGlobalDefault: 'claude-sonnet-4-5',
  });
  assert.equal(check.valid, true);
  assert.deepEqual(check.warnings, [
    'global_default: SVC_GATEWAY_GLOBAL_DEFAULT=claude-sonnet-4-5 is not in built-in models.yaml; slot 7 will be rejected with model_not_configured; did you mean anthropic:claude-sonnet-4-5?',
  ]);
});

test('a models.yaml without the built-in global default says the default is the built-in one', () => {
  const custom = parseModelRegistry(
    'pricing_version: t\nmodels:\n  - id: openai:gpt-5-mini\n    tier: fast\n    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 400000, max_output_tokens: 128000 }\n',
    'models.yaml',
  );
  const check = compilePolicyText('rules: []\n', 'routing.yaml', { registry: custom });
  assert.deepEqual(check.warnings, [
    'global_default: the built-in default anthropic:claude-sonnet-4-5 is not in models.yaml; slot 7 will be rejected with model_not_configured',
  ]);
});

test('a policy that YAML aliases blow up (a few hundred bytes, billions of predicates) is refused at once', () => {
  let anchors = '        - &p0 { has_tools: true }\n';
  for (let i = 1; i <= 10; i++)
    anchors += `        - &p${i} { any: [${Array(9)
      .fill(`*p${i - 1}`)
      .join(', ')}] }\n`;
  const yaml = `rules:\n  - name: bomb\n    when:\n      all:\n${anchors}    use: fast\n`;
  assert.ok(yaml.length < 1000);
  // without the bound this walked 9^10 predicates (and the server's event loop stood still)
  assert.deepEqual(errorsOf(yaml), [
    'not valid: more than 100000 values once its aliases (*name) are expanded; write the entries out instead',
  ]);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseModelRegistry } from '#src/models/registry.ts';
import { ROUTING_CHAIN, resolveRoute } from '#src/routing/chain.ts';
import { compilePolicyText } from '#src/routing/compile-policy.ts';
import { DEFAULT_POLICY_YAML } from '#src/routing/default-policy.ts';
import { POLICY_NAMES } from '#src/routing/facts.ts';
import type { PatternMatch } from '#src/routing/pattern/table.ts';
import { ALL_ADAPTERS, facts, policyOf, registry, route } from './routing-fixture.ts';

const SONNET = 'anthropic:claude-sonnet-4-5';

test('the chain runs the seven policies in spec order', () => {
  assert.deepEqual(
    ROUTING_CHAIN.map((s) => s.name),
    [...POLICY_NAMES],
  );
  assert.deepEqual(POLICY_NAMES, [
    'per_message_override',
    'manual_sticky',
    'rule',
    'pattern',
    'delegate_request',
    'workspace_default',
    'global_default',
  ]);
});

test('a canonical id wins slot 1 and short-circuits the rest of the chain', () => {
  const d = route({ requestedModel: 'openai:gpt-5-mini' });
  assert.deepEqual(d.chain, [
    { policy: 'per_message_override', model: 'openai:gpt-5-mini', verdict: 'accepted' },
  ]);
  assert.equal(d.winner_index, 0);
  assert.equal(d.chosen?.id, 'openai:gpt-5-mini');
  assert.equal(d.error, null);
  assert.equal(typeof d.elapsed_ms, 'number');
});

test('aliases win slot 1: fast, balanced, deep, mini and family names', () => {
  for (const [alias, id] of [
    ['fast', 'anthropic:claude-haiku-4-5'],
    ['balanced', SONNET],
    ['deep', 'anthropic:claude-opus-5-5'],
    ['mini', 'openai:gpt-5-mini'],
    ['haiku', 'anthropic:claude-haiku-4-5'],
    ['opus', 'anthropic:claude-opus-5-5'],
    ['sonnet', 'anthropic:claude-sonnet-5-5'],
    ['fable', 'anthropic:claude-fable-5-1'],
    ['gpt', 'openai:gpt-5'],
  ]) {
    const d = route({ requestedModel: alias });
    assert.equal(d.chain[0].verdict, 'accepted', alias);
    assert.equal(d.chosen?.id, id, alias);
  }
});

test('slot 1 takes an alias or canonical id in any letter case, never the global default for it', () => {
  for (const [name, id] of [
    ['Haiku', 'anthropic:claude-haiku-4-5'],
    ['FAST', 'anthropic:claude-haiku-4-5'],
    ['Anthropic:claude-haiku-4-5', 'anthropic:claude-haiku-4-5'],
    ['anthropic:Claude-Haiku-4-5', 'anthropic:claude-haiku-4-5'],
    ['OpenAI:GPT-5-mini', 'openai:gpt-5-mini'],
  ]) {
    const d = route({ requestedModel: name });
    assert.deepEqual(d.chain, [{ policy: 'per_message_override', model: id, verdict: 'accepted' }], name);
  }
});

test('tier names follow the policy tiers when the policy sets them', () => {
  const d = route({ requestedModel: 'fast' }, { yaml: 'tiers: { fast: openai:gpt-5-nano }' });
  assert.equal(d.chosen?.id, 'openai:gpt-5-nano');
});

test("a models.yaml without the tier aliases still has its tiers: the first model of each model's `tier`", () => {
  // a local server and one Claude model, tiers declared on the models only (no fast/balanced/deep alias)
  const local = parseModelRegistry(
    `pricing_version: t
models:
  - id: openai:llama3.2
    tier: fast
    capabilities: { supports_images: false, supports_tools: false, max_context_tokens: 8000, max_output_tokens: 2000 }
  - id: openai:qwen3
    tier: fast
    capabilities: { supports_images: false, supports_tools: true, max_context_tokens: 32000, max_output_tokens: 4000 }
  - id: anthropic:claude-sonnet-4-5
    tier: balanced
    aliases: [sonnet]
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }
`,
    'models.yaml',
  );
  const yaml =
    'global_default: balanced\nrules:\n  - { name: small, when: { input_tokens_above: 100000 }, use: balanced }\n';
  const check = compilePolicyText(yaml, 'routing.yaml', { registry: local });
  assert.deepEqual(check.errors, [], 'balanced is a tier name of this models.yaml');
  const policy = check.policy!;
  assert.deepEqual(policy.tiers, {
    fast: 'openai:llama3.2',
    balanced: 'anthropic:claude-sonnet-4-5',
    deep: null,
  });
  assert.equal(policy.globalDefault, 'anthropic:claude-sonnet-4-5');
  const d = resolveRoute(facts({ requestedModel: 'fast' }), {
    policy,
    registry: local,
    availableAdapters: ALL_ADAPTERS,
  });
  assert.deepEqual(d.chain[0], {
    policy: 'per_message_override',
    model: 'openai:llama3.2',
    verdict: 'accepted',
  });
  // the policy's tiers still win, and a tier alias still means its owner
  assert.equal(
    compilePolicyText('tiers: { fast: openai:qwen3 }', 'r', { registry: local }).policy?.tiers.fast,
    'openai:qwen3',
  );
  assert.equal(policyOf('rules: []').tiers.fast, 'anthropic:claude-haiku-4-5');
});

test('a bare provider model name does not match slot 1 and falls to the global default', () => {
  const d = route({ requestedModel: 'claude-sonnet-4-5' });
  assert.equal(d.chain[0].verdict, 'no_match');
  assert.equal(d.chain[0].model, null);
  assert.equal(d.chain.at(-1)?.policy, 'global_default');
  assert.equal(d.winner_index, 6);
  assert.equal(d.chosen?.id, SONNET);
});

test('a colon name whose prefix is no adapter counts as a bare name', () => {
  const d = route({ requestedModel: 'ft:gpt-4o:acme' });
  assert.equal(d.chain[0].verdict, 'no_match');
  assert.equal(d.chosen?.id, SONNET);
});

test('an unknown canonical id is rejected as model_not_configured and routing continues', () => {
  const d = route({ requestedModel: 'openai:gpt-9' });
  assert.deepEqual(d.chain[0], {
    policy: 'per_message_override',
    model: 'openai:gpt-9',
    verdict: 'rejected',
    validation_failure: 'model_not_configured',
  });
  assert.equal(d.chosen?.id, SONNET);
});

test('slot 2 manual_sticky uses the pinned model and answers no_match without one', () => {
  assert.equal(route({ manualStickyModel: 'haiku' }).chain[1].verdict, 'accepted');
  assert.equal(route({ manualStickyModel: 'haiku' }).chosen?.id, 'anthropic:claude-haiku-4-5');
  assert.equal(route({}).chain[1].verdict, 'no_match');
  const hooked = route({}, { hooks: { manualSticky: () => 'openai:gpt-5' } });
  assert.equal(hooked.chosen?.id, 'openai:gpt-5');
  const unknown = route({ manualStickyModel: 'nonsense' });
  assert.equal(unknown.chain[1].validation_failure, 'model_not_configured');
});

test('slot 3 picks the first matching rule', () => {
  const yaml = `rules:
  - { name: imgs, when: { has_images: true }, use: openai:gpt-4.1 }
  - { name: tools, when: { has_tools: true }, use: fast }
`;
  const d = route({ hasTools: true }, { yaml });
  // the entry is DECISIONS §4's {policy, model, verdict, validation_failure?}, nothing more; the decision names
  // the rule that matched beside it (README: a native-name win reads `native-…`)
  assert.deepEqual(d.chain[2], { policy: 'rule', model: 'anthropic:claude-haiku-4-5', verdict: 'accepted' });
  assert.equal(d.rule, 'tools');
  assert.equal(d.winner_index, 2);
  const none = route({}, { yaml });
  assert.deepEqual(none.chain[2], { policy: 'rule', model: null, verdict: 'no_match' });
  assert.equal(none.rule, null);
  const llama = 'rules:\n  - { name: cheap, use: openrouter:meta-llama/llama-3.3-70b-instruct }\n';
  const rejected = route({ hasImages: true }, { yaml: llama });
  assert.deepEqual(rejected.chain[2], {
    policy: 'rule',
    model: 'openrouter:meta-llama/llama-3.3-70b-instruct',
    verdict: 'rejected',
    validation_failure: 'missing_capability',
  });
  assert.equal(rejected.rule, 'cheap', 'the rule whose proposal was rejected');
});

const learned = (model: string): PatternMatch => ({
  model,
  fingerprint: 's1:0000000000000000',
  fingerprint_version: 'structural',
  samples: 40,
  success_rate: 1,
  median_cost_usd: '0.001000',
});

test('slot 4 pattern answers no_match unless enabled and hooked', () => {
  const hooks = { pattern: () => learned('fast') };
  assert.equal(route({}, { hooks }).chain[3].verdict, 'no_match');
  assert.equal(route({}, { yaml: 'pattern: { enabled: true }' }).chain[3].verdict, 'no_match');
  const d = route({}, { yaml: 'pattern: { enabled: true }', hooks });
  assert.deepEqual(d.chain[3], {
    policy: 'pattern',
    model: 'anthropic:claude-haiku-4-5',
    verdict: 'accepted',
  });
  assert.deepEqual(d.pattern, learned('fast'));
  assert.equal(route({}, { hooks }).pattern, null);
});

test('slot 4 never overrides a canonical id or alias the client named, even one slot 1 rejected', () => {
  const hooks = { pattern: () => learned('fast') };
  const yaml = 'pattern: { enabled: true }';
  const named = route(
    { requestedModel: 'openai:gpt-5' },
    { yaml, hooks, availableAdapters: new Set(['anthropic']) },
  );
  assert.equal(named.chain[0].validation_failure, 'provider_unavailable');
  assert.equal(named.chain[3].verdict, 'no_match');
  assert.equal(route({ requestedModel: 'deep' }, { yaml, hooks }).chain.length, 1);
  for (const bare of ['auto', 'gpt-4o', 'claude-sonnet-4-5']) {
    const d = route({ requestedModel: bare }, { yaml, hooks });
    assert.equal(d.chain[3].verdict, 'accepted', bare);
    assert.equal(d.chosen?.id, 'anthropic:claude-haiku-4-5', bare);
  }
});

test('a learned model that fails validation is rejected like any proposal and the chain goes on', () => {
  const d = route(
    { hasImages: true },
    {
      yaml: 'pattern: { enabled: true }',
      hooks: { pattern: () => learned('openrouter:meta-llama/llama-3.3-70b-instruct') },
    },
  );
  assert.equal(d.chain[3].verdict, 'rejected');
  assert.equal(d.chain[3].validation_failure, 'missing_capability');
  assert.equal(d.pattern, null);
  assert.equal(d.chosen?.id, SONNET);
});

test('every decision carries the request fingerprint, whichever slot won', () => {
  const d = route({ requestedModel: 'fast', text: 'fix the failing test', messageCount: 3 });
  assert.match(d.fingerprint.structural, /^s1:[0-9a-f]{16}$/);
  assert.equal(d.fingerprint.sketch.length, 16);
  assert.equal(d.fingerprint.messages, 3);
});

test('slot 5 delegate_request uses the delegated model and answers no_match for gateway traffic', () => {
  assert.equal(route({}).chain[4].verdict, 'no_match');
  assert.equal(route({ delegateModel: 'mini' }).chosen?.id, 'openai:gpt-5-mini');
  assert.equal(
    route({}, { hooks: { delegateRequest: () => 'deep' } }).chain[4].model,
    'anthropic:claude-opus-5-5',
  );
});

test('a worker turn never runs on a model that cannot take delegated work, whichever slot proposes it', () => {
  // openai:gpt-4o has can_delegate: false; the rule matches every agent turn (they all offer tools)
  const yaml = 'rules:\n  - { name: agents, when: { has_tools: true }, use: openai:gpt-4o }\n';
  const worker = route({ hasTools: true, delegateModel: 'fast' }, { yaml });
  assert.deepEqual(worker.chain[2], {
    policy: 'rule',
    model: 'openai:gpt-4o',
    verdict: 'rejected',
    validation_failure: 'missing_capability',
  });
  assert.equal(worker.chain[worker.winner_index].policy, 'delegate_request');
  assert.equal(worker.chosen?.id, 'anthropic:claude-haiku-4-5');
  assert.equal(route({ hasTools: true }, { yaml }).chosen?.id, 'openai:gpt-4o', 'a planner turn may use it');
});

test("slot 6 uses the first workspaces entry matching the key's workspace_path", () => {
  const yaml = `workspaces:
  - { match: /srv/infra, use: deep }
  - { match: "/home/*/scratch/**", use: mini }
`;
  assert.equal(
    route({ workspacePath: '/srv/infra/modules' }, { yaml }).chosen?.id,
    'anthropic:claude-opus-5-5',
  );
  assert.equal(route({ workspacePath: '/home/ann/scratch/x' }, { yaml }).chain[5].model, 'openai:gpt-5-mini');
  assert.equal(route({ workspacePath: '/srv/infrastructure' }, { yaml }).chain[5].verdict, 'no_match');
  assert.equal(route({ workspacePath: null }, { yaml }).chain[5].verdict, 'no_match');
});

test('slot 7 global default: policy over SVC_GATEWAY_GLOBAL_DEFAULT over the built-in id', () => {
  const ctx = (yaml: string, env?: string) => ({
    policy: policyOf(yaml, env),
    registry,
    availableAdapters: ALL_ADAPTERS,
  });
  assert.equal(resolveRoute(facts(), ctx('rules: []')).chosen?.id, SONNET);
  assert.equal(resolveRoute(facts(), ctx('rules: []', 'openai:gpt-5')).chosen?.id, 'openai:gpt-5');
  assert.equal(
    resolveRoute(facts(), ctx('global_default: haiku', 'openai:gpt-5')).chosen?.id,
    'anthropic:claude-haiku-4-5',
  );
});

test('provider_unavailable: a model whose adapter has no key is rejected', () => {
  const d = route({ requestedModel: 'openai:gpt-5' }, { availableAdapters: new Set(['anthropic']) });
  assert.equal(d.chain[0].validation_failure, 'provider_unavailable');
  assert.equal(d.chosen?.id, SONNET);
});

test('missing_capability: images or tools the model lacks', () => {
  const llama = 'openrouter:meta-llama/llama-3.3-70b-instruct';
  assert.equal(
    route({ requestedModel: llama, hasImages: true }).chain[0].validation_failure,
    'missing_capability',
  );
  assert.equal(route({ requestedModel: llama, hasTools: true }).chain[0].verdict, 'accepted');
  // the 503's message says which capability (the chain entry keeps its four fields)
  const d = route({ requestedModel: 'auto', hasImages: true }, { yaml: `global_default: ${llama}` });
  assert.deepEqual(d.chain[6], {
    policy: 'global_default',
    model: llama,
    verdict: 'rejected',
    validation_failure: 'missing_capability',
  });
  assert.equal(d.error?.message, `no candidate model is usable: ${llama} (missing_capability: images)`);
});

test('context_too_small: input estimate plus max_tokens above the context window', () => {
  const d = route({
    requestedModel: 'openai:gpt-4o',
    estimatedInputTokens: 120_000,
    maxOutputTokens: 10_000,
  });
  assert.equal(d.chain[0].validation_failure, 'context_too_small');
  assert.equal(d.chosen?.id, SONNET);
});

test("a max_tokens above the model's output limit counts as that limit: the named model is kept, not swapped", () => {
  // gpt-4o: 128k context, 16k output; the call asks no more than 16k of it (translated calls are clamped)
  const d = route({ requestedModel: 'openai:gpt-4o', estimatedInputTokens: 1_000, maxOutputTokens: 150_000 });
  assert.equal(d.chain[0].verdict, 'accepted');
  assert.equal(d.chosen?.id, 'openai:gpt-4o');
});

test('a slot-1 model outside allowed_models is a 403 with no fallback', () => {
  const d = route({ requestedModel: 'deep' }, { allowedModels: new Set([SONNET]) });
  assert.equal(d.chosen, null);
  assert.equal(d.winner_index, -1);
  assert.equal(d.chain.length, 1);
  assert.equal(d.chain[0].validation_failure, 'model_not_allowed');
  assert.equal(d.error?.code, 'model_not_allowed');
  assert.equal(d.error?.status, 403);
});

test('a rule that maps the requested name is the model the request named: outside allowed_models it is a 403, never the default', () => {
  // the built-in native-name rule sends claude-haiku-4-5 to anthropic:claude-haiku-4-5
  const native = route(
    { requestedModel: 'claude-haiku-4-5' },
    { yaml: DEFAULT_POLICY_YAML, allowedModels: new Set([SONNET]) },
  );
  assert.equal(native.chosen, null);
  assert.deepEqual(native.chain.at(-1), {
    policy: 'rule',
    model: 'anthropic:claude-haiku-4-5',
    verdict: 'rejected',
    validation_failure: 'model_not_allowed',
  });
  assert.equal(native.error?.code, 'model_not_allowed');
  // a routing.yaml rule on requested_model alone does the same; one with another condition is a preference
  const yaml = [
    'rules:',
    '  - { name: by-name, when: { requested_model: "my-*" }, use: deep }',
    '  - { name: tools, when: { has_tools: true }, use: deep }',
  ].join('\n');
  assert.equal(
    route({ requestedModel: 'my-model' }, { yaml, allowedModels: new Set([SONNET]) }).error?.status,
    403,
  );
  assert.equal(route({ hasTools: true }, { yaml, allowedModels: new Set([SONNET]) }).chosen?.id, SONNET);
});

test('other slots skip a disallowed candidate and continue', () => {
  const yaml = 'rules:\n  - { name: all, use: deep }\n';
  const d = route({}, { yaml, allowedModels: new Set([SONNET]) });
  assert.equal(d.chain[2].validation_failure, 'model_not_allowed');
  assert.equal(d.chosen?.id, SONNET);
});

test('nothing accepted after a model_not_allowed rejection is a 403', () => {
  const d = route({ requestedModel: 'gpt-4o' }, { allowedModels: new Set(['openai:gpt-5-mini']) });
  assert.equal(d.error?.code, 'model_not_allowed');
  assert.equal(d.chain.at(-1)?.validation_failure, 'model_not_allowed');
});

test('nothing accepted otherwise is a 503 routing_failed listing what was tried', () => {
  const d = route({ requestedModel: 'openai:gpt-5' }, { availableAdapters: new Set() });
  assert.equal(d.chosen, null);
  assert.equal(d.winner_index, -1);
  assert.equal(d.chain.length, 7);
  assert.equal(d.error?.code, 'routing_failed');
  assert.equal(d.error?.status, 503);
  assert.deepEqual(d.error?.details?.tried, [
    { policy: 'per_message_override', model: 'openai:gpt-5', reason: 'provider_unavailable' },
    { policy: 'global_default', model: SONNET, reason: 'provider_unavailable' },
  ]);
  assert.equal(
    d.error?.message,
    `no candidate model is usable: openai:gpt-5 (provider_unavailable), ${SONNET} (provider_unavailable)`,
  );
  // the model a request names is often the global default too: tried twice, named once in the message
  const same = route({ requestedModel: 'balanced' }, { availableAdapters: new Set() });
  assert.equal((same.error?.details?.tried as unknown[] | undefined)?.length, 2);
  assert.equal(same.error?.message, `no candidate model is usable: ${SONNET} (provider_unavailable)`);
});

test('a global default missing from the registry is rejected as model_not_configured', () => {
  const d = resolveRoute(facts(), {
    policy: policyOf('rules: []', 'openai:gpt-nope'),
    registry,
    availableAdapters: new Set(['openai']),
  });
  assert.equal(d.chain[6].validation_failure, 'model_not_configured');
  assert.equal(d.error?.code, 'routing_failed');
});

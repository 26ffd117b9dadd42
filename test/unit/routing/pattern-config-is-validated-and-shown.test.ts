import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compilePolicyText } from '#src/routing/compile-policy.ts';
import { loadRoutingPolicy } from '#src/routing/load-policy.ts';
import { registry, silent } from './routing-fixture.ts';

const compile = (yaml: string) => compilePolicyText(yaml, 'routing.yaml', { registry });

test('an absent pattern block is slot 4 off with the documented defaults', () => {
  const p = compile('rules: []').policy!;
  assert.deepEqual(p.pattern, {
    enabled: false,
    fingerprint: 'structural',
    minSamples: 20,
    minSuccessRate: 0.95,
    lookbackDays: 14,
    candidates: null,
    registered: new Set(registry.list().map((m) => m.id)),
  });
  assert.deepEqual(p.file.pattern, {
    enabled: false,
    fingerprint: 'structural',
    min_samples: 20,
    min_success_rate: 0.95,
    lookback_days: 14,
    candidates: [],
  });
});

test('every pattern key is read; candidates may name models, aliases or tiers', () => {
  const yaml = `tiers: { fast: openai:gpt-5-nano }
pattern:
  enabled: true
  fingerprint: hybrid
  min_samples: 40
  min_success_rate: 0.9
  lookback_days: 7
  candidates: [fast, haiku, openai:gpt-5-mini]
`;
  const r = compile(yaml);
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings, []);
  assert.deepEqual(r.policy!.pattern, {
    enabled: true,
    fingerprint: 'hybrid',
    minSamples: 40,
    minSuccessRate: 0.9,
    lookbackDays: 7,
    candidates: new Set(['openai:gpt-5-nano', 'anthropic:claude-haiku-4-5', 'openai:gpt-5-mini']),
    registered: new Set(registry.list().map((m) => m.id)),
  });
});

test('POST /routing/check names each bad pattern field', () => {
  const errs = (pattern: string) => compile(`pattern: ${pattern}`).errors;
  const cases: Array<[string, RegExp]> = [
    ['{ enabled: maybe }', /^pattern\.enabled: must be true or false/],
    ['{ fingerprint: semantic }', /^pattern\.fingerprint: must be structural or hybrid/],
    ['{ min_samples: 0 }', /^pattern\.min_samples: must be at least 1/],
    ['{ min_samples: 2.5 }', /^pattern\.min_samples: must be a whole number/],
    ['{ min_success_rate: 1.5 }', /^pattern\.min_success_rate: must be a number from 0 to 1/],
    ['{ min_success_rate: high }', /^pattern\.min_success_rate: must be a number from 0 to 1/],
    ['{ lookback_days: 0 }', /^pattern\.lookback_days: must be at least 1/],
    ['{ lookback_days: 400 }', /^pattern\.lookback_days: must be at most 366/],
    ['{ candidates: fast }', /^pattern\.candidates: must be a list of models or tiers/],
    ['{ candidates: [nope] }', /^pattern\.candidates\[0\]: unknown model "nope"/],
    ['{ min_support: 5 }', /^pattern\.min_support/],
    ['yes', /^pattern: must be an object/],
  ];
  for (const [pattern, re] of cases) {
    const e = errs(pattern);
    assert.equal(e.length, 1, `${pattern}: ${e.join('; ')}`);
    assert.match(e[0], re, pattern);
  }
});

test('settings that make an enabled slot 4 unreliable are warnings, not errors', () => {
  const r = compile('pattern: { enabled: true, min_samples: 3, min_success_rate: 0.4 }');
  assert.equal(r.valid, true);
  assert.equal(r.warnings.length, 2);
  assert.match(r.warnings[0], /^pattern\.min_samples: 3 requests are too few/);
  assert.match(r.warnings[1], /^pattern\.min_success_rate: 0\.4 lets slot 4 choose a model that fails/);
  assert.deepEqual(compile('pattern: { enabled: false, min_samples: 3 }').warnings, []);
});

test('GET /routing/policy shows the pattern block with its defaults; a reload tells its listeners', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pattern-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'routing.yaml');
  writeFileSync(file, 'pattern: { enabled: true, fingerprint: hybrid, candidates: [fast] }\n');
  const store = loadRoutingPolicy({ path: file, registry, log: silent });
  assert.deepEqual(store.view().pattern, {
    enabled: true,
    fingerprint: 'hybrid',
    min_samples: 20,
    min_success_rate: 0.95,
    lookback_days: 14,
    candidates: ['fast'],
  });
  let reloads = 0;
  const off = store.onReload(() => reloads++);
  writeFileSync(file, 'pattern: { enabled: false }\n');
  store.reload();
  assert.equal(reloads, 1);
  assert.equal(store.current().pattern.enabled, false);
  off();
  store.reload();
  assert.equal(reloads, 1);
});

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '#src/lib/log.ts';
import { parseModelRegistry } from '#src/models/registry.ts';
import { compilePolicyText } from '#src/routing/compile-policy.ts';
import { DEFAULT_POLICY_YAML } from '#src/routing/default-policy.ts';
import { loadRoutingPolicy } from '#src/routing/load-policy.ts';
import { registry, silent } from './routing-fixture.ts';

const GOOD = `global_default: haiku
tiers: { deep: openai:gpt-5 }
rules:
  - name: images
    when: { has_images: true }
    use: balanced
workspaces:
  - { match: /srv/infra, use: deep }
pattern: { enabled: false, min_samples: 30 }
`;

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-routing-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const clock = { nowUs: () => Date.UTC(2026, 10, 22, 6, 1, 2) * 1000 + 123456 };

test('a valid file loads; version is the SHA-256 of its bytes; the view follows spec 2', (t) => {
  const file = join(tempDir(t), 'routing.yaml');
  writeFileSync(file, GOOD);
  const store = loadRoutingPolicy({ path: file, registry, log: silent, clock });
  const view = store.view();
  assert.equal(view.version, sha(GOOD));
  assert.equal(store.current().version, sha(GOOD));
  assert.equal(view.valid, true);
  assert.equal(view.using_last_known_good, false);
  assert.deepEqual(view.errors, []);
  assert.equal(view.loaded_at, '2026-11-22T06:01:02.123456Z');
  assert.equal(view.global_default, 'anthropic:claude-haiku-4-5');
  assert.deepEqual(view.tiers, {
    fast: 'anthropic:claude-haiku-4-5',
    balanced: 'anthropic:claude-sonnet-4-5',
    deep: 'openai:gpt-5',
  });
  assert.deepEqual(view.rules, [{ name: 'images', when: { has_images: true }, use: 'balanced' }]);
  assert.deepEqual(view.workspaces, [{ match: '/srv/infra', use: 'deep' }]);
  assert.deepEqual(view.pattern, {
    enabled: false,
    fingerprint: 'structural',
    min_samples: 30,
    min_success_rate: 0.95,
    lookback_days: 14,
    candidates: [],
  });
});

test('without a path the built-in policy applies', () => {
  const store = loadRoutingPolicy({ path: undefined, registry, log: silent });
  assert.equal(store.view().valid, true);
  assert.equal(store.view().version, sha(DEFAULT_POLICY_YAML));
  assert.equal(store.view().source, 'built-in routing.yaml');
  assert.equal(store.current().globalDefault, 'anthropic:claude-sonnet-4-5');
});

test('an invalid file on reload keeps the last known good policy and reports errors', (t) => {
  const file = join(tempDir(t), 'routing.yaml');
  writeFileSync(file, GOOD);
  const lines: string[] = [];
  const store = loadRoutingPolicy({
    path: file,
    registry,
    log: createLogger({ write: (l) => lines.push(l) }),
  });
  const good = store.current();
  const bad = 'rules:\n  - name: x\n    use: openai:gpt-nope\n';
  writeFileSync(file, bad);
  assert.deepEqual(store.reload(), { version: sha(bad), valid: false });
  assert.equal(store.current(), good);
  const view = store.view();
  assert.equal(view.valid, false);
  assert.equal(view.using_last_known_good, true);
  assert.equal(view.version, sha(GOOD));
  assert.match(view.errors[0], /^rules\[0\]\.use: unknown model "openai:gpt-nope"/);
  const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'error');
  assert.equal(logged.length, 1);
  assert.equal(logged[0].msg, 'routing policy invalid; keeping the last known good policy');
  assert.equal(logged[0].in_force, sha(GOOD));
  assert.equal(logged[0].in_force_source, file);
  writeFileSync(file, GOOD.replace('haiku', 'mini'));
  assert.equal(store.reload().valid, true);
  assert.equal(store.view().valid, true);
  assert.equal(store.current().globalDefault, 'openai:gpt-5-mini');
});

test('an invalid or missing file at start falls back to the built-in defaults', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'routing.yaml');
  writeFileSync(file, 'rules: [ oops');
  const lines: string[] = [];
  const store = loadRoutingPolicy({
    path: file,
    registry,
    log: createLogger({ write: (l) => lines.push(l) }),
  });
  // nothing was known good before this start: the log says the built-in policy serves
  const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'error');
  assert.equal(logged.length, 1);
  assert.equal(logged[0].msg, 'routing policy invalid; serving the built-in policy');
  assert.equal(logged[0].in_force, sha(DEFAULT_POLICY_YAML));
  assert.equal(logged[0].in_force_source, 'built-in routing.yaml');
  const view = store.view();
  assert.equal(view.valid, false);
  assert.equal(view.using_last_known_good, true);
  assert.equal(view.version, sha(DEFAULT_POLICY_YAML));
  assert.match(view.errors[0], /not valid YAML \(line \d+/);
  const missing = loadRoutingPolicy({ path: join(dir, 'none.yaml'), registry, log: silent });
  assert.match(missing.view().errors[0], /cannot read the routing policy/);
  assert.deepEqual(missing.reload(), { version: '', valid: false });
});

test('an invalid file at start logs the warnings of the policy that serves instead', (t) => {
  // a models.yaml without the built-in default: the built-in policy that serves routes nothing by slot 7
  const custom = parseModelRegistry(
    'pricing_version: t\nmodels:\n  - id: openai:gpt-5-mini\n    tier: fast\n    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 400000, max_output_tokens: 128000 }\n',
    'models.yaml',
  );
  const file = join(tempDir(t), 'routing.yaml');
  writeFileSync(file, 'rules: [ oops');
  const lines: string[] = [];
  loadRoutingPolicy({ path: file, registry: custom, log: createLogger({ write: (l) => lines.push(l) }) });
  const logged = lines.map((l) => JSON.parse(l));
  assert.deepEqual(
    logged.map((l) => [l.level, l.msg]),
    [
      ['error', 'routing policy invalid; serving the built-in policy'],
      ['warn', 'routing policy warning'],
    ],
  );
  assert.equal(logged[1].file, 'built-in routing.yaml');
  assert.match(
    logged[1].warning,
    /^global_default: the built-in default anthropic:claude-sonnet-4-5 is not in models\.yaml/,
  );
});

test('the last known good file survives a restart', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'routing.yaml');
  const lkg = join(dir, 'state', 'routing.last-good.yaml');
  writeFileSync(file, GOOD);
  loadRoutingPolicy({ path: file, registry, log: silent, lastKnownGoodPath: lkg });
  assert.equal(readFileSync(lkg, 'utf8'), GOOD);
  writeFileSync(file, 'global_default: 42x');
  const lines: string[] = [];
  const log = createLogger({ write: (l) => lines.push(l) });
  const restarted = loadRoutingPolicy({ path: file, registry, log, lastKnownGoodPath: lkg });
  const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'error');
  assert.deepEqual(
    logged.map((l) => [l.msg, l.in_force, l.in_force_source]),
    [['routing policy invalid; serving the saved copy of the last valid file', sha(GOOD), lkg]],
  );
  assert.equal(restarted.view().valid, false);
  assert.equal(restarted.view().using_last_known_good, true);
  assert.equal(restarted.current().globalDefault, 'anthropic:claude-haiku-4-5');
  assert.equal(readFileSync(lkg, 'utf8'), GOOD);
});

test('the built-in policy is never written as last known good', (t) => {
  const lkg = join(tempDir(t), 'lkg.yaml');
  loadRoutingPolicy({ path: undefined, registry, log: silent, lastKnownGoodPath: lkg });
  assert.equal(existsSync(lkg), false);
});

test('check validates text or the on-disk file without applying it', (t) => {
  const file = join(tempDir(t), 'routing.yaml');
  writeFileSync(file, GOOD);
  const store = loadRoutingPolicy({ path: file, registry, log: silent });
  const before = store.current();
  assert.deepEqual(store.check(), { valid: true, errors: [], warnings: [] });
  const r = store.check('rules:\n  - { name: a, when: { has_tools: 1 }, use: fast }\n');
  assert.equal(r.valid, false);
  assert.match(r.errors[0], /^rules\[0\]\.when\.has_tools: must be true or false/);
  assert.equal(store.current(), before);
});

test('check warns about shadowed rules and workspace entries', () => {
  const yaml = `rules:
  - { name: tools, when: { has_tools: true }, use: fast }
  - { name: tools-again, when: { has_tools: true }, use: deep }
  - { name: catch-all, use: balanced }
  - { name: never, when: { has_images: true }, use: deep }
workspaces:
  - { match: "/**", use: fast }
  - { match: /srv, use: deep }
`;
  const r = compilePolicyText(yaml, 'routing.yaml', { registry });
  assert.equal(r.valid, true);
  assert.equal(r.warnings.length, 3);
  assert.match(
    r.warnings[0],
    /rules\[1\] \(tools-again\) is shadowed: rules\[0\] \(tools\) has the same `when`/,
  );
  assert.match(r.warnings[1], /rules\[3\] \(never\) is shadowed: rules\[2\] \(catch-all\)/);
  assert.match(r.warnings[2], /workspaces\[1\] \(\/srv\) is shadowed/);
});

test('a workspace entry below an earlier directory entry is shadowed: the directory covers everything below', () => {
  const yaml = `workspaces:
  - { match: /srv, use: fast }
  - { match: /srv/app, use: deep }
  - { match: "/srv/*/logs/**", use: deep }
  - { match: "/srv*", use: deep }
  - { match: /srvx, use: deep }
  - { match: "/home/*/scratch", use: mini }
  - { match: /home/ann/scratch/tmp, use: deep }
  - { match: "**/srv/x", use: deep }
`;
  const r = compilePolicyText(yaml, 'routing.yaml', { registry });
  assert.equal(r.valid, true);
  assert.deepEqual(r.warnings, [
    'workspaces[1] (/srv/app) is shadowed: workspaces[0] (/srv) matches it and every path below it',
    'workspaces[2] (/srv/*/logs/**) is shadowed: workspaces[0] (/srv) matches it and every path below it',
  ]);
});

test('thousands of workspace entries are checked for shadowing at once, the first covering entry named', () => {
  // each entry was compared with every earlier one: 8,000 team folders held a server's event loop for 50 s
  // at each start, SIGHUP reload and routing check, and these 20,000 for minutes
  const entries = Array.from({ length: 20_000 }, (_, i) => `  - { match: /srv/team${i}, use: fast }\n`);
  entries.push(
    '  - { match: /srv/team7/, use: fast }\n',
    '  - { match: "/srv/team12//app/*", use: fast }\n',
    '  - { match: /srv/team1x, use: fast }\n',
  );
  const r = compilePolicyText(`workspaces:\n${entries.join('')}`, 'routing.yaml', { registry });
  assert.equal(r.valid, true);
  assert.deepEqual(r.warnings, [
    'workspaces[20000] (/srv/team7/) is shadowed: workspaces[7] (/srv/team7) matches it and every path below it',
    'workspaces[20001] (/srv/team12//app/*) is shadowed: workspaces[12] (/srv/team12) matches it and every path below it',
  ]);
});

test('schema errors carry field paths', () => {
  const errs = (yaml: string) => compilePolicyText(yaml, 'routing.yaml', { registry }).errors;
  assert.match(errs('tiers: { turbo: fast }')[0], /^tiers\.turbo/);
  assert.match(errs('rules: [ { when: { has_tools: true }, use: fast } ]')[0], /^rules\[0\]\.name/);
  assert.match(errs('workspaces: [ { match: /x } ]')[0], /^workspaces\[0\]\.use/);
  assert.match(errs('workspaces: [ { match: /x, use: nope } ]')[0], /^workspaces\[0\]\.use: unknown model/);
  assert.match(errs('global_default: nope')[0], /^global_default: unknown model/);
  assert.match(errs('tiers: { fast: nope }')[0], /^tiers\.fast: unknown model/);
  assert.match(errs('surprise: 1')[0], /^surprise/);
  assert.match(errs('pattern: { enabled: yes-please }')[0], /^pattern\.enabled/);
});

test('SVC_GATEWAY_GLOBAL_DEFAULT applies when the policy has no global_default; a conflict is a warning', () => {
  const env = compilePolicyText('rules: []', 'r.yaml', { registry, envGlobalDefault: 'mini' });
  assert.equal(env.policy?.globalDefault, 'openai:gpt-5-mini');
  const both = compilePolicyText('global_default: fast', 'r.yaml', { registry, envGlobalDefault: 'mini' });
  assert.equal(both.policy?.globalDefault, 'anthropic:claude-haiku-4-5');
  assert.match(both.warnings[0], /wins over SVC_GATEWAY_GLOBAL_DEFAULT/);
  const unknown = compilePolicyText('rules: []', 'r.yaml', { registry, envGlobalDefault: 'openai:nope' });
  assert.equal(unknown.valid, true);
  assert.match(unknown.warnings[0], /not in built-in models\.yaml/);
});

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startAgentServer, withStore } from '../helpers/agent-server.ts';
import { makeTempDir, ROOT } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-agent-routing-');
after(() => tmp.cleanup());
const routing = join(tmp.dir, 'routing.yaml');
const special = join(tmp.dir, 'special');
mkdirSync(special);
const POLICY_V1 = `global_default: balanced
workspaces:
  - { match: ${special}, use: mini }
`;
writeFileSync(routing, POLICY_V1);
const server = await startAgentServer(
  { after },
  {
    args: ['--routing', routing],
    env: { ANTHROPIC_API_KEY: 'test-key', SVC_GATEWAY_GLOBAL_DEFAULT: undefined },
  },
);
const { api } = server;
const TIME_US = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

test('GET /health: ok, start time, uptime, open sessions and running turns', async () => {
  const before = (await api('GET', '/health')).body;
  assert.equal(before.status, 'ok');
  assert.match(before.started_at, TIME_US);
  assert.equal(typeof before.uptime_seconds, 'number');
  assert.equal(before.active_turns, 0);
  const { id } = (await api('POST', '/sessions', { workspace_path: server.workspace })).body;
  assert.equal((await api('GET', '/health')).body.active_sessions, before.active_sessions + 1);
  await api('DELETE', `/sessions/${id}`);
  assert.equal((await api('GET', '/health')).body.active_sessions, before.active_sessions);
});

test('GET /server/version: the package version and integer schema versions', async () => {
  const res = await api('GET', '/server/version');
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.deepEqual(res.body, {
    version: pkg.version,
    schema_versions: { canonical_message: 1, events: 1, routing_policy: 1 },
  });
});

test('GET /models: registry entries with capabilities; a provider without a key is provider_unavailable', async () => {
  const res = await api('GET', '/models');
  const byId = new Map<string, any>(res.body.models.map((m: { id: string }) => [m.id, m]));
  const sonnet = byId.get('anthropic:claude-sonnet-4-5');
  assert.deepEqual(Object.keys(sonnet).sort(), [
    'adapter',
    'aliases',
    'availability',
    'can_delegate',
    'capabilities',
    'id',
    'tier',
  ]);
  assert.equal(sonnet.availability, 'healthy');
  assert.equal(sonnet.tier, 'balanced');
  assert.ok(sonnet.aliases.includes('balanced'));
  assert.deepEqual(Object.keys(sonnet.capabilities).sort(), [
    'max_context_tokens',
    'max_output_tokens',
    'supports_images',
    'supports_tools',
  ]);
  assert.equal(byId.get('openai:gpt-5-mini').availability, 'provider_unavailable');
});

test('a new session defaults to the workspace default of the policy, else its global default', async () => {
  const inSpecial = await api('POST', '/sessions', { workspace_path: special });
  assert.equal(inSpecial.body.active_model, 'openai:gpt-5-mini');
  const elsewhere = await api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(elsewhere.body.active_model, 'anthropic:claude-sonnet-4-5');
});

test('routing: view, check (errors, shadowing warnings) and an atomic reload that keeps the last good policy', async () => {
  const view = (await api('GET', '/routing/policy')).body;
  assert.equal(view.valid, true);
  assert.equal(view.global_default, 'anthropic:claude-sonnet-4-5');
  assert.deepEqual(view.workspaces, [{ match: special, use: 'mini' }]);
  assert.deepEqual(Object.keys(view.tiers).sort(), ['balanced', 'deep', 'fast']);
  assert.match(view.loaded_at, TIME_US);

  assert.deepEqual((await api('POST', '/routing/check')).body, { valid: true, errors: [], warnings: [] });
  // a null policy_yaml is an absent one, as a client that writes every optional field sends it
  assert.deepEqual((await api('POST', '/routing/check', { policy_yaml: null })).body, {
    valid: true,
    errors: [],
    warnings: [],
  });
  // no policy at all (empty, comments only, `~`) is invalid alike, and `{}` a valid policy with no rules (README)
  for (const empty of ['', '# nothing yet\n', '~\n']) {
    const none = (await api('POST', '/routing/check', { policy_yaml: empty })).body;
    assert.equal(none.valid, false, empty);
    assert.match(none.errors[0], /holds no policy \(an empty file, only comments, or ~\); write \{\}/, empty);
  }
  assert.equal((await api('POST', '/routing/check', { policy_yaml: '{}\n' })).body.valid, true);
  const bad = await api('POST', '/routing/check', {
    policy_yaml: 'rules:\n  - { name: a, use: nope:model }\n',
  });
  assert.equal(bad.body.valid, false);
  assert.match(bad.body.errors[0], /rules\[0\]\.use: unknown model/);
  const shadow = await api('POST', '/routing/check', {
    policy_yaml:
      'rules:\n  - { name: tools, when: { has_tools: true }, use: fast }\n  - { name: tools-images, when: { has_tools: true, has_images: true }, use: deep }\n  - { name: all, use: balanced }\n  - { name: late, when: { has_images: true }, use: deep }\n',
  });
  assert.equal(shadow.body.valid, true);
  assert.equal(shadow.body.warnings.length, 2);
  assert.match(shadow.body.warnings[0], /rules\[1\] \(tools-images\) is shadowed: rules\[0\] \(tools\)/);
  assert.match(shadow.body.warnings[1], /rules\[3\] \(late\) is shadowed: rules\[2\] \(all\)/);
  assert.equal(
    (await api('POST', '/routing/check', { policy_yaml: 5 })).body.error.details.field,
    'policy_yaml',
  );

  writeFileSync(routing, `${POLICY_V1}rules:\n  - { name: images, when: { has_images: true }, use: opus }\n`);
  const reloaded = await api('POST', '/routing/reload');
  assert.equal(reloaded.status, 200);
  assert.equal(reloaded.body.valid, true);
  assert.notEqual(reloaded.body.version, view.version);
  const after1 = (await api('GET', '/routing/policy')).body;
  assert.equal(after1.version, reloaded.body.version);
  assert.equal(after1.rules[0].name, 'images');
  const created = await api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(created.body.routing_policy_version, reloaded.body.version);

  writeFileSync(routing, 'rules: [ { name: broken, use: no-such-model } ]\n');
  const broken = await api('POST', '/routing/reload');
  assert.equal(broken.body.valid, false);
  assert.notEqual(broken.body.version, reloaded.body.version);
  const kept = (await api('GET', '/routing/policy')).body;
  assert.equal(kept.valid, false);
  assert.equal(kept.using_last_known_good, true);
  assert.match(kept.errors[0], /unknown model/);
  assert.equal(kept.version, reloaded.body.version);
  assert.equal(kept.rules[0].name, 'images');
  // a file that cannot be read has no SHA-256: version is empty, and the policy in force stays
  rmSync(routing);
  const missing = (await api('POST', '/routing/reload')).body;
  assert.equal(missing.version, '');
  assert.equal(missing.valid, false);
  assert.equal(missing.using_last_known_good, true);
  assert.match(missing.errors[0], /^cannot read the routing policy .*ENOENT/);
  assert.equal((await api('GET', '/routing/policy')).body.version, reloaded.body.version);
  writeFileSync(routing, POLICY_V1);
  assert.equal((await api('POST', '/routing/reload')).body.valid, true);
});

test('SIGHUP reloads routing.yaml like POST /routing/reload, and a bad file keeps the policy in force', async () => {
  const before = (await api('GET', '/routing/policy')).body;
  const waitFor = async (check: (view: any) => boolean) => {
    for (let i = 0; i < 200; i++) {
      const view = (await api('GET', '/routing/policy')).body;
      if (check(view)) return view;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('the policy view never changed');
  };
  writeFileSync(routing, 'rules: [ { name: broken, use: no-such-model } ]\n');
  server.svc.child.kill('SIGHUP');
  const kept = await waitFor((v) => v.valid === false);
  assert.equal(kept.version, before.version);
  assert.equal(kept.using_last_known_good, true);
  writeFileSync(routing, `${POLICY_V1}rules:\n  - { name: by-signal, use: haiku }\n`);
  server.svc.child.kill('SIGHUP');
  const applied = await waitFor((v) => v.valid === true && v.version !== before.version);
  assert.deepEqual(applied.rules, [{ name: 'by-signal', when: null, use: 'haiku' }]);
  assert.equal(server.svc.child.exitCode, null);
  writeFileSync(routing, POLICY_V1);
  assert.equal((await api('POST', '/routing/reload')).body.valid, true);
});

test('GET /metrics: Prometheus text of the agent role with the session count from the store', async () => {
  const res = await fetch(`${server.url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const count = withStore(
    server.db,
    (db) => (db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n,
  );
  assert.match(text, new RegExp(`^svc_session_count ${count}$`, 'm'));
  assert.doesNotMatch(text, /svc_gateway_keys_active/);
});

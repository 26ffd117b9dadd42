/**
 * The last known good routing policy is kept per policy file: a gateway and an agent server started with
 * different routing.yaml files under one config folder (or one server moved to another file) must never fall
 * back, when their own file turns invalid, on the other file's rules. It used to be one shared copy, written
 * by whichever process loaded last.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readEnv } from '#src/config/env.ts';
import { silentLogger } from '#src/lib/log.ts';
import { loadCallConfig } from '#src/llm/load-call-config.ts';

test('each routing.yaml falls back on its own last known good, not on another file', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lkg-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = readEnv({ XDG_CONFIG_HOME: join(dir, 'config') });
  const gatewayFile = join(dir, 'gateway-routing.yaml');
  const agentFile = join(dir, 'agent-routing.yaml');
  writeFileSync(gatewayFile, 'global_default: fast\n');
  writeFileSync(agentFile, 'global_default: deep\n');
  const load = (routingPath: string) => loadCallConfig({ env, log: silentLogger, routingPath }).policy;

  assert.equal(load(gatewayFile).current().globalDefault, 'anthropic:claude-haiku-4-5');
  assert.equal(load(agentFile).current().globalDefault, 'anthropic:claude-opus-5-5');

  writeFileSync(gatewayFile, 'global_default: [fast\n');
  const restarted = load(gatewayFile);
  assert.equal(restarted.view().valid, false);
  assert.equal(restarted.view().using_last_known_good, true);
  assert.equal(
    restarted.current().globalDefault,
    'anthropic:claude-haiku-4-5',
    "the gateway file's own policy",
  );
});

/**
 * SVC_GATEWAY_GLOBAL_DEFAULT names routing slot 7's model, and a new agent session's default model. One that
 * models.yaml does not know was only warned, and the gateway and the agent server served with it (every
 * request nothing else claimed got model_not_configured); it now refuses the start like any bad SVC_*
 * setting: exit 1 and one sentence naming the variable. A routing.yaml with its own global_default wins
 * over the variable, which is then not used and not checked (as a variable whose flag is given).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-global-default-');
test.after(() => tmp.cleanup());

test('a global default naming no model refuses svc gateway, svc serve and svc routing explain', async () => {
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  const env = { ...files.env, SVC_GATEWAY_GLOBAL_DEFAULT: 'claude-sonnet-4-5' };
  const explain = ['routing', 'explain', '--model', 'auto', '--text', 'hi'];
  for (const command of [['gateway', '--port', '0'], ['serve', '--port', '0'], explain]) {
    const r = await runSvc(command, { env, timeoutMs: 20_000 });
    assert.equal(r.code, 1, `svc ${command.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      /^svc: SVC_GATEWAY_GLOBAL_DEFAULT must name a model id, alias or tier of built-in models\.yaml, not "claude-sonnet-4-5" \(did you mean anthropic:claude-sonnet-4-5\?\); fix or unset it/,
    );
  }

  const routing = join(tmp.dir, 'routing.yaml');
  writeFileSync(routing, 'global_default: fast\n');
  const ok = await runSvc([...explain, '--routing', routing], { env });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /global_default/);
});

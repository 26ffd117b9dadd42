/**
 * `svc routing explain --routing <file>` with a file that is invalid names that file (it named the policy it
 * fell back on: "built-in routing.yaml is invalid") and explains with the policy a server would use: the
 * file's last known good copy once a server has loaded it valid, else the built-in one, and exits 1 with one
 * sentence on stderr (it exited 0), since README has explain check a file before it ships. Explain writes nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isolatedEnv, makeTempDir, runSvc, startSvc } from '../helpers/svc.ts';

test('explain names the broken file and routes with what a server would keep', async (t) => {
  const tmp = makeTempDir('svc-explain-');
  t.after(tmp.cleanup);
  const env = isolatedEnv(tmp.dir, { ANTHROPIC_API_KEY: 'sk-ant-test' });
  const configDir = join(tmp.dir, '.config', 'svc');
  const routing = join(tmp.dir, 'routing.yaml');
  const errors =
    'global_defualt: is not a known key; use one of global_default, tiers, rules, workspaces, pattern';
  // an invalid file fails the command (exit 1, one sentence), so a script that checks it before shipping stops
  const explain = async (invalidWith?: string) => {
    const run = await runSvc(
      ['routing', 'explain', '--model', 'auto', '--text', 'hi', '--routing', routing],
      {
        env,
      },
    );
    assert.equal(run.code, invalidWith ? 1 : 0, run.stderr);
    assert.equal(
      run.stderr,
      invalidWith
        ? `svc: ${routing} is invalid (${errors}); a server would route with ${invalidWith} instead: fix the file before you ship it.\n`
        : '',
    );
    return { first: run.stdout.split('\n')[0], stdout: run.stdout };
  };
  const invalid = `policy       ${routing} is invalid (${errors}); shown with`;

  writeFileSync(routing, 'global_defualt: haiku\n');
  const never = await explain('the built-in policy');
  assert.equal(never.first, `${invalid} the built-in policy`);
  assert.match(never.stdout, /^winner {7}global_default → anthropic:claude-sonnet-4-5$/m);

  writeFileSync(routing, 'global_default: haiku\n');
  const good = await explain();
  assert.doesNotMatch(good.stdout, /^policy /m);
  assert.match(good.stdout, /^winner {7}global_default → anthropic:claude-haiku-4-5$/m);
  assert.equal(existsSync(configDir) && readdirSync(configDir).some((f) => f.startsWith('routing.')), false);

  // a file of no policy (empty, comments only, `~`: what a reload can meet while the file is rewritten) is
  // refused alike, with one sentence saying to write {} for a policy with no rules (README)
  for (const empty of ['', '# rules to come\n\n', '~\n']) {
    writeFileSync(routing, empty);
    const none = await runSvc(
      ['routing', 'explain', '--model', 'auto', '--text', 'hi', '--routing', routing],
      {
        env,
      },
    );
    assert.equal(none.code, 1, JSON.stringify(empty));
    assert.equal(
      none.stderr,
      `svc: ${routing} is invalid (holds no policy (an empty file, only comments, or ~); write {} for a policy with no rules of its own); a server would route with the built-in policy instead: fix the file before you ship it.\n`,
      JSON.stringify(empty),
    );
  }

  // a valid file's warnings, as POST /routing/check gives them (explain is the gateway's way to check a file)
  writeFileSync(routing, 'rules:\n  - { name: all, use: fast }\n  - { name: never, use: deep }\n');
  const warned = await explain();
  assert.equal(
    warned.first,
    `policy       ${routing}: rules[1] (never) is shadowed: rules[0] (all) before it has no \`when\` and always matches`,
  );
  assert.match(warned.stdout, /^winner {7}rule → anthropic:claude-haiku-4-5$/m);
  writeFileSync(routing, 'global_default: haiku\n');

  // a server that loaded the file valid keeps its copy, and keeps routing with it when the file breaks
  const serve = await startSvc(['serve', '--port', '{port}', '--routing', routing], {
    env,
    readyPath: '/health',
  });
  assert.equal(await serve.stop(), 0);
  writeFileSync(routing, 'global_defualt: haiku\n');
  const kept = await explain('its last known good copy');
  assert.equal(kept.first, `${invalid} its last known good copy`);
  assert.match(kept.stdout, /^winner {7}global_default → anthropic:claude-haiku-4-5$/m);
});

test('explain names the rule that proposed a model, as route.decided does', async (t) => {
  const tmp = makeTempDir('svc-explain-');
  t.after(tmp.cleanup);
  const env = isolatedEnv(tmp.dir, { ANTHROPIC_API_KEY: 'sk-ant-test' });
  const run = await runSvc(['routing', 'explain', '--model', 'claude-opus-4-8', '--text', 'hi'], { env });
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /^ {2}3 rule {18}accepted {2}anthropic:claude-opus-5-5 \(rule native-claude-opus\)$/m,
  );
});

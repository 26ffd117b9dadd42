/**
 * A bad SVC_GATEWAY_PORT / SVC_SERVE_PORT refuses the start like every other bad SVC_* number: exit 1
 * (DECISIONS §2: refused start) and one sentence that says to fix or unset it. A bad `--port` stays a
 * usage error (exit 2).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());

function assertOneSentence(stderr: string, pattern: RegExp): void {
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  assert.match(stderr, pattern);
}

test('a bad port variable exits 1 with one sentence that says to fix or unset it', async () => {
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  for (const value of ['abc', '70000', '-1']) {
    const gw = await runSvc(['gateway'], { env: { ...files.env, SVC_GATEWAY_PORT: value } });
    assert.equal(gw.code, 1, `SVC_GATEWAY_PORT=${value}: ${gw.stderr}`);
    assertOneSentence(gw.stderr, new RegExp(`^svc: SVC_GATEWAY_PORT must be .*"${value}"; fix or unset it`));
    const serve = await runSvc(['serve'], { env: { ...files.env, SVC_SERVE_PORT: value } });
    assert.equal(serve.code, 1, `SVC_SERVE_PORT=${value}: ${serve.stderr}`);
    assertOneSentence(serve.stderr, new RegExp(`^svc: SVC_SERVE_PORT must be .*"${value}"; fix or unset it`));
  }
});

test('svc serve whose handed-over settings cannot be read back refuses the start, not runs on other ones', async () => {
  // what a start that re-executed itself finds when its handoff file is gone (it held a --database-url)
  const files = gatewayFiles(join(tmp.dir, 'handoff'));
  const missing = join(tmp.dir, 'svc-env-1-gone', 'env.json');
  const serve = await runSvc(['serve', '--port', '0'], {
    env: { ...files.env, SVC_SECRET_HANDOFF: missing },
  });
  assert.equal(serve.code, 1, serve.stderr);
  assertOneSentence(
    serve.stderr,
    /^svc: the settings this start handed to itself in .* could not be read back/,
  );
});

test('a bad --port is still a usage error (exit 2)', async () => {
  const files = gatewayFiles(tmp.dir);
  for (const command of ['gateway', 'serve']) {
    const r = await runSvc([command, '--port', 'abc'], { env: files.env });
    assert.equal(r.code, 2, r.stderr);
    assertOneSentence(r.stderr, /--port must be a port number from 0 to 65535, not "abc"/);
  }
});

test('a --port given wins: the port variable is then not read, so not checked either', async () => {
  const files = gatewayFiles(join(tmp.dir, 'no-keys'));
  // the flag is bad too: its usage error, not the variable's refusal, is what svc says
  const gw = await runSvc(['gateway', '--port', 'x'], { env: { ...files.env, SVC_GATEWAY_PORT: 'abc' } });
  assert.equal(gw.code, 2, gw.stderr);
  assertOneSentence(gw.stderr, /--port must be a port number from 0 to 65535, not "x"/);
  const serve = await runSvc(['serve', '--port', 'x'], { env: { ...files.env, SVC_SERVE_PORT: 'abc' } });
  assert.equal(serve.code, 2, serve.stderr);
  assertOneSentence(serve.stderr, /--port must be a port number from 0 to 65535, not "x"/);
  // a good flag: the gateway goes on to its keystore (none here) with the variable never looked at
  const next = await runSvc(['gateway', '--port', '0'], { env: { ...files.env, SVC_GATEWAY_PORT: 'abc' } });
  assert.equal(next.code, 1, next.stderr);
  assertOneSentence(next.stderr, /^svc: The gateway refuses to start because there is no keystore at /);
});

test('a bad number setting refuses the start before the store is created', async () => {
  const files = gatewayFiles(join(tmp.dir, 'numbers'));
  await issueKey(files.env);
  const fresh = (name: string) => join(tmp.dir, 'numbers', `${name}.db`);
  const cases = [
    [
      'gateway',
      { SVC_GATEWAY_DB_PATH: fresh('gw1'), SVC_GATEWAY_MAX_RETRIES: 'two' },
      'SVC_GATEWAY_MAX_RETRIES',
    ],
    [
      'gateway',
      { SVC_GATEWAY_DB_PATH: fresh('gw2'), SVC_GATEWAY_MAX_BODY_BYTES: '1MB' },
      'SVC_GATEWAY_MAX_BODY_BYTES',
    ],
    ['serve', { SVC_DB_PATH: fresh('serve1'), SVC_AGENT_MAX_STEPS: 'many' }, 'SVC_AGENT_MAX_STEPS'],
    [
      'serve',
      { SVC_DB_PATH: fresh('serve2'), SVC_GATEWAY_UPSTREAM_TIMEOUT_MS: '10s' },
      'SVC_GATEWAY_UPSTREAM_TIMEOUT_MS',
    ],
  ] as const;
  const runs = await Promise.all(
    cases.map(([command, env]) => runSvc([command, '--port', '0'], { env: { ...files.env, ...env } })),
  );
  cases.forEach(([command, env, name], i) => {
    assert.equal(runs[i].code, 1, `${command}: ${runs[i].stderr}`);
    assertOneSentence(runs[i].stderr, new RegExp(`^svc: ${name} must be .*; fix or unset it`));
    const db = 'SVC_GATEWAY_DB_PATH' in env ? env.SVC_GATEWAY_DB_PATH : env.SVC_DB_PATH;
    assert.equal(existsSync(db), false, `${command} ${name}: the store was created`);
  });
});

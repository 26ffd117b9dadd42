/**
 * A provider base URL (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, OPENROUTER_BASE_URL) that is not an http(s) URL
 * refuses the start of `svc gateway` and `svc serve`: exit 1, one sentence naming the variable. It used to
 * start, and every call to that provider failed as a connection error (502) with nothing said at start.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { freePort, makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());

test('a base URL that is no http(s) URL refuses the start with one sentence', async () => {
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  for (const [name, value] of [
    ['ANTHROPIC_BASE_URL', 'not a url'],
    ['OPENAI_BASE_URL', '127.0.0.1:8499/v1'],
    ['OPENROUTER_BASE_URL', 'ftp://openrouter.example/api/v1'],
  ] as const) {
    for (const command of ['gateway', 'serve']) {
      const r = await runSvc([command, '--port', String(await freePort())], {
        env: { ...files.env, [name]: value },
        timeoutMs: 15_000,
      });
      assert.equal(r.code, 1, `${command} with ${name}=${value}: exit ${r.code}\n${r.stderr}`);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
      assert.ok(
        r.stderr.startsWith(`svc: ${name} must be an http:// or https:// URL such as `) &&
          r.stderr.includes(`not "${value}"; fix or unset it`),
        r.stderr,
      );
    }
  }
});

test('the refusal never repeats the password of a proxy URL given as the base URL', async () => {
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  const secret = 'Pr0xyPassw0rd';
  for (const [value, shown] of [
    [`proxyuser:${secret}@proxy.corp:3128`, '***@proxy.corp:3128'],
    [`ftp://proxyuser:${secret}@proxy.corp/v1`, 'ftp://***@proxy.corp/v1'],
    [`http//proxyuser:p@ss${secret}@proxy.corp/v1`, 'http//***@proxy.corp/v1'],
  ] as const) {
    const r = await runSvc(['gateway', '--port', String(await freePort())], {
      env: { ...files.env, OPENAI_BASE_URL: value },
      timeoutMs: 15_000,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.ok(!r.stderr.includes(secret), r.stderr);
    assert.ok(r.stderr.includes(`not "${shown}"; fix or unset it`), r.stderr);
  }
});

test('a provider key no HTTP header can carry refuses the start, and is never shown', async () => {
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  // a key pasted with its line break: every call to the provider failed as a connection error (502)
  const secret = 'sk-ant-Secr3tKey';
  for (const command of ['gateway', 'serve']) {
    const r = await runSvc([command, '--port', String(await freePort())], {
      env: { ...files.env, ANTHROPIC_API_KEY: `${secret}\nsk-second-line` },
      timeoutMs: 15_000,
    });
    assert.equal(r.code, 1, `${command}: exit ${r.code}\n${r.stderr}`);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^svc: ANTHROPIC_API_KEY holds a character an HTTP header cannot carry /);
    assert.ok(!r.stderr.includes(secret), r.stderr);
  }
});

/**
 * Claude Code 2.1.332 (the real executable) where its own habits meet the gateway's answers:
 * - with both ANTHROPIC_API_KEY (the user's own Anthropic key) and ANTHROPIC_AUTH_TOKEN (the gateway key)
 *   set it sends both, as x-api-key and Bearer: the gateway key is the one used;
 * - a request no model of the routing chain can serve (here: no Anthropic provider key) is a 503
 *   `routing_failed` of type `api_error` with `x-should-retry: true` and `retry-after` (issue 13: every
 *   503): Claude Code retries it within its own retry budget, then reports the gateway's message (an
 *   `overloaded_error` type made it retry for three minutes).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';
import { makeTempDir, ROOT } from '../helpers/svc.ts';

const CLAUDE = join(ROOT, 'node_modules/.bin/claude');

function claude(
  stack: GatewayStack,
  home: string,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: stack.gw.url,
    ANTHROPIC_AUTH_TOKEN: stack.token,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    ...extraEnv,
  };
  return new Promise((resolve) => {
    const child = execFile(
      CLAUDE,
      ['-p', ...args],
      { cwd: join(home, 'project'), env, timeout: 90_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

test('Claude Code: the gateway key beside the user’s own Anthropic key, and a routing failure', {
  timeout: 240_000,
}, async (t) => {
  const tmp = makeTempDir('svc-claude-code-auth-');
  mkdirSync(join(tmp.dir, 'project'));
  t.after(() => tmp.cleanup());

  await t.test(
    'ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN both set: served with the gateway key',
    async () => {
      const stack = await startGatewayStack();
      t.after(() => stack.stop());
      const run = await claude(stack, tmp.dir, ['say hi', '--model', 'sonnet'], {
        ANTHROPIC_API_KEY: 'sk-ant-api03-the-users-own-anthropic-key',
      });
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.equal(run.stdout.trim(), 'Hello from the fake provider.');
      assert.equal(readEvents(stack.files.db, 'gateway.auth_failed').length, 0);
      const calls = readEvents(stack.files.db, 'llm.call_completed');
      assert.ok(calls.length > 0);
      for (const c of calls) assert.equal(c.payload.gateway_key_id, stack.keyId);
    },
  );

  await t.test(
    'no usable model: 503 routing_failed, and Claude Code reports the gateway message',
    async () => {
      const stack = await startGatewayStack({ providers: ['openai'] }); // no Anthropic provider key
      t.after(() => stack.stop());
      // a 503 says x-should-retry: true, so Claude Code retries within its budget (one retry here)
      const run = await claude(stack, tmp.dir, ['say hi', '--model', 'sonnet'], {
        CLAUDE_CODE_MAX_RETRIES: '1',
      });
      assert.notEqual(run.code, 0);
      assert.match(run.stdout + run.stderr, /no candidate model is usable/);
      const turns = readEvents(stack.files.db, 'turn.completed');
      assert.equal(turns.length, 2, 'the request and its one retry');
      for (const e of turns)
        assert.deepEqual([e.payload.status, e.payload.error_code], [503, 'routing_failed']);
      assert.equal(stack.fake.requests.length, 0);
    },
  );
});

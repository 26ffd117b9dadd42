/**
 * Codex CLI 0.169.0, the real executable from npm (`codex exec`), against the gateway and the fake provider,
 * with the custom provider of the README (`base_url` = the gateway root plus `/v1`, `wire_api =
 * "responses"`, the key in an environment variable). Issue 13: its default model (`gpt-6.1-sol`) reaches
 * an OpenAI model by a native-name rule and its Responses request is forwarded as it is; pointed at a Claude
 * model (`-m haiku`), its Codex-only `namespace` tool is refused with a 400 that says so, never a wrong answer.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';
import { makeTempDir, ROOT } from '../helpers/svc.ts';

const CODEX = join(ROOT, 'node_modules/.bin/codex');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function codex(stack: GatewayStack, home: string, args: string[]): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    CODEX_HOME: join(home, '.codex'),
    SVC_GATEWAY_TOKEN: stack.token,
  };
  return new Promise((resolve) => {
    const child = execFile(
      CODEX,
      ['exec', '--skip-git-repo-check', ...args],
      { cwd: join(home, 'project'), env, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

test('Codex CLI through the gateway', { timeout: 120_000 }, async (t) => {
  const stack = await startGatewayStack();
  const tmp = makeTempDir('svc-codex-');
  t.after(async () => {
    await stack.stop();
    tmp.cleanup();
  });
  mkdirSync(join(tmp.dir, 'project'));
  mkdirSync(join(tmp.dir, '.codex'));
  writeFileSync(
    join(tmp.dir, '.codex', 'config.toml'),
    [
      'model_provider = "svc"',
      '',
      '[model_providers.svc]',
      'name = "svc gateway"',
      `base_url = "${stack.gw.url}/v1"`,
      'env_key = "SVC_GATEWAY_TOKEN"',
      'wire_api = "responses"',
      '',
    ].join('\n'),
  );
  const { fake } = stack;
  t.beforeEach(() => fake.reset());

  await t.test(
    'its default model reaches openai:gpt-5 by a rule; the request is forwarded as sent',
    async () => {
      const run = await codex(stack, tmp.dir, ['say hi']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Hello from the fake provider\./);
      const sent = fake.requests.filter((r) => r.path === '/v1/responses');
      assert.equal(sent.length, 1);
      const body = sent[0].body as Record<string, unknown>;
      // wire-formats §4.1: Codex's request shape
      assert.equal(body.model, 'gpt-5');
      assert.equal(body.stream, true);
      assert.equal(body.store, false);
      assert.deepEqual(body.include, ['reasoning.encrypted_content']);
      assert.equal(body.previous_response_id, undefined);
      assert.equal(body.instructions, undefined);
      const input = body.input as Array<{ type?: string; role?: string }>;
      assert.ok(input.some((i) => i.type === 'additional_tools'));
      assert.ok(input.some((i) => i.role === 'developer'));
      const decided = readEvents(stack.files.db, 'route.decided').at(-1)!;
      assert.equal(decided.payload.requested_model, 'gpt-6.1-sol');
      const chain = decided.payload.chain as Array<{ policy: string; verdict: string; model: string }>;
      assert.deepEqual(chain.at(-1), { policy: 'rule', model: 'openai:gpt-5', verdict: 'accepted' });
      const done = readEvents(stack.files.db, 'llm.call_completed').at(-1)!;
      assert.equal(done.payload.inbound_shape, 'openai_responses');
    },
  );

  await t.test(
    'pointed at a Claude model it gets a 400 that names its Codex-only namespace tool',
    async () => {
      const run = await codex(stack, tmp.dir, ['-m', 'haiku', 'say hi']);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /tools\.\d+: a tool of type namespace can be served only by an OpenAI model/);
      assert.equal(fake.requests.length, 0);
    },
  );
});

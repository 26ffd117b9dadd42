/**
 * Claude Code 2.1.332, the real executable from npm (`claude -p`), against the gateway and the fake provider,
 * configured as the README says (ANTHROPIC_BASE_URL = the gateway root, ANTHROPIC_AUTH_TOKEN = a gateway
 * key). Issue 13: `--model opus|haiku|sonnet` sends Claude Code's own model names (claude-*-5-5), which must
 * reach Opus 5.5, Haiku 5.5 and Sonnet 5.5 of the registry by a rule (not the global default); a tool round trip works; a
 * wrong key is answered `x-should-retry: false`, so Claude Code gives up after one request.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';
import { makeTempDir, ROOT } from '../helpers/svc.ts';

const CLAUDE = join(ROOT, 'node_modules/.bin/claude');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function claude(
  stack: GatewayStack,
  home: string,
  args: string[],
  token = stack.token,
  stdin = '',
): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: stack.gw.url,
    ANTHROPIC_AUTH_TOKEN: token,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  return new Promise((resolve) => {
    const child = execFile(
      CLAUDE,
      ['-p', ...args],
      { cwd: join(home, 'project'), env, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin);
  });
}

test('Claude Code through the gateway', { timeout: 120_000 }, async (t) => {
  const stack = await startGatewayStack();
  const tmp = makeTempDir('svc-claude-code-');
  t.after(async () => {
    await stack.stop();
    tmp.cleanup();
  });
  mkdirSync(join(tmp.dir, 'project'));
  const { fake } = stack;
  t.beforeEach(() => fake.reset());

  // Claude Code's claude-*-5-5 names are registry models, sent as written
  for (const [flag, routed, rule] of [
    ['opus', 'anthropic:claude-opus-5-5', 'native-claude-opus-5-5'],
    ['haiku', 'anthropic:claude-haiku-5-5', 'native-claude-haiku-5-5'],
    ['sonnet', 'anthropic:claude-sonnet-5-5', 'native-claude-sonnet-5-5'],
  ] as const) {
    await t.test(`--model ${flag} is served by ${routed}, won by a native-name rule`, async () => {
      // on a key capped at 1.60 USD a day: the 128,000 output tokens Claude Code asks hold 1.28 USD at
      // Sonnet 5.5's 10 / M, and its prompt's bound the rest
      const token = flag === 'sonnet' ? (await stack.issue(['--daily-cap-usd', '1.6'])).token : stack.token;
      const run = await claude(stack, tmp.dir, ['say hi', '--model', flag], token);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.equal(run.stdout.trim(), 'Hello from the fake provider.');
      const sent = fake.requests.filter((r) => r.path.startsWith('/v1/messages'));
      assert.ok(sent.length > 0);
      const body = sent[0].body as Record<string, unknown>;
      assert.equal(body.model, routed.slice('anthropic:'.length));
      assert.equal(body.stream, true);
      // the model it was written for: as sent
      assert.equal(body.max_tokens, 128_000);
      assert.equal((body.thinking as { type?: string }).type, 'adaptive');
      const statuses = readEvents(stack.files.db, 'turn.completed').map((e) => e.payload.status);
      assert.deepEqual(
        statuses.filter((s) => s !== 200),
        [],
      );
      const decided = readEvents(stack.files.db, 'route.decided').at(-1)!;
      assert.match(String(decided.payload.requested_model), new RegExp(`^claude-${flag}-`));
      const chain = decided.payload.chain as Array<{ policy: string; verdict: string; model: string }>;
      assert.deepEqual(chain.at(-1), { policy: 'rule', model: routed, verdict: 'accepted' });
      assert.equal(decided.payload.rule, rule);
    });
  }

  await t.test(
    'a tool round trip: the model reads a file, Claude Code answers with its content',
    async () => {
      const file = join(tmp.dir, 'project', 'note.txt');
      writeFileSync(file, 'the note says 42\n');
      fake.script([{ toolUses: [{ name: 'Read', input: { file_path: file } }] }]);
      const run = await claude(stack, tmp.dir, ['what does note.txt say?', '--model', 'haiku']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Tool result received: .*the note says 42/s);
      const second = fake.requests.filter((r) => r.path.startsWith('/v1/messages'))[1];
      // Claude Code also sends mid-conversation system messages (wire-formats §1.2), forwarded as they are
      const messages = (second.body as { messages: Array<{ role: string; content: unknown }> }).messages;
      const user = messages.filter((m) => m.role === 'user').at(-1);
      assert.match(JSON.stringify(user), /"type":"tool_result".*the note says 42/);
      // its prompt caching: breakpoints on the system prompt and the last block, so the second call reads
      // what the first wrote; the trace prices each class at Haiku 5.5's 0.10 / 0.50, reads 0.01, writes 0.125
      // (every rate 5x for a call whose whole input passes 100,000 tokens)
      const calls = readEvents(stack.files.db, 'llm.call_completed')
        .slice(-2)
        .map((e) => e.payload as Record<string, number>);
      assert.ok(calls[0].cache_creation_input_tokens > 4096, 'the first call writes its prompt');
      assert.equal(
        calls[1].cached_input_tokens,
        calls[0].cached_input_tokens + calls[0].cache_creation_input_tokens,
      );
      for (const c of calls) {
        const step = c.input_tokens + c.cached_input_tokens + c.cache_creation_input_tokens > 100_000 ? 5 : 1;
        const nanoUsd =
          step *
          (100 * c.input_tokens +
            500 * c.output_tokens +
            10 * c.cached_input_tokens +
            125 * c.cache_creation_input_tokens);
        assert.equal(Number(c.cost_usd), nanoUsd / 1e9);
      }
    },
  );

  await t.test(
    'on a GPT model its tool search works: the tool_reference it returns becomes text, no request refused',
    async () => {
      // Claude Code declares WebFetch, WebSearch… as deferred tools the model loads through ToolSearch, whose
      // result is a tool_reference block; refused as untranslatable, it cost three 400s before Claude Code
      // dropped tool search for the session
      const turns = readEvents(stack.files.db, 'turn.completed').length;
      fake.script([
        { toolUses: [{ name: 'ToolSearch', input: { query: 'select:WebFetch', max_results: 5 } }] },
      ]);
      const run = await claude(stack, tmp.dir, ['fetch a page', '--model', 'openai:gpt-5-mini']);
      assert.equal(run.code, 0, run.stderr);
      const statuses = readEvents(stack.files.db, 'turn.completed')
        .slice(turns)
        .map((e) => e.payload.status);
      assert.deepEqual(statuses, [200, 200]);
      const second = fake.requests.filter((r) => r.path === '/v1/chat/completions')[1];
      const body = second.body as {
        messages: Array<{ role: string; content: unknown }>;
        tools: Array<{ function: { name: string } }>;
      };
      assert.deepEqual(
        body.messages.filter((m) => m.role === 'tool').map((m) => m.content),
        ['Tool loaded: WebFetch'],
      );
      assert.ok(body.tools.some((tool) => tool.function.name === 'WebFetch'));
      assert.match(run.stdout, /Tool result received: Tool loaded: WebFetch/);
    },
  );

  for (const model of ['haiku', 'openai:gpt-5-mini']) {
    await t.test(
      `stream-json mode on ${model}: its thinking.display "updates" is accepted, no request refused`,
      async () => {
        // the Agent SDK's mode (--output-format stream-json) asks for thinking display updates, a value
        // newer than the two the docs list; refusing it cost every turn two 400s before Claude Code fell back
        const turns = readEvents(stack.files.db, 'turn.completed').length;
        const run = await claude(stack, tmp.dir, [
          'say hi',
          '--model',
          model,
          '--output-format',
          'stream-json',
          '--verbose',
        ]);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /Hello from the fake provider\./);
        const statuses = readEvents(stack.files.db, 'turn.completed')
          .slice(turns)
          .map((e) => e.payload.status);
        assert.ok(statuses.length > 0);
        assert.deepEqual(
          statuses.filter((s) => s !== 200),
          [],
        );
        const asked = fake.requests
          .filter((r) => r.path.startsWith('/v1/'))
          .map((r) => (r.body as { thinking?: { display?: string } }).thinking?.display);
        if (model === 'haiku') assert.ok(asked.includes('updates'), 'forwarded as sent on the same wire');
        else {
          // its metadata.user_id is a 150-character JSON object; OpenAI takes a user of 64 at most
          const users = fake.requests.map((r) => (r.body as { user?: string }).user);
          assert.ok(
            users.every((u) => typeof u === 'string' && /^[0-9a-f]{64}$/.test(u)),
            String(users),
          );
        }
      },
    );
  }

  await t.test(
    'a prompt no model can hold: one request, and Claude Code says the prompt is too long',
    async () => {
      // routing refuses it (context_too_small on every candidate): a 503 Claude Code would retry for a minute
      // and a half and then call temporary, unless it says so in the API's words and that no retry helps
      const turns = readEvents(stack.files.db, 'turn.completed').length;
      // ~160,000 tokens, on Haiku 4.5 (200,000; Haiku 5.5, which --model haiku reaches, holds 1M, and Claude
      // Code refuses a prompt above that itself)
      const prompt = `summarize: ${'lorem ipsum dolor sit amet '.repeat(24_000)}`;
      const run = await claude(stack, tmp.dir, ['--model', 'claude-haiku-4-5'], stack.token, prompt);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stdout, /^Prompt is too long/);
      const refused = readEvents(stack.files.db, 'turn.completed').slice(turns);
      assert.deepEqual(
        refused.map((e) => [e.payload.status, e.payload.error_code]),
        [[503, 'routing_failed']],
        'one request, no retry',
      );
      assert.equal(fake.requests.length, 0);
    },
  );

  await t.test('a wrong key: one 401 with x-should-retry false, and Claude Code stops', async () => {
    const before = readEvents(stack.files.db, 'gateway.auth_failed').length;
    const run = await claude(stack, tmp.dir, ['say hi'], 'gw_not_a_key');
    assert.notEqual(run.code, 0);
    assert.equal(fake.requests.length, 0);
    const failures = readEvents(stack.files.db, 'gateway.auth_failed').slice(before);
    assert.equal(failures.length, 1, 'no retry of a 401');
    assert.equal(failures[0].payload.reason, 'invalid_token');
  });
});

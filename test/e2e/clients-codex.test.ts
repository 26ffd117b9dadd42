/**
 * Codex CLI 0.171.0, the real executable from npm (`codex exec`), against the gateway and the fake provider,
 * with the custom provider of the README (`base_url` = the gateway root plus `/v1`, `wire_api =
 * "responses"`, the key in an environment variable). Issue 13: its default model (`gpt-6.2-sol`) reaches
 * an OpenAI model by a native-name rule and its Responses request is forwarded as it is; pointed at a Claude
 * model (`-m haiku`) its request is translated: the `namespace` tool's functions flattened, the hosted web
 * search left out (named in `svc-dropped-tools`), and a tool call Codex runs comes back under its call id.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';
import { makeTempDir, ROOT, requestLogLine } from '../helpers/svc.ts';

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
    'its default model reaches openai:gpt-6.2-sol by its rule; the request is forwarded as sent',
    async () => {
      const run = await codex(stack, tmp.dir, ['say hi']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Hello from the fake provider\./);
      const sent = fake.requests.filter((r) => r.path === '/v1/responses');
      assert.equal(sent.length, 1);
      const body = sent[0].body as Record<string, unknown>;
      // wire-formats §4.1: Codex's request shape
      assert.equal(body.model, 'gpt-6.2-sol');
      assert.equal(body.stream, true);
      assert.equal(body.store, false);
      assert.deepEqual(body.include, ['reasoning.encrypted_content']);
      assert.equal(body.previous_response_id, undefined);
      assert.equal(body.instructions, undefined);
      // it asks its default model for reasoning.context all_turns, which GPT-5.6 and later take: as sent
      assert.deepEqual(body.reasoning, { effort: 'low', context: 'all_turns' });
      const input = body.input as Array<{ type?: string; role?: string }>;
      assert.ok(input.some((i) => i.type === 'additional_tools'));
      assert.ok(input.some((i) => i.role === 'developer'));
      const decided = readEvents(stack.files.db, 'route.decided').at(-1)!;
      assert.equal(decided.payload.requested_model, 'gpt-6.2-sol');
      const chain = decided.payload.chain as Array<{ policy: string; verdict: string; model: string }>;
      assert.deepEqual(chain.at(-1), { policy: 'rule', model: 'openai:gpt-6.2-sol', verdict: 'accepted' });
      assert.equal(decided.payload.rule, 'native-gpt-6.2-sol');
      const done = readEvents(stack.files.db, 'llm.call_completed').at(-1)!;
      assert.equal(done.payload.inbound_shape, 'openai_responses');
      const line = await requestLogLine(stack.gw, String(done.turn_id));
      assert.equal(line.dropped_params ?? null, null);
      // its older default (Codex 0.169's gpt-6.1-sol) reaches gpt-5, which refuses reasoning.context: left out
      // and named
      fake.reset();
      const older = await codex(stack, tmp.dir, ['-m', 'gpt-6.1-sol', 'say hi']);
      assert.equal(older.code, 0, older.stderr);
      const olderBody = fake.requests.find((r) => r.path === '/v1/responses')!.body as Record<
        string,
        unknown
      >;
      assert.equal(olderBody.model, 'gpt-5');
      assert.deepEqual(olderBody.reasoning, { effort: 'low' });
      const olderDone = readEvents(stack.files.db, 'llm.call_completed').at(-1)!;
      const olderLine = await requestLogLine(stack.gw, String(olderDone.turn_id));
      assert.equal(olderLine.dropped_params, 'reasoning.context');
    },
  );

  await t.test(
    'on its default model a tool round trip completes: the call of its code-mode exec tool, then the answer',
    async () => {
      // its tools are in an additional_tools item (namespace functions, custom tool exec first): the model calls
      // exec with text, as the API writes a namespaced call; Codex runs it and sends the output back
      const run = await codex(stack, tmp.dir, ['run it [[fake:tool_call]]']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Tool result received: /);
      const sent = fake.requests.filter((r) => r.path === '/v1/responses');
      assert.equal(sent.length, 2, 'the call, then the answer to its output');
      const items = (sent[1].body as { input: Array<Record<string, unknown>> }).input;
      const call = items.find((i) => i.type === 'custom_tool_call')!;
      assert.deepEqual([call.name, call.namespace, call.input], ['exec', 'functions', 'exec input']);
      const output = items.find((i) => i.type === 'custom_tool_call_output')!;
      assert.equal(output.call_id, call.call_id);
      const done = readEvents(stack.files.db, 'llm.call_completed').slice(-2);
      assert.deepEqual(
        done.map((e) => [e.payload.model, e.payload.stop_reason, Number(e.payload.cost_usd) > 0]),
        [
          ['openai:gpt-6.2-sol', 'tool_use', true],
          ['openai:gpt-6.2-sol', 'end_turn', true],
        ],
      );
    },
  );

  await t.test(
    'the conversation above resumed on a Claude model: its tool list left out, its custom tool call replayed as a call',
    async () => {
      // the history replays the additional_tools item and the exec call of the turn above; this request carries
      // haiku's own tools
      const run = await codex(stack, tmp.dir, ['resume', '--last', '-m', 'haiku', 'and again']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Hello from the fake provider\./);
      const sent = fake.requests.filter((r) => r.path === '/v1/messages');
      assert.equal(sent.length, 1);
      const body = sent[0].body as { system: Array<{ text: string }>; messages: unknown[] };
      // read as if the item were not there: Codex's developer messages are still the system prompt
      assert.match(body.system.map((b) => b.text).join('\n'), /You are Codex/);
      const history = JSON.stringify(body.messages);
      assert.doesNotMatch(history, /additional_tools|You are Codex/);
      // the custom tool's call is a call whose input holds its text, answered under its id
      const use =
        /\{"type":"tool_use","id":"([^"]+)","name":"functions__exec","input":\{"input":"exec input"\}\}/;
      assert.match(history, use);
      assert.ok(history.includes(`"tool_use_id":"${use.exec(history)![1]}"`));
    },
  );

  await t.test(
    'an effort gpt-6.1-sol takes and gpt-5, which serves it, does not (xhigh) is fitted to the nearest gpt-5 takes',
    async () => {
      // Codex writes the request for gpt-6.1-sol, which takes none to xhigh; gpt-5 refuses xhigh (400)
      const run = await codex(stack, tmp.dir, [
        '-m',
        'gpt-6.1-sol',
        '-c',
        'model_reasoning_effort="xhigh"',
        'say hi',
      ]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Hello from the fake provider\./);
      const sent = fake.requests.filter((r) => r.path === '/v1/responses');
      assert.equal(sent.length, 1);
      assert.equal((sent[0].body as { reasoning: { effort: string } }).reasoning.effort, 'high');
    },
  );

  await t.test(
    'a concise reasoning summary, which gpt-5 does not write, is asked as the detailed one it writes',
    async () => {
      // gpt-5 refuses concise (400 'Unsupported value: 'concise' is not supported with the 'gpt-5' model…')
      const run = await codex(stack, tmp.dir, [
        '-m',
        'gpt-6.1-sol',
        '-c',
        'model_reasoning_summary="concise"',
        'say hi',
      ]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Hello from the fake provider\./);
      const sent = fake.requests.filter((r) => r.path === '/v1/responses');
      assert.equal(sent.length, 1);
      assert.equal((sent[0].body as { reasoning: { summary: string } }).reasoning.summary, 'detailed');
      // the summary the model wrote reaches the user
      assert.match(`${run.stdout}${run.stderr}`, /The user wants a reply\. I will answer briefly\./);
    },
  );

  await t.test(
    'pointed at a GPT model that does not reason by a gateway name, its effort is left out and named',
    async () => {
      // gpt-4.1 refuses any reasoning option (400 'Unsupported parameter: 'reasoning.effort'…')
      const run = await codex(stack, tmp.dir, [
        '-m',
        'openai:gpt-4.1',
        '-c',
        'model_reasoning_effort="high"',
        'say hi',
      ]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Hello from the fake provider\./);
      const sent = fake.requests.filter((r) => r.path === '/v1/responses');
      assert.deepEqual(
        sent.map((r) => [(r.body as { model: string }).model, (r.body as { reasoning?: unknown }).reasoning]),
        [['gpt-4.1', undefined]],
      );
      const turn = readEvents(stack.files.db, 'turn.completed').at(-1)!;
      const line = await requestLogLine(stack.gw, String(turn.turn_id));
      assert.equal(line.dropped_params, 'reasoning');
    },
  );

  await t.test(
    'a provider overloaded after its answer began: one request, Codex says so and exits 1; the trace has the turn',
    async () => {
      const turns = readEvents(stack.files.db, 'turn.completed').length;
      const run = await codex(stack, tmp.dir, ['say hi [[fake:stream-error=529;stream-error-after=4]]']);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /Selected model is at capacity/);
      assert.equal(fake.requests.length, 1, 'no retry');
      const turn = readEvents(stack.files.db, 'turn.completed').slice(turns);
      assert.deepEqual(
        turn.map((e) => [e.payload.status, e.payload.error_code, e.payload.inbound_shape]),
        [[200, 'upstream_overloaded', 'openai_responses']],
      );
      const failed = readEvents(stack.files.db, 'llm.call_failed').at(-1)!;
      assert.equal(failed.turn_id, readEvents(stack.files.db, 'turn.completed').at(-1)!.turn_id);
      assert.equal(failed.payload.error_class, 'overloaded');
      assert.ok(Number(failed.payload.cost_usd) > 0, 'its input is billed');
    },
  );

  await t.test(
    'pointed at a Claude model it works: its namespace tool is flattened, hosted web search left out, and a tool round trip completes',
    async () => {
      const run = await codex(stack, tmp.dir, ['-m', 'haiku', 'list the files [[fake:tool_call]]']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Tool result received: /);
      const sent = fake.requests.filter((r) => r.path === '/v1/messages');
      assert.equal(sent.length, 2, 'the call, then the answer to its output');
      const tools = (sent[0].body as { tools: Array<{ name: string }> }).tools.map((x) => x.name);
      assert.ok(tools.includes('exec_command'), tools.join(', '));
      assert.ok(tools.includes('multi_agent_v1__spawn_agent'), tools.join(', '));
      assert.ok(!tools.some((n) => n.includes('web_search')), tools.join(', '));
      // Codex ran the call and sent its output back under the same call id
      const history = JSON.stringify((sent[1].body as { messages: unknown }).messages);
      assert.match(history, /"type":"tool_use","id":"(toolu_[^"]+)","name":"exec_command"/);
      const id = /"type":"tool_use","id":"(toolu_[^"]+)"/.exec(history)![1];
      assert.ok(history.includes(`"tool_use_id":"${id}"`));
      const done = readEvents(stack.files.db, 'llm.call_completed').slice(-2);
      assert.deepEqual(
        done.map((e) => [e.payload.model, e.payload.inbound_shape, e.payload.stop_reason]),
        [
          ['anthropic:claude-haiku-4-5', 'openai_responses', 'tool_use'],
          ['anthropic:claude-haiku-4-5', 'openai_responses', 'end_turn'],
        ],
      );
    },
  );
});

/**
 * The Responses API's response.created and response.in_progress each repeat the request's instructions and
 * tools, so their size follows the request's: the stream-start peek looks past them for the overload error
 * however large the request made them (within the SSE line limit), and the call is retried before any byte
 * reached the client (DECISIONS §4: never retry once bytes went to the client).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { makeTempDir } from '../helpers/svc.ts';

/** An OpenAI model whose context takes a request of several MiB (the built-in ones stop near 4 MiB). */
const MODELS_YAML = `pricing_version: test
models:
  - id: openai:gpt-long
    tier: balanced
    aliases: []
    can_delegate: false
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 10000000, max_output_tokens: 32768 }
    prices: { input: 2, output: 8, cache_read: 0.5 }
  - id: anthropic:claude-sonnet-4-5
    tier: balanced
    aliases: []
    can_delegate: false
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }
    prices: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }
`;

test('an overload after 10 MiB of Responses preamble is still retried before the 200', {
  timeout: 60_000,
}, async (t) => {
  const tmp = makeTempDir('svc-preamble-');
  t.after(() => tmp.cleanup());
  const models = join(tmp.dir, 'models.yaml');
  writeFileSync(models, MODELS_YAML);
  const stack = await startGatewayStack({ providers: ['openai'], env: { SVC_MODELS: models } });
  t.after(() => stack.stop());
  // 5 MiB of instructions: each preamble event repeats them, 10 MiB before the error (past a fixed 8 MiB)
  const instructions = 'Follow the house style. '.repeat((5 * 1024 * 1024) / 24);
  // each frame on its own (drip): the look reads the two preamble events before the error arrives
  stack.fake.script(['stream-error=529;stream-error-after=2;drip=20', 'ok']);
  // read with fetch: the SDK's line decoder takes seconds over the answer's 5 MiB lines (15 MiB in all)
  const res = await fetch(`${stack.gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai:gpt-long', instructions, input: 'hi', stream: true }),
  });
  assert.equal(res.status, 200);
  const types = (await res.text())
    .trim()
    .split('\n\n')
    .map((frame) => (JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as { type: string }).type);
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.completed', 'the retry streamed the answer');
  assert.ok(!types.includes('error'), 'the overload never reached the client');
  assert.equal(stack.fake.requests.length, 2, 'the overloaded attempt and the retry');
});

/**
 * Upstream answers are read within caps (issue 17 item 4): a non-streaming body over
 * SVC_GATEWAY_MAX_UPSTREAM_BODY_BYTES answers 502 upstream_error in the client's shape, and an SSE line
 * over SVC_GATEWAY_MAX_SSE_LINE_BYTES ends the stream with an error frame in the client's shape; both
 * close the call with one llm.call_failed of class server_error. Answers under the caps pass. Same wire
 * and across wires; the defaults (32 MiB, 8 MiB) hold when nothing is set.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

const CASES = [
  { shape: 'anthropic', model: 'anthropic:claude-haiku-4-5' },
  { shape: 'anthropic', model: 'openai:gpt-5-mini' },
  { shape: 'openai', model: 'openai:gpt-5-mini' },
  { shape: 'openai', model: 'anthropic:claude-haiku-4-5' },
] as const;

type Shape = (typeof CASES)[number]['shape'];

function post(stack: GatewayStack, shape: Shape, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${stack.gw.url}${shape === 'anthropic' ? '/v1/messages' : '/v1/chat/completions'}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.token}`,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    },
    body: JSON.stringify({ max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

function eventsOf(stack: GatewayStack, turnId: string | null) {
  assert.ok(turnId, 'svc-request-id header');
  return readEvents(stack.files.db).filter((e) => e.turn_id === turnId);
}

function assertFailedOnce(stack: GatewayStack, turnId: string | null, message: RegExp): void {
  const events = eventsOf(stack, turnId);
  const failed = events.filter((e) => e.type === 'llm.call_failed');
  assert.equal(failed.length, 1, 'one llm.call_failed');
  assert.equal(failed[0].payload.error_class, 'server_error');
  assert.equal(failed[0].payload.code, 'upstream_error');
  assert.match(String(failed[0].payload.message), message);
  assert.equal(events.filter((e) => e.type === 'llm.call_completed').length, 0, 'no llm.call_completed');
  assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1, 'one turn.completed');
}

async function expectBodyTooLarge(stack: GatewayStack, shape: Shape, model: string, bytes: number) {
  stack.fake.reset();
  stack.fake.script([`oversize=${bytes}`]);
  const res = await post(stack, shape, { model });
  const text = await res.text();
  assert.equal(res.status, 502, text.slice(0, 300));
  assert.ok(text.length < 4 * KiB, 'nothing of the body reaches the client');
  const body = JSON.parse(text) as { type?: string; error: { code: string } };
  assert.equal(body.error.code, 'upstream_error');
  if (shape === 'anthropic') assert.equal(body.type, 'error');
  assertFailedOnce(stack, res.headers.get('svc-request-id'), /larger than .* bytes/);
}

async function expectLineTooLong(stack: GatewayStack, shape: Shape, model: string, bytes: number) {
  stack.fake.reset();
  stack.fake.script([`oversize=${bytes}`]);
  const res = await post(stack, shape, { model, stream: true });
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.ok(text.length < 64 * KiB, 'nothing of the long line reaches the client');
  const last = text.trim().split('\n\n').at(-1)!;
  const data = JSON.parse(last.slice(last.indexOf('data: ') + 6));
  if (shape === 'anthropic') {
    assert.match(last, /^event: error\ndata: /);
    assert.equal(data.type, 'error');
  }
  assert.equal(data.error.code, 'upstream_error', `last frame: ${last}`);
  assertFailedOnce(stack, res.headers.get('svc-request-id'), /longer than .* bytes/);
}

test('answers over the configured caps end as upstream_error; answers under them pass', {
  timeout: 120_000,
}, async (t) => {
  const stack = await startGatewayStack({
    env: {
      SVC_GATEWAY_MAX_RETRIES: '0',
      SVC_GATEWAY_MAX_UPSTREAM_BODY_BYTES: String(MiB),
      SVC_GATEWAY_MAX_SSE_LINE_BYTES: String(256 * KiB),
    },
  });
  t.after(() => stack.stop());
  for (const { shape, model } of CASES) {
    await t.test(`${shape} client, ${model} upstream: a 2 MiB body is 502`, () =>
      expectBodyTooLarge(stack, shape, model, 2 * MiB),
    );
    await t.test(`${shape} client, ${model} upstream: a 512 KiB line ends with an error frame`, () =>
      expectLineTooLong(stack, shape, model, 512 * KiB),
    );
    await t.test(
      `${shape} client, ${model} upstream: a 512 KiB body and a 128 KiB stream text pass`,
      async () => {
        stack.fake.reset();
        stack.fake.script([`oversize=${512 * KiB}`, `text=${'y'.repeat(128 * KiB)}`]);
        const res = await post(stack, shape, { model });
        assert.equal(res.status, 200);
        const json = (await res.json()) as Record<string, any>;
        const answer = shape === 'anthropic' ? json.content[0].text : json.choices[0].message.content;
        assert.equal(answer.length, 512 * KiB);
        const streamed = await post(stack, shape, { model, stream: true });
        assert.equal(streamed.status, 200);
        const text = await streamed.text();
        assert.ok(!text.includes('upstream_error'), text.slice(-300));
        const types = eventsOf(stack, streamed.headers.get('svc-request-id')).map((e) => e.type);
        assert.ok(types.includes('llm.call_completed'), types.join());
      },
    );
  }
});

test('the default caps hold when nothing is set (32 MiB body, 8 MiB line)', {
  timeout: 120_000,
}, async (t) => {
  const stack = await startGatewayStack({ env: { SVC_GATEWAY_MAX_RETRIES: '0' } });
  t.after(() => stack.stop());
  await t.test('a 33 MiB body is 502', () =>
    expectBodyTooLarge(stack, 'anthropic', 'anthropic:claude-haiku-4-5', 33 * MiB),
  );
  await t.test('a 9 MiB line ends with an error frame', () =>
    expectLineTooLong(stack, 'openai', 'openai:gpt-5-mini', 9 * MiB),
  );
});

/**
 * An upstream 200 that is not the provider's answer (issue 17 item 2): a JSON body that is not the
 * provider's response object (a string, `{}`, no content/choices, wrong types, no usage) answers
 * 502 upstream_error in the client's shape, and a stream that ends cleanly without its terminal event
 * ends with an error frame in the client's shape. Either way the call closes with one llm.call_failed of
 * class server_error and no llm.call_completed (never a $0 success), same wire and across wires. A 200 whose
 * body is the provider's own error object (a proxy relaying an overload under its 200) is that error.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';

const CASES = [
  { shape: 'anthropic', model: 'anthropic:claude-haiku-4-5' },
  { shape: 'anthropic', model: 'openai:gpt-5-mini' },
  { shape: 'openai', model: 'openai:gpt-5-mini' },
  { shape: 'openai', model: 'anthropic:claude-haiku-4-5' },
  { shape: 'openai', model: 'openrouter:google/gemini-2.5-flash' },
] as const;

const BAD_BODIES = ['string', 'empty', 'no-usage', 'no-content', 'wrong-types'] as const;

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

/** One llm.call_failed of class server_error, no llm.call_completed, one turn.completed. */
function assertFailedOnce(stack: GatewayStack, turnId: string | null): void {
  assert.ok(turnId, 'svc-request-id header');
  const events = readEvents(stack.files.db).filter((e) => e.turn_id === turnId);
  const failed = events.filter((e) => e.type === 'llm.call_failed');
  assert.equal(failed.length, 1, 'one llm.call_failed');
  assert.equal(failed[0].payload.error_class, 'server_error');
  assert.equal(failed[0].payload.code, 'upstream_error');
  assert.equal(events.filter((e) => e.type === 'llm.call_completed').length, 0, 'no llm.call_completed');
  assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1, 'one turn.completed');
}

/**
 * The gateway without retries, shared by the two tests that need it (each checks its own calls by their
 * turn id); started on first use, stopped after the file.
 */
let noRetries: Promise<GatewayStack> | undefined;
function gatewayWithoutRetries(): Promise<GatewayStack> {
  noRetries ??= startGatewayStack({ env: { SVC_GATEWAY_MAX_RETRIES: '0' } });
  return noRetries;
}
after(async () => {
  const stack = await noRetries?.catch(() => undefined); // a failed start already failed its test
  await stack?.stop();
});

test('a 200 that is not the provider response object answers 502 upstream_error and is never billed', {
  timeout: 120_000,
}, async (t) => {
  const stack = await gatewayWithoutRetries();
  for (const { shape, model } of CASES) {
    for (const kind of BAD_BODIES) {
      await t.test(`${shape} client, ${model} upstream, bad-body=${kind}`, async () => {
        stack.fake.reset();
        stack.fake.script([`bad-body=${kind}`]);
        const res = await post(stack, shape, { model });
        const text = await res.text();
        assert.equal(res.status, 502, text);
        const body = JSON.parse(text) as { type?: string; error: { code: string; type: string } };
        assert.equal(body.error.code, 'upstream_error');
        if (shape === 'anthropic') assert.equal(body.type, 'error');
        else assert.equal(body.type, undefined, 'the OpenAI error body has no top-level type');
        assert.ok(!text.includes('oops'), 'nothing of the broken body reaches the client');
        assertFailedOnce(stack, res.headers.get('svc-request-id'));
      });
    }
  }
});

test('a 200 whose body is the provider error object is that error, classed as its type says', async (t) => {
  const stack = await gatewayWithoutRetries();
  for (const { shape, model } of CASES) {
    await t.test(`${shape} client, ${model} upstream`, async () => {
      // a proxy relaying the provider's overload under its own 200: Anthropic's overloaded_error and
      // OpenRouter's code 503 say overloaded; OpenAI's 503 body says only server_error
      const overloaded = !model.startsWith('openai:');
      const content = '[[fake:bad-body=error]]';
      const res = await post(stack, shape, { model, messages: [{ role: 'user', content }] });
      const text = await res.text();
      // before, on an Anthropic upstream: 502 upstream_error 'not an Anthropic Messages response', server_error
      assert.equal(res.status, overloaded ? 503 : 502, text);
      const body = JSON.parse(text) as { type?: string; error: { code: string } };
      assert.equal(body.error.code, overloaded ? 'upstream_overloaded' : 'upstream_error');
      if (shape === 'anthropic') assert.equal(body.type, 'error');
      assert.equal(res.headers.get('x-should-retry'), String(overloaded));
      const turnId = res.headers.get('svc-request-id');
      const failed = readEvents(stack.files.db).filter(
        (e) => e.turn_id === turnId && e.type === 'llm.call_failed',
      );
      assert.deepEqual(
        failed.map((e) => e.payload.error_class),
        [overloaded ? 'overloaded' : 'server_error'],
      );
    });
  }
});

test('a stream that ends without its terminal event ends with an error frame and is never billed', {
  timeout: 120_000,
}, async (t) => {
  const stack = await gatewayWithoutRetries();
  for (const { shape, model } of CASES) {
    await t.test(`${shape} client, ${model} upstream`, async () => {
      // the same call answered whole: what the provider states for it
      stack.fake.reset();
      const whole = await post(stack, shape, { model, stream: true });
      await whole.text();
      const [stated] = readEvents(stack.files.db).filter(
        (e) => e.turn_id === whole.headers.get('svc-request-id') && e.type === 'llm.call_completed',
      );
      stack.fake.reset();
      stack.fake.script(['no-terminal']);
      const res = await post(stack, shape, { model, stream: true });
      assert.equal(res.status, 200);
      const frames = (await res.text()).trim().split('\n\n');
      const last = frames.at(-1)!;
      const data = JSON.parse(last.slice(last.indexOf('data: ') + 6));
      if (shape === 'anthropic') {
        assert.match(last, /^event: error\ndata: /);
        assert.equal(data.type, 'error');
        assert.ok(!frames.some((f) => f.startsWith('event: message_stop')), 'no message_stop');
      } else {
        assert.ok(!frames.includes('data: [DONE]'), 'no [DONE]');
      }
      assert.equal(data.error.code, 'upstream_error', `last frame: ${last}`);
      assertFailedOnce(stack, res.headers.get('svc-request-id'));
      // only the terminal event was lost: the provider had stated its final counts, and those are recorded
      const [failed] = readEvents(stack.files.db).filter(
        (e) => e.turn_id === res.headers.get('svc-request-id') && e.type === 'llm.call_failed',
      );
      for (const field of ['input_tokens', 'output_tokens', 'cost_usd'])
        assert.equal(failed.payload[field], stated.payload[field], field);
      assert.equal(failed.payload.usage_estimated, undefined, 'stated counts are not an estimate');
    });
  }
});

test('a stream request answered 200 without any event is retried, then 502 upstream_error, never a 200', {
  timeout: 120_000,
}, async (t) => {
  const stack = await startGatewayStack({ env: { SVC_GATEWAY_MAX_RETRIES: '1' } });
  t.after(() => stack.stop());
  for (const { shape, model } of CASES) {
    await t.test(`${shape} client, ${model} upstream`, async () => {
      stack.fake.reset();
      // the upstream ignored stream: true (or a proxy answered with a page of its own): nothing reached the
      // client yet, so this is an HTTP error an SDK can see, like an error as the stream's first event
      stack.fake.setDefault('not-sse');
      const res = await post(stack, shape, { model, stream: true });
      stack.fake.setDefault(undefined);
      const text = await res.text();
      assert.equal(res.status, 502, text);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const body = JSON.parse(text) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'upstream_error');
      assert.match(body.error.message, /no event stream/);
      assert.equal(stack.fake.requests.length, 2, 'retried like any failure before the first byte');
      assertFailedOnce(stack, res.headers.get('svc-request-id'));
    });
  }
});

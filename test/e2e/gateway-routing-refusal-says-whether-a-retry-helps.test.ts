/**
 * A 503 routing_failed tells the SDKs whether sending the same request again can help (wire-formats §4: both
 * SDKs obey `x-should-retry` before the status). When every candidate refused the request for what it is
 * (too large for each model's context, images none of them takes) no retry can be routed: the answer says
 * `x-should-retry: false` and the SDK sends it once. A refusal that can change without the request (a
 * provider without its key) keeps `true` with `retry-after` (gateway-request-errors.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

// no images, 131,072 tokens of context; also the global default, so no slot can fall back to another model
const LLAMA = 'openrouter:meta-llama/llama-3.3-70b-instruct';
const PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

test('a routing refusal no retry can change says x-should-retry: false', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack({ env: { SVC_GATEWAY_GLOBAL_DEFAULT: LLAMA } });
  t.after(() => stack.stop());
  // the SDKs' default retries: the header alone decides whether they send the request again
  const openai = new OpenAI({ apiKey: stack.token, baseURL: `${stack.gw.url}/v1` });
  const anthropic = new Anthropic({ apiKey: stack.token, baseURL: stack.gw.url });
  const refusals = () =>
    readEvents(stack.files.db, 'turn.completed').filter((e) => e.payload.error_code === 'routing_failed')
      .length;

  await t.test('an image no candidate takes (OpenAI SDK)', async () => {
    const before = refusals();
    const err = await openai.chat.completions
      .create({
        model: LLAMA,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } },
            ],
          },
        ],
      })
      .catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 503);
    assert.equal((err.error as { code?: string }).code, 'routing_failed');
    assert.equal(err.headers?.get('x-should-retry'), 'false');
    assert.equal(err.headers?.get('retry-after'), null, 'no wait offered for what no wait changes');
    assert.equal(refusals() - before, 1, 'the SDK sent it once');
  });

  await t.test('a prompt larger than every candidate context (Anthropic SDK)', async () => {
    const before = refusals();
    const err = await anthropic.messages
      .create({
        model: LLAMA,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'word '.repeat(140_000) }],
      })
      .catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.APIError, String(err));
    assert.equal(err.status, 503);
    const body = err.error as { error?: { code?: string; details?: { tried?: Array<{ reason: string }> } } };
    assert.equal(body.error?.code, 'routing_failed');
    assert.deepEqual(
      body.error?.details?.tried?.map((e) => e.reason),
      ['context_too_small', 'context_too_small'],
    );
    assert.equal(err.headers?.get('x-should-retry'), 'false');
    assert.equal(refusals() - before, 1, 'the SDK sent it once');
    assert.equal(stack.fake.requests.length, 0, 'no upstream request');
  });
});

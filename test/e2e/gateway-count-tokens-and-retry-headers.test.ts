/**
 * Issue 13, the small gaps a new client hits first: the Anthropic SDK's `countTokens` (the provider's own
 * count for a model on the Anthropic wire, the gateway's estimate marked as one for any other), every 404
 * and 405 under /v1/messages in the Anthropic error shape, `x-should-retry: false` on a wrong key (so the
 * SDK does not retry it), and `svc-routed-model` on every answer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

test('count_tokens, Anthropic-shaped 404/405, x-should-retry on 401 and svc-routed-model', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const { fake, gw, token, anthropic } = stack;
  t.beforeEach(() => fake.reset());
  const messages = [{ role: 'user' as const, content: 'How many tokens is this sentence?' }];

  await t.test(
    'an Anthropic model gets the provider count, forwarded with only the model replaced',
    async () => {
      const { data, response } = await anthropic.messages
        .countTokens({ model: 'haiku', messages, system: 'be brief' })
        .withResponse();
      const sent = fake.requests.filter((r) => r.path === '/v1/messages/count_tokens');
      assert.equal(sent.length, 1);
      assert.deepEqual(sent[0].body, { model: 'claude-haiku-4-5', messages, system: 'be brief' });
      assert.ok(data.input_tokens > 0);
      assert.equal(response.headers.get('svc-token-count'), 'provider');
      assert.equal(response.headers.get('svc-routed-model'), 'anthropic:claude-haiku-4-5');
    },
  );

  await t.test(
    "Claude Code's count for a newer Claude is fitted to the routed model as its call is",
    async () => {
      // a newer Haiku's adaptive thinking and effort (claude-haiku-5, no built-in model: the haiku family rule
      // serves it with Haiku 4.5), which claude-haiku-4-5 refuses on count_tokens too
      const { data, response } = await anthropic.messages
        .countTokens({
          model: 'claude-haiku-5',
          messages,
          thinking: { type: 'adaptive' },
          output_config: { effort: 'medium' },
        } as Anthropic.MessageCountTokensParams)
        .withResponse();
      assert.equal(response.headers.get('svc-routed-model'), 'anthropic:claude-haiku-4-5');
      const sent = fake.requests.filter((r) => r.path === '/v1/messages/count_tokens');
      assert.deepEqual(sent[0].body, {
        model: 'claude-haiku-4-5',
        messages,
        thinking: { type: 'enabled', budget_tokens: 8192 },
      });
      assert.ok(data.input_tokens > 0);
      // the effort went into the thinking budget: nothing is left out
      assert.equal(response.headers.get('svc-dropped-params'), null);
    },
  );

  await t.test(
    'what fitting leaves out of a count is named in svc-dropped-params, as the call names it',
    async () => {
      // an effort (Claude Code's for a newer Haiku) that claude-haiku-4-5 does not take, with no thinking to carry it
      const asked = { model: 'claude-haiku-5', messages, output_config: { effort: 'low' } };
      const counted = await anthropic.messages
        .countTokens(asked as Anthropic.MessageCountTokensParams)
        .withResponse();
      const called = await anthropic.messages
        .create({ ...asked, max_tokens: 64 } as Anthropic.MessageCreateParamsNonStreaming)
        .withResponse();
      assert.equal(counted.response.headers.get('svc-routed-model'), 'anthropic:claude-haiku-4-5');
      assert.equal(counted.response.headers.get('svc-dropped-params'), 'output_config.effort');
      assert.equal(called.response.headers.get('svc-dropped-params'), 'output_config.effort');
      const sent = fake.requests.find((r) => r.path === '/v1/messages/count_tokens');
      assert.deepEqual(sent?.body, { model: 'claude-haiku-4-5', messages });
    },
  );

  await t.test('any other model gets the estimate, marked as one, and no upstream call', async () => {
    const { data, response } = await anthropic.messages
      .countTokens({ model: 'openai:gpt-5-mini', messages })
      .withResponse();
    assert.equal(fake.requests.length, 0);
    assert.equal(data.input_tokens, Math.ceil(messages[0].content.length / 4));
    assert.equal(response.headers.get('svc-token-count'), 'estimate');
    assert.equal(response.headers.get('svc-routed-model'), 'openai:gpt-5-mini');
    // Japanese runs about a token a character, not four characters a token
    const japanese = 'こんにちは、今日はいい天気ですね。'.repeat(60);
    const counted = await anthropic.messages.countTokens({
      model: 'openai:gpt-5-mini',
      messages: [{ role: 'user', content: japanese }],
    });
    assert.equal(counted.input_tokens, japanese.length);
  });

  await t.test('a 404 and a 405 under /v1/messages are Anthropic errors that say not to retry', async () => {
    const headers = { 'x-api-key': token, 'anthropic-version': '2023-06-01' };
    const notFound = await fetch(`${gw.url}/v1/messages/batches`, { method: 'POST', headers, body: '{}' });
    assert.equal(notFound.status, 404);
    const notFoundBody = (await notFound.json()) as { request_id?: string };
    assert.deepEqual(Object.keys(notFoundBody), ['type', 'error', 'request_id']);
    assert.equal(notFoundBody.request_id, notFound.headers.get('request-id'));
    assert.equal(notFound.headers.get('x-should-retry'), 'false');
    const wrongMethod = await fetch(`${gw.url}/v1/messages`, { headers });
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
    const body = (await wrongMethod.json()) as { type: string; error: { type: string; code: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error.code, 'method_not_allowed');
    assert.equal(wrongMethod.headers.get('x-should-retry'), 'false');
    // the SDK surfaces it as its own error class instead of printing raw JSON
    await assert.rejects(
      anthropic.post('/v1/messages/unknown', { body: {} }),
      (err) => err instanceof Anthropic.NotFoundError,
    );
  });

  await t.test(
    'a wrong key is answered 401 x-should-retry false, so an SDK with retries asks once',
    async () => {
      let attempts = 0;
      const client = new Anthropic({
        apiKey: 'gw_wrong',
        baseURL: gw.url,
        maxRetries: 3,
        fetch: (url, init) => {
          attempts++;
          return fetch(url, init);
        },
      });
      await assert.rejects(
        client.messages.create({ model: 'sonnet', max_tokens: 10, messages }),
        (err) =>
          err instanceof Anthropic.AuthenticationError && err.headers?.get('x-should-retry') === 'false',
      );
      assert.equal(attempts, 1);
    },
  );

  await t.test(
    'a count the provider fails is retried as a call is, and answered in the Anthropic shape',
    async () => {
      // [directive, status, code, error.type, upstream attempts, x-should-retry, retry-after]: DECISIONS §4
      // retries 429, 5xx, 529 and connection errors (2 by default), not a refusal or a provider's "do not retry"
      const cells = [
        ['error=429;retry-after-ms=20', 429, 'upstream_rate_limited', 'rate_limit_error', 3, 'true', '1'],
        ['error=429', 429, 'upstream_rate_limited', 'rate_limit_error', 3, 'true', /^\d+$/],
        ['error=529', 503, 'upstream_overloaded', 'overloaded_error', 3, 'true', /^\d+$/],
        ['error=500', 502, 'upstream_error', 'api_error', 3, 'false', null],
        ['reset-after=0', 502, 'upstream_error', 'api_error', 3, 'false', null],
        ['reset-after=1', 502, 'upstream_error', 'api_error', 3, 'false', null],
        ['error=429;should-retry=false', 429, 'upstream_rate_limited', 'rate_limit_error', 1, 'false', null],
        ['error=400', 400, 'upstream_invalid_request', 'invalid_request_error', 1, 'false', null],
        ['spend-limit', 502, 'upstream_auth_failed', 'api_error', 1, 'false', null],
      ] as const;
      await Promise.all(
        cells.map(async ([fault, status, code, type, attempts, shouldRetry, retryAfter], i) => {
          const marker = `<count ${i}>`;
          const res = await fetch(`${gw.url}/v1/messages/count_tokens`, {
            method: 'POST',
            headers: {
              'x-api-key': token,
              'anthropic-version': '2023-06-01',
              'content-type': 'application/json',
            },
            body: JSON.stringify({
              model: 'haiku',
              messages: [{ role: 'user', content: `${marker} [[fake:${fault}]]` }],
            }),
          });
          const body = (await res.json()) as { type: string; error: { type: string; code: string } };
          assert.equal(res.status, status, `${fault}: ${JSON.stringify(body)}`);
          assert.equal(body.type, 'error', fault);
          assert.equal(body.error.code, code, fault);
          assert.equal(body.error.type, type, fault);
          assert.equal(res.headers.get('x-should-retry'), shouldRetry, fault);
          const after = res.headers.get('retry-after');
          if (retryAfter === null) assert.equal(after, null, fault);
          else if (typeof retryAfter === 'string') assert.equal(after, retryAfter, fault);
          else assert.match(after ?? '', retryAfter, fault);
          const sent = fake.requests.filter(
            (r) => r.path === '/v1/messages/count_tokens' && JSON.stringify(r.body).includes(marker),
          );
          assert.equal(sent.length, attempts, `${fault}: upstream attempts`);
        }),
      );
    },
  );

  await t.test('every answer names the routed model, streaming or not', async () => {
    const { response } = await anthropic.messages
      .create({ model: 'haiku', max_tokens: 10, messages })
      .withResponse();
    assert.equal(response.headers.get('svc-routed-model'), 'anthropic:claude-haiku-4-5');
    const stream = await stack.openai.chat.completions
      .create({ model: 'mini', messages, stream: true })
      .withResponse();
    assert.equal(stream.response.headers.get('svc-routed-model'), 'openai:gpt-5-mini');
    for await (const _ of stream.data);
    // an error after routing too: the provider refused the request
    await assert.rejects(
      anthropic.messages.create({
        model: 'claude-opus-4-8',
        max_tokens: 10,
        messages: [{ role: 'user', content: '[[fake:error=400]]' }],
      }),
      (err) =>
        err instanceof Anthropic.BadRequestError &&
        err.headers?.get('svc-routed-model') === 'anthropic:claude-opus-5-5',
    );
  });
});

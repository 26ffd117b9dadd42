import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { fakeSdkClients } from '../../fake-provider/sdk-clients.ts';
import { createFakeProvider, type FakeProvider, startFakeProvider } from '../../fake-provider/server.ts';

const fake = await startFakeProvider();
after(() => fake.close());

const { anthropic, openai } = fakeSdkClients(fake);

type ErrorClass = abstract new (...args: any[]) => Error;

const ANTHROPIC_CLASSES: [number, string, ErrorClass][] = [
  [400, 'invalid_request_error', Anthropic.BadRequestError],
  [401, 'authentication_error', Anthropic.AuthenticationError],
  [404, 'not_found_error', Anthropic.NotFoundError],
  [429, 'rate_limit_error', Anthropic.RateLimitError],
  [500, 'api_error', Anthropic.InternalServerError],
  [502, 'api_error', Anthropic.InternalServerError],
  [503, 'api_error', Anthropic.InternalServerError],
  [529, 'overloaded_error', Anthropic.InternalServerError],
];

const OPENAI_CLASSES: [number, string, ErrorClass][] = [
  [400, 'invalid_request_error', OpenAI.BadRequestError],
  [401, 'invalid_request_error', OpenAI.AuthenticationError],
  [404, 'invalid_request_error', OpenAI.NotFoundError],
  [429, 'requests', OpenAI.RateLimitError],
  [500, 'server_error', OpenAI.InternalServerError],
  [502, 'server_error', OpenAI.InternalServerError],
  [503, 'server_error', OpenAI.InternalServerError],
  [529, 'server_error', OpenAI.InternalServerError],
];

for (const [status, type, ErrorClass] of ANTHROPIC_CLASSES) {
  test(`anthropic error=${status} surfaces as ${ErrorClass.name} with error type ${type}`, async () => {
    fake.reset();
    const call = anthropic.messages.create({
      model: 'claude-x',
      max_tokens: 5,
      messages: [{ role: 'user', content: `[[fake:error=${status};retry-after=7;retry-after-ms=7000]]` }],
    });
    await assert.rejects(call, (err) => {
      assert.ok(err instanceof ErrorClass && err instanceof Anthropic.APIError);
      assert.equal(err.status, status);
      assert.equal((err.error as { error: { type: string } }).error.type, type);
      assert.match(err.requestID ?? '', /^req_/);
      assert.equal(err.headers?.get('retry-after'), '7');
      assert.equal(err.headers?.get('retry-after-ms'), '7000');
      return true;
    });
  });
}

for (const [status, type, ErrorClass] of OPENAI_CLASSES) {
  test(`openai error=${status} surfaces as ${ErrorClass.name} with error type ${type}`, async () => {
    fake.reset();
    const call = openai.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: `[[fake:error=${status};retry-after=3]]` }],
    });
    await assert.rejects(call, (err) => {
      assert.ok(err instanceof ErrorClass && err instanceof OpenAI.APIError);
      assert.equal(err.status, status);
      assert.equal(err.type, type);
      assert.match(err.requestID ?? '', /^req_/);
      assert.equal(err.headers?.get('retry-after'), '3');
      return true;
    });
  });
}

test('a scripted 429 then success beats the directive in the retried body', async () => {
  fake.reset();
  fake.script(['error=429;retry-after-ms=1', 'ok']);
  const retrying = new Anthropic({
    apiKey: 'k',
    baseURL: fake.anthropicBaseUrl,
    maxRetries: 1,
    logLevel: 'off',
  });
  const message = await retrying.messages.create({
    model: 'claude-x',
    max_tokens: 5,
    messages: [{ role: 'user', content: 'hi [[fake:error=500;text=second try]]' }],
  });
  assert.deepEqual(message.content, [{ type: 'text', text: 'second try' }]);
  assert.deepEqual(
    fake.requests.map((r) => r.headers['x-stainless-retry-count']),
    ['0', '1'],
  );
});

test('scripted steps accept objects and fall back to the default step', async () => {
  fake.reset();
  fake.setDefault({ error: 529 });
  fake.script([{ text: 'from the queue' }]);
  const first = await openai.chat.completions.create({
    model: 'm',
    messages: [{ role: 'user', content: 'a' }],
  });
  assert.equal(first.choices[0].message.content, 'from the queue');
  await assert.rejects(
    openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'a' }] }),
    (err) => err instanceof OpenAI.InternalServerError && err.status === 529,
  );
  fake.reset();
});

test('x-should-retry and a custom message reach the client', async () => {
  fake.reset();
  await assert.rejects(
    openai.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: '[[fake:error=429;should-retry=false;message=quota gone]]' }],
    }),
    (err) => {
      assert.ok(err instanceof OpenAI.RateLimitError);
      assert.equal(err.headers?.get('x-should-retry'), 'false');
      assert.match(err.message, /quota gone/);
      return true;
    },
  );
});

test('hang holds the request until the client aborts', async () => {
  fake.reset();
  const controller = new AbortController();
  const call = anthropic.messages.create(
    { model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: '[[fake:hang]]' }] },
    { signal: controller.signal },
  );
  await until(() => fake.requests.length === 1);
  controller.abort();
  await assert.rejects(call, Anthropic.APIUserAbortError);
});

test('close() does not wait for hung or streaming connections', async () => {
  const own = await startFakeProvider();
  const hung = fetch(`${own.openaiBaseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer k' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: '[[fake:hang]]' }] }),
  });
  const streaming = await fetch(`${own.openaiBaseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer k' },
    body: JSON.stringify({
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: '[[fake:drip=60000]]' }],
    }),
  });
  await until(() => own.requests.length === 2);
  await own.close();
  await assert.rejects(hung);
  await assert.rejects(streaming.text());
});

test('reset-after=3 cuts an anthropic stream and the SDK throws', async () => {
  fake.reset();
  const stream = anthropic.messages.stream({
    model: 'claude-x',
    max_tokens: 5,
    messages: [{ role: 'user', content: '[[fake:reset-after=3]]' }],
  });
  await assert.rejects(stream.finalMessage());
});

test('reset-after=2 cuts an openai stream and the SDK throws', async () => {
  fake.reset();
  const stream = await openai.chat.completions.create({
    model: 'gpt-x',
    stream: true,
    messages: [{ role: 'user', content: '[[fake:reset-after=2]]' }],
  });
  const seen: unknown[] = [];
  await assert.rejects(async () => {
    for await (const chunk of stream) seen.push(chunk);
  });
  assert.equal(seen.length, 2);
});

test('reset-after=0 fails before any byte as a connection error; reset-after=1 cuts a JSON body', async () => {
  fake.reset();
  await assert.rejects(
    openai.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: '[[fake:reset-after=0]]' }],
    }),
    OpenAI.APIConnectionError,
  );
  await assert.rejects(
    anthropic.messages.create({
      model: 'm',
      max_tokens: 5,
      messages: [{ role: 'user', content: '[[fake:reset-after=1]]' }],
    }),
  );
});

test('malformed SSE makes both SDKs throw; a malformed JSON body too', async () => {
  fake.reset();
  const anthropicStream = anthropic.messages.stream({
    model: 'claude-x',
    max_tokens: 5,
    messages: [{ role: 'user', content: '[[fake:malformed]]' }],
  });
  await assert.rejects(anthropicStream.finalMessage());
  const openaiStream = openai.chat.completions.stream({
    model: 'gpt-x',
    messages: [{ role: 'user', content: '[[fake:malformed=1]]' }],
  });
  await assert.rejects(openaiStream.finalChatCompletion());
  await assert.rejects(
    openai.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: '[[fake:malformed]]' }],
    }),
  );
});

test('stream-error sends the in-stream error event each SDK raises', async () => {
  fake.reset();
  const anthropicStream = anthropic.messages.stream({
    model: 'claude-x',
    max_tokens: 5,
    messages: [{ role: 'user', content: '[[fake:stream-error=529]]' }],
  });
  await assert.rejects(anthropicStream.finalMessage(), (err) => {
    assert.ok(err instanceof Anthropic.APIError);
    assert.equal((err.error as { error: { type: string } }).error.type, 'overloaded_error');
    return true;
  });
  const openaiStream = openai.chat.completions.stream({
    model: 'gpt-x',
    messages: [{ role: 'user', content: '[[fake:stream-error=500]]' }],
  });
  await assert.rejects(openaiStream.finalChatCompletion(), OpenAI.APIError);
});

test('drip and slow-headers delay but do not change the reply', async () => {
  fake.reset();
  const message = await anthropic.messages
    .stream({
      model: 'claude-x',
      max_tokens: 5,
      messages: [{ role: 'user', content: '[[fake:drip=2;slow-headers=5;text=slow but whole]]' }],
    })
    .finalMessage();
  assert.deepEqual(message.content, [{ type: 'text', text: 'slow but whole' }]);
  const completion = await openai.chat.completions.create({
    model: 'm',
    messages: [{ role: 'user', content: '[[fake:drip=2;text=dripped json]]' }],
  });
  assert.equal(completion.choices[0].message.content, 'dripped json');
});

test('an unknown directive is a 400 naming it', async () => {
  fake.reset();
  await assert.rejects(
    anthropic.messages.create({
      model: 'm',
      max_tokens: 5,
      messages: [{ role: 'user', content: '[[fake:explode]]' }],
    }),
    (err) => err instanceof Anthropic.BadRequestError && /unknown directive 'explode'/.test(err.message),
  );
});

test('in-process: the app handed over as fetch answers, hangs and resets', async (t) => {
  const local: FakeProvider = createFakeProvider();
  t.after(() => local.shutdown());
  const client = new Anthropic({
    apiKey: 'k',
    baseURL: 'http://fake.invalid',
    fetch: local.fetch,
    maxRetries: 0,
  });
  const body = (content: string) => ({
    model: 'm',
    max_tokens: 5,
    messages: [{ role: 'user' as const, content }],
  });
  const message = await client.messages.stream(body('[[fake:text=in process]]')).finalMessage();
  assert.equal(message.content[0].type === 'text' && message.content[0].text, 'in process');
  await assert.rejects(client.messages.create(body('[[fake:reset-after=0]]')), Anthropic.APIConnectionError);
  await assert.rejects(client.messages.stream(body('[[fake:reset-after=2]]')).finalMessage());
  const controller = new AbortController();
  const hung = client.messages.create(body('[[fake:hang]]'), { signal: controller.signal });
  await until(() => local.requests.length === 4);
  controller.abort();
  await assert.rejects(hung, Anthropic.APIUserAbortError);
});

// --- internal ---

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await delay(5);
}

test('openai spend-limit is a 429 told apart from a rate limit only by type and code insufficient_quota', async () => {
  fake.reset();
  const call = openai.chat.completions.create({
    model: 'gpt-x',
    messages: [{ role: 'user', content: '[[fake:spend-limit]]' }],
  });
  await assert.rejects(call, (err) => {
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.status, 429);
    assert.equal(err.type, 'insufficient_quota');
    assert.equal(err.code, 'insufficient_quota');
    return true;
  });
});

test('anthropic spend-limit is a 402 billing_error', async () => {
  fake.reset();
  const call = anthropic.messages.create({
    model: 'claude-x',
    max_tokens: 5,
    messages: [{ role: 'user', content: '[[fake:spend-limit]]' }],
  });
  await assert.rejects(call, (err) => {
    assert.ok(err instanceof Anthropic.APIError);
    assert.equal(err.status, 402);
    assert.equal((err.error as { error: { type: string } }).error.type, 'billing_error');
    return true;
  });
});

/**
 * Requests the gateway refuses before any upstream call (DECISIONS §4): bodies that are not JSON or miss a
 * field (400 naming it), bodies over the size limit (413), models no adapter can serve (503 with
 * `details.tried`); GET /v1/models and GET /v1/models/{model} in both shapes narrowed to what the key may use; and provider
 * paths that ignore query strings (the Anthropic SDK's beta client sends `/v1/messages?beta=true`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

const MAX_BODY_BYTES = 2048;

type Shape = 'anthropic' | 'openai';

function post(
  url: string,
  token: string,
  shape: Shape,
  body: RequestInit['body'],
  extra: RequestInit = {},
  query = '',
): Promise<Response> {
  const headers: Record<string, string> =
    shape === 'anthropic'
      ? { 'x-api-key': token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }
      : { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const path = shape === 'anthropic' ? '/v1/messages' : '/v1/chat/completions';
  return fetch(`${url}${path}${query}`, { method: 'POST', headers, body, ...extra });
}

/** The `error` object of a body in the path's own shape (DECISIONS §4). */
async function errorOf(res: Response, shape: Shape): Promise<Record<string, unknown>> {
  const body = (await res.json()) as Record<string, unknown>;
  if (shape === 'anthropic') assert.equal(body.type, 'error', JSON.stringify(body));
  const error = body.error as Record<string, unknown>;
  assert.equal(typeof error.message, 'string');
  assert.equal(typeof error.type, 'string');
  if (shape === 'openai') assert.equal(error.param, null);
  return error;
}

test('requests refused before the upstream get their error in the path shape', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack({
    providers: ['openai'], // the global default (an Anthropic model) cannot be served either
    env: { SVC_GATEWAY_MAX_BODY_BYTES: String(MAX_BODY_BYTES) },
  });
  t.after(() => stack.stop());
  const { fake, gw, token } = stack;
  t.beforeEach(() => fake.reset());

  const user = [{ role: 'user', content: 'hi' }];
  const cases: Array<{
    name: string;
    body: () => RequestInit['body'];
    extra?: RequestInit;
    status: number;
    code: string;
    names?: string;
    /** The whole message, where it is the product's words rather than valibot's ("Invalid key: Expected …"). */
    message?: string;
  }> = [
    {
      name: 'a body that is not JSON is 400 invalid_request naming body',
      body: () => '{"model": "anthropic:claude-haiku-4-5",',
      status: 400,
      code: 'invalid_request',
      names: 'body',
    },
    {
      // an array passed the shape schemas as an object without fields: it was refused for a missing model
      name: 'a JSON array body is 400 invalid_request naming body',
      body: () => JSON.stringify([{ model: 'anthropic:claude-haiku-4-5', max_tokens: 16, messages: user }]),
      status: 400,
      code: 'invalid_request',
      names: 'body',
    },
    {
      // bytes that are not UTF-8 were decoded to U+FFFD in silence, so the prompt routed and forwarded was
      // not the one sent
      name: 'a body that is not UTF-8 is 400 invalid_request naming body',
      body: () =>
        Buffer.concat([
          Buffer.from(
            '{"model":"anthropic:claude-haiku-4-5","max_tokens":16,"messages":[{"role":"user","content":"h',
          ),
          Buffer.from([0xff, 0xc3]),
          Buffer.from('i"}]}'),
        ]),
      status: 400,
      code: 'invalid_request',
      message: 'body: the request body is not valid UTF-8, which JSON must be',
    },
    {
      name: 'a body without messages is 400 invalid_request naming messages',
      body: () => JSON.stringify({ model: 'anthropic:claude-haiku-4-5', max_tokens: 16 }),
      status: 400,
      code: 'invalid_request',
      names: 'messages',
      message: 'messages: is required',
    },
    {
      name: 'a body without model is 400 invalid_request saying model is required',
      body: () => JSON.stringify({ max_tokens: 16, messages: user }),
      status: 400,
      code: 'invalid_request',
      message: 'model: is required',
    },
    {
      name: 'a field of the wrong type is 400 invalid_request saying what it must be',
      body: () => JSON.stringify({ model: 'anthropic:claude-haiku-4-5', max_tokens: '16', messages: user }),
      status: 400,
      code: 'invalid_request',
      message: 'max_tokens: must be a number, not "16"',
    },
    {
      // README (svc routing explain): a blank model is refused as the gateway refuses it; a name of spaces
      // went to the global default, billed there, where an empty one was a 400
      name: 'a blank model is 400 invalid_request naming model',
      body: () => JSON.stringify({ model: ' \t', max_tokens: 16, messages: user }),
      status: 400,
      code: 'invalid_request',
      names: 'model',
    },
    {
      name: 'a body over SVC_GATEWAY_MAX_BODY_BYTES is 413 request_too_large',
      body: () =>
        JSON.stringify({
          model: 'anthropic:claude-haiku-4-5',
          max_tokens: 16,
          messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY_BYTES) }],
        }),
      status: 413,
      code: 'request_too_large',
    },
    {
      name: 'a chunked body (no content-length) over the limit is 413 request_too_large',
      body: () => {
        const chunk = new TextEncoder().encode(`{"messages":[{"role":"user","content":"${'x'.repeat(1024)}`);
        let sent = 0;
        return new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent++ < 4) controller.enqueue(chunk);
            else controller.close();
          },
        });
      },
      extra: { duplex: 'half' } as RequestInit,
      status: 413,
      code: 'request_too_large',
    },
  ];

  for (const c of cases) {
    for (const shape of ['anthropic', 'openai'] as const) {
      await t.test(`${c.name} (${shape} path)`, async () => {
        const res = await post(gw.url, token, shape, c.body(), c.extra);
        assert.equal(res.status, c.status);
        const error = await errorOf(res, shape);
        assert.equal(error.code, c.code);
        if (c.names) assert.match(String(error.message), new RegExp(`\\b${c.names}\\b`));
        if (c.message) assert.equal(error.message, c.message);
        assert.equal(fake.requests.length, 0, 'no upstream request');
      });
    }
  }

  for (const shape of ['anthropic', 'openai'] as const) {
    await t.test(
      `a model no adapter can serve is 503 routing_failed with details.tried (${shape})`,
      async () => {
        const res = await post(
          gw.url,
          token,
          shape,
          JSON.stringify({ model: 'anthropic:claude-haiku-4-5', max_tokens: 16, messages: user }),
        );
        assert.equal(res.status, 503);
        // issue 13: every 503 says x-should-retry true, with retry-after
        assert.equal(res.headers.get('x-should-retry'), 'true');
        assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
        const error = await errorOf(res, shape);
        assert.equal(error.code, 'routing_failed');
        const tried = (error.details as { tried?: Array<Record<string, unknown>> } | undefined)?.tried;
        assert.ok(Array.isArray(tried) && tried.length > 0, JSON.stringify(error));
        assert.ok(
          tried.some(
            (e) =>
              e.model === 'anthropic:claude-haiku-4-5' && JSON.stringify(e).includes('provider_unavailable'),
          ),
          JSON.stringify(tried),
        );
        assert.equal(fake.requests.length, 0, 'no upstream request');
      },
    );
  }

  await t.test('query strings on the provider paths are ignored for routing', async () => {
    // the Anthropic SDK's beta client posts to /v1/messages?beta=true
    const beta = await stack.anthropic.beta.messages.create({
      model: 'openai:gpt-5-mini',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(beta.type, 'message');
    assert.equal(beta.model, 'openai:gpt-5-mini');
    const chat = await post(
      gw.url,
      token,
      'openai',
      JSON.stringify({ model: 'openai:gpt-5-mini', messages: user }),
      {},
      '?api-version=2024-10-21',
    );
    assert.equal(chat.status, 200, await chat.clone().text());
    assert.equal(((await chat.json()) as { object: string }).object, 'chat.completion');
    assert.equal(fake.requests.length, 2);
    assert.ok(
      fake.requests.every((r) => r.path === '/v1/chat/completions'),
      'no query string upstream',
    );
  });
});

test('GET /v1/models lists only the models the key may use, in the shape asked for', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack({ providers: ['anthropic', 'openrouter'] });
  t.after(() => stack.stop());
  const narrow = await stack.issue([
    '--allow-model',
    'anthropic:claude-haiku-4-5',
    '--allow-model',
    'openai:gpt-5-mini', // allowed, but no OpenAI provider key: not listed
    '--allow-model',
    'openrouter:google/gemini-2.5-flash',
  ]);

  const openaiIds = async (token: string) => {
    const res = await fetch(`${stack.gw.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { object: string; data: Array<Record<string, unknown>> };
    assert.equal(body.object, 'list');
    for (const m of body.data) {
      assert.equal(m.object, 'model');
      assert.equal(typeof m.created, 'number');
      assert.equal(typeof m.owned_by, 'string');
    }
    return body.data.map((m) => String(m.id)).sort();
  };
  const anthropicList = async (token: string) => {
    const res = await fetch(`${stack.gw.url}/v1/models?limit=1000`, {
      headers: { 'x-api-key': token, 'anthropic-version': '2023-06-01' },
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as {
      data: Array<Record<string, unknown>>;
      has_more: boolean;
      first_id: string | null;
      last_id: string | null;
    };
    assert.equal(body.has_more, false);
    assert.equal(body.first_id, body.data[0]?.id ?? null);
    assert.equal(body.last_id, body.data.at(-1)?.id ?? null);
    for (const m of body.data) {
      assert.equal(m.type, 'model');
      assert.equal(typeof m.display_name, 'string');
      assert.ok(!Number.isNaN(Date.parse(String(m.created_at))));
    }
    return body.data.map((m) => String(m.id)).sort();
  };

  await t.test('an unrestricted key sees every model of the providers that have a key', async () => {
    const ids = await openaiIds(stack.token);
    assert.ok(ids.includes('anthropic:claude-haiku-4-5'));
    assert.ok(ids.includes('openrouter:google/gemini-2.5-flash'));
    assert.ok(
      ids.every((id) => id.startsWith('anthropic:') || id.startsWith('openrouter:')),
      ids.join(),
    );
    assert.deepEqual(await anthropicList(stack.token), ids);
  });

  await t.test('a restricted key sees its allowed models that a provider can serve', async () => {
    const expected = ['anthropic:claude-haiku-4-5', 'openrouter:google/gemini-2.5-flash'];
    assert.deepEqual(await openaiIds(narrow.token), expected);
    assert.deepEqual(await anthropicList(narrow.token), expected);
  });

  await t.test('both official SDKs read the list', async () => {
    const fromOpenAI = [];
    for await (const m of stack.openai.models.list()) fromOpenAI.push(m.id);
    const fromAnthropic = [];
    for await (const m of stack.anthropic.models.list()) fromAnthropic.push(m.id);
    assert.deepEqual(fromOpenAI.sort(), await openaiIds(stack.token));
    assert.deepEqual(fromAnthropic.sort(), await openaiIds(stack.token));
    assert.equal(stack.fake.requests.length, 0, 'the list is the gateway own, not the upstream');
  });

  await t.test(
    'the Anthropic list pages as the API does: limit (default 20), after_id, before_id',
    async () => {
      const all = (await stack.anthropic.models.list({ limit: 1000 })).data.map((m) => m.id);
      assert.ok(all.length > 3, all.join());
      const first = await stack.anthropic.models.list();
      assert.equal(first.data.length, Math.min(20, all.length));
      assert.equal(first.has_more, all.length > 20);
      const two = await stack.anthropic.models.list({ limit: 2 });
      assert.deepEqual(
        [two.data.map((m) => m.id), two.has_more, two.first_id, two.last_id],
        [all.slice(0, 2), true, all[0], all[1]],
      );
      const next = await stack.anthropic.models.list({ limit: 2, after_id: all[1] });
      assert.deepEqual(
        next.data.map((m) => m.id),
        all.slice(2, 4),
      );
      const back = await stack.anthropic.models.list({ limit: 5, before_id: all[3] });
      assert.deepEqual([back.data.map((m) => m.id), back.has_more], [all.slice(0, 3), false]);
      const paged = [];
      for await (const m of stack.anthropic.models.list({ limit: 2 })) paged.push(m.id);
      assert.deepEqual(paged, all);
      for (const query of [
        'limit=0',
        'limit=1001',
        'limit=x',
        'after_id=nope',
        `after_id=${all[0]}&before_id=${all[2]}`,
      ]) {
        const res = await fetch(`${stack.gw.url}/v1/models?${query}`, {
          headers: { 'x-api-key': stack.token, 'anthropic-version': '2023-06-01' },
        });
        assert.equal(res.status, 400, query);
        const body = (await res.json()) as { type: string; error: { type: string; message: string } };
        assert.equal(body.type, 'error', query);
        assert.equal(body.error.type, 'invalid_request_error', query);
      }
    },
  );

  await t.test(
    'models.retrieve describes a model the key may use as the list does, by any of its names',
    async () => {
      const listed = (await stack.openai.models.list()).data;
      const entry = (id: string) => listed.find((m) => m.id === id);
      // canonical ids (the SDKs percent-encode the slash; curl sends it as it is), aliases, tiers, bare names
      for (const [name, id] of [
        ['openrouter:meta-llama/llama-3.3-70b-instruct', 'openrouter:meta-llama/llama-3.3-70b-instruct'],
        ['meta-llama/llama-3.3-70b-instruct', 'openrouter:meta-llama/llama-3.3-70b-instruct'],
        ['sonnet', 'anthropic:claude-sonnet-5-5'],
        ['balanced', 'anthropic:claude-sonnet-4-5'],
        ['fast', 'anthropic:claude-haiku-4-5'],
        ['claude-haiku-4-5', 'anthropic:claude-haiku-4-5'],
      ] as const) {
        const m = await stack.openai.models.retrieve(name);
        assert.deepEqual({ ...m }, { ...entry(id) }, name);
      }
      const raw = await fetch(`${stack.gw.url}/v1/models/openrouter:meta-llama/llama-3.3-70b-instruct`, {
        headers: { authorization: `Bearer ${stack.token}` },
      });
      assert.equal(raw.status, 200);
      assert.equal(((await raw.json()) as { id: string }).id, 'openrouter:meta-llama/llama-3.3-70b-instruct');
      // the Anthropic shape: the list's ModelInfo, the long-context window when the beta opens it
      const page = await stack.anthropic.models.list({ limit: 1000 });
      const info = await stack.anthropic.models.retrieve('balanced');
      assert.deepEqual(
        info,
        page.data.find((m) => m.id === 'anthropic:claude-sonnet-4-5'),
      );
      const long = await stack.anthropic.beta.models.retrieve('anthropic:claude-sonnet-4-5', {
        betas: ['context-1m-2025-08-07'],
      });
      assert.equal(long.max_input_tokens, 1_000_000);
      assert.equal(stack.fake.requests.length, 0, 'the description is the gateway own, not the upstream');
    },
  );

  await t.test(
    'models.retrieve of a model the key may not use is 404 model_not_found in each SDK shape',
    async () => {
      const openaiNotFound = (err: unknown) =>
        err instanceof OpenAI.NotFoundError &&
        err.code === 'model_not_found' &&
        err.type === 'invalid_request_error' &&
        err.param === 'model' &&
        err.headers.get('x-should-retry') === 'false';
      const anthropicNotFound = (err: unknown) =>
        err instanceof Anthropic.NotFoundError &&
        err.type === 'not_found_error' &&
        err.headers.get('x-should-retry') === 'false';
      const narrowOpenAI = new OpenAI({ apiKey: narrow.token, baseURL: `${stack.gw.url}/v1`, maxRetries: 0 });
      const narrowAnthropic = new Anthropic({ apiKey: narrow.token, baseURL: stack.gw.url, maxRetries: 0 });
      // unknown; a routing glob's match (gpt-* routes to a GPT model) is no model of that name
      await assert.rejects(stack.openai.models.retrieve('nope'), openaiNotFound);
      await assert.rejects(stack.anthropic.models.retrieve('claude-nope-9'), anthropicNotFound);
      // listed in the registry, but no provider key (OpenAI) or not among the key's allowed_models
      await assert.rejects(stack.openai.models.retrieve('openai:gpt-5-mini'), openaiNotFound);
      await assert.rejects(narrowOpenAI.models.retrieve('sonnet'), openaiNotFound);
      await assert.rejects(narrowAnthropic.models.retrieve('anthropic:claude-sonnet-4-5'), anthropicNotFound);
      assert.equal((await narrowOpenAI.models.retrieve('haiku')).id, 'anthropic:claude-haiku-4-5');
    },
  );

  await t.test(
    'APIs the gateway does not serve are each SDK own NotFoundError, in its error shape',
    async () => {
      // so are the APIs the gateway does not serve: embeddings, files, batches
      for (const call of [
        () => stack.openai.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }),
        () => stack.openai.files.list(),
        () =>
          stack.openai.batches.create({
            input_file_id: 'f',
            endpoint: '/v1/responses',
            completion_window: '24h',
          }),
      ])
        await assert.rejects(
          call(),
          (err) => err instanceof OpenAI.NotFoundError && err.code === 'not_found',
        );
      await assert.rejects(
        stack.anthropic.messages.batches.create({ requests: [] }),
        (err) => err instanceof Anthropic.NotFoundError && err.type === 'not_found_error',
      );
    },
  );

  await t.test('GET /v1/models needs a token', async () => {
    const res = await fetch(`${stack.gw.url}/v1/models`);
    assert.equal(res.status, 401);
  });
});

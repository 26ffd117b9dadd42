/**
 * `GET /v1/models` in the Anthropic shape answers with every field of `ModelInfo` the installed SDK 1.x
 * declares: before, only type, id, display_name and created_at (the gateway's start time, given as each
 * model's release date), so `max_tokens`, `max_input_tokens`, `capabilities`, `lifecycle`, … read as
 * undefined. Values come from the registry or are the API's own "unknown"/"none"; `lifecycle` filters.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { ModelInfo } from '@anthropic-ai/sdk/resources/models';
import { Hono } from 'hono';
import type { GatewayEnv } from '#src/gateway/env.ts';
import type { KeyRecord } from '#src/gateway/keystore/keystore.ts';
import { createModelsHandler, hasActiveLifecycle } from '#src/gateway/models-route.ts';
import { loadModelRegistry } from '#src/models/registry.ts';

/** Every ModelInfo key, checked by tsc against the SDK's type both ways (none missing, none extra). */
const MODEL_INFO_FIELDS: Record<keyof ModelInfo, true> = {
  id: true,
  capabilities: true,
  created_at: true,
  deprecated_at: true,
  display_name: true,
  lifecycle: true,
  line: true,
  max_input_tokens: true,
  max_tokens: true,
  retires_at: true,
  type: true,
};

function client(): Anthropic {
  const app = gatewayApp();
  return new Anthropic({
    apiKey: 'gw_x',
    baseURL: 'http://gateway.test',
    maxRetries: 0,
    fetch: async (url, init) => app.fetch(new Request(url, init)),
  });
}

function gatewayApp(): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.use(async (c, next) => {
    c.set('gatewayKey', { key_id: 'gk_1' } as KeyRecord);
    c.set('shape', 'anthropic');
    await next();
  });
  const registry = loadModelRegistry(undefined);
  app.get(
    '/v1/models',
    createModelsHandler({ registry, availableAdapters: new Set(['anthropic']), createdAt: 1 }),
  );
  return app;
}

test('each listed model has every ModelInfo field, from the registry or the API value for unknown', async () => {
  const page = await client().models.list({ limit: 1000 });
  const sonnet = page.data.find((m) => m.id === 'anthropic:claude-sonnet-4-5');
  assert.ok(sonnet, page.data.map((m) => m.id).join());
  for (const m of page.data) assert.deepEqual(Object.keys(m).sort(), Object.keys(MODEL_INFO_FIELDS).sort());
  assert.deepEqual(sonnet, {
    type: 'model',
    id: 'anthropic:claude-sonnet-4-5',
    display_name: 'anthropic:claude-sonnet-4-5',
    // release dates are not in the registry: the epoch, as the API says of an unknown date
    created_at: '1970-01-01T00:00:00Z',
    max_input_tokens: 200000,
    max_tokens: 64000,
    capabilities: null,
    line: null,
    lifecycle: 'active',
    deprecated_at: null,
    retires_at: null,
  } satisfies ModelInfo);
});

test('the lifecycle filter lists the (active) models only when it asks for active ones', async () => {
  const sdk = client();
  const all = (await sdk.models.list({ limit: 1000 })).data.length;
  assert.ok(all > 0);
  assert.equal(
    (await sdk.models.list({ limit: 1000, lifecycle: ['active', 'deprecated'] })).data.length,
    all,
  );
  const retired = await sdk.models.list({ lifecycle: ['retired'] });
  assert.deepEqual([retired.data, retired.has_more, retired.first_id], [[], false, null]);
  assert.equal(hasActiveLifecycle({ lifecycle: ['deprecated,active'] }), true);
  assert.throws(
    () => hasActiveLifecycle({ 'lifecycle[]': ['gone'] }),
    (err: any) => err.code === 'invalid_request' && err.details.param === 'lifecycle',
  );
});

test('max_input_tokens is the window the request would get: 1M on Sonnet 4 / 4.5 when anthropic-beta opens it', async () => {
  const windows = async (betas?: string[]) =>
    Object.fromEntries(
      (await client().beta.models.list({ limit: 1000, ...(betas ? { betas } : {}) })).data.map((m) => [
        m.id,
        m.max_input_tokens,
      ]),
    );
  const plain = await windows();
  const opened = await windows(['context-1m-2025-08-07']);
  assert.equal(plain['anthropic:claude-sonnet-4-5'], 200000);
  assert.equal(opened['anthropic:claude-sonnet-4-5'], 1000000);
  assert.equal(opened['anthropic:claude-sonnet-4'], 1000000);
  // a model without that window keeps its own
  assert.equal(opened['anthropic:claude-haiku-4-5'], 200000);
  assert.equal((await windows(['interleaved-thinking-2025-05-14']))['anthropic:claude-sonnet-4-5'], 200000);
});

test('served by Node, anthropic-beta is read from the raw header list, never through an undici Headers of every line', async () => {
  // as @hono/node-server hands a request over: c.env.incoming, and c.req.raw.headers built on first touch
  const request = new Request('http://gateway.test/v1/models?limit=1000', {
    headers: { 'anthropic-version': '2023-06-01' },
  });
  Object.defineProperty(request, 'headers', {
    get: () => assert.fail('the handler built the Headers of every request line'),
  });
  const rawHeaders = ['Anthropic-Version', '2023-06-01', 'Anthropic-Beta', 'context-1m-2025-08-07'];
  const res = await gatewayApp().fetch(request, { incoming: { rawHeaders } });
  assert.equal(res.status, 200);
  const { data } = (await res.json()) as { data: ModelInfo[] };
  assert.equal(data.find((m) => m.id === 'anthropic:claude-sonnet-4-5')?.max_input_tokens, 1000000);
});

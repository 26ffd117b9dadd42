/**
 * Request JSON nested deeper than the gateway's limit (256 levels, the body itself is level 1) is refused
 * with 400 invalid_request naming the field, in the path's own shape, before any upstream call: a tool
 * schema or a tool_use input 5,000 objects deep, 100,000 nested arrays, deep nesting in a passthrough
 * field. Nesting at the limit is served, translated or not (issue 17 item 3: such bodies answered 500).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

type Shape = 'anthropic' | 'openai';

const LIMIT = 256;

/** Text of `{"a":{"a":…{}…}}` with `levels` objects (the outermost included). */
function deepObject(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}

/** Text of `[[…[]…]]` with `levels` arrays. */
function deepArray(levels: number): string {
  return `${'['.repeat(levels)}${']'.repeat(levels)}`;
}

function post(url: string, token: string, shape: Shape, body: string): Promise<Response> {
  const headers: Record<string, string> =
    shape === 'anthropic'
      ? { 'x-api-key': token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }
      : { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const path = shape === 'anthropic' ? '/v1/messages' : '/v1/chat/completions';
  return fetch(`${url}${path}`, { method: 'POST', headers, body });
}

/** Bodies whose deep part sits at `field`; `deep` is the JSON text placed there. */
const CASES: Array<{ name: string; shape: Shape; field: string; body: (deep: string) => string }> = [
  {
    name: 'a tool input_schema',
    shape: 'anthropic',
    field: 'tools[0].input_schema',
    body: (deep) =>
      `{"model":"anthropic:claude-haiku-4-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}],` +
      `"tools":[{"name":"t","input_schema":${deep}}]}`,
  },
  {
    name: 'a tool_use input',
    shape: 'anthropic',
    field: 'messages[2].content[0].input',
    body: (deep) =>
      `{"model":"openai:gpt-5-mini","max_tokens":16,"tools":[{"name":"t","input_schema":{"type":"object"}}],` +
      `"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},` +
      `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"t","input":${deep}}]},` +
      `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}]}]}`,
  },
  {
    name: 'a function parameters schema',
    shape: 'openai',
    field: 'tools[0].function.parameters',
    body: (deep) =>
      `{"model":"anthropic:claude-haiku-4-5","messages":[{"role":"user","content":"hi"}],` +
      `"tools":[{"type":"function","function":{"name":"t","parameters":${deep}}}]}`,
  },
  {
    name: 'a passthrough field',
    shape: 'openai',
    field: 'metadata',
    body: (deep) =>
      `{"model":"openai:gpt-5-mini","messages":[{"role":"user","content":"hi"}],"metadata":${deep}}`,
  },
];

test('request JSON nested beyond 256 levels is 400 invalid_request naming the field, never 500', {
  timeout: 120_000,
}, async (t) => {
  const stack = await startGatewayStack({ env: { SVC_GATEWAY_MAX_BODY_BYTES: String(8 * 1024 * 1024) } });
  t.after(() => stack.stop());
  const { fake, gw, token } = stack;
  t.beforeEach(() => fake.reset());

  for (const c of CASES) {
    for (const [what, deep] of [
      ['5,000 objects', deepObject(5_000)],
      ['100,000 arrays', deepArray(100_000)],
    ] as const) {
      await t.test(`${c.name} nested ${what} deep (${c.shape} path)`, async () => {
        const res = await post(gw.url, token, c.shape, c.body(deep));
        const text = await res.text();
        assert.equal(res.status, 400, text);
        const error = (JSON.parse(text) as { error: Record<string, unknown> }).error;
        if (c.shape === 'anthropic') assert.equal(error.type, 'invalid_request_error');
        else assert.equal(error.code, 'invalid_request');
        const message = String(error.message);
        assert.ok(message.startsWith(`${c.field}`), message);
        assert.match(message, /256/);
        assert.ok(message.length < 400, `the message stays short: ${message.length} characters`);
        assert.equal(fake.requests.length, 0, 'no upstream request');
      });
    }
  }

  for (const shape of ['anthropic', 'openai'] as const) {
    await t.test(
      `a body that is itself 100,000 nested arrays is 400 naming body (${shape} path)`,
      async () => {
        const res = await post(gw.url, token, shape, deepArray(100_000));
        const text = await res.text();
        assert.equal(res.status, 400, text);
        assert.match(text, /body\[0\]/);
        assert.equal(fake.requests.length, 0, 'no upstream request');
      },
    );
  }

  for (const c of CASES) {
    // the deep part starts at this level of the body; fill it up to exactly the limit
    const at = c.field.split(/[.[]/).length + 1;
    await t.test(`${c.name} nested exactly to the limit is served (${c.shape} path)`, async () => {
      const res = await post(gw.url, token, c.shape, c.body(deepObject(LIMIT - at + 1)));
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.equal(fake.requests.length, 1);
    });
    await t.test(`${c.name} one level beyond the limit is refused (${c.shape} path)`, async () => {
      const res = await post(gw.url, token, c.shape, c.body(deepObject(LIMIT - at + 2)));
      assert.equal(res.status, 400, await res.text());
      assert.equal(fake.requests.length, 0);
    });
  }
});

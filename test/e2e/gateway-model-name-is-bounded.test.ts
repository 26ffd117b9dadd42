/**
 * The requested `model` is at most 256 characters (issue 17 item 4: an 8 MiB model string was accepted and
 * stored four times in the trace, and logged whole). A longer one is 400 invalid_request naming `model` in
 * the path's own error shape, never sent upstream, never echoed, never stored; 256 characters pass.
 */
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';

type Shape = 'anthropic' | 'openai';

function post(stack: GatewayStack, shape: Shape, model: string): Promise<Response> {
  return fetch(`${stack.gw.url}${shape === 'anthropic' ? '/v1/messages' : '/v1/chat/completions'}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.token}`,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    },
    body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

/** The longest event payload in the store, in characters. */
function longestPayload(stack: GatewayStack): number {
  const db = new DatabaseSync(stack.files.db);
  try {
    const row = db.prepare('SELECT max(length(payload)) AS n FROM events').get() as { n: number | null };
    return row.n ?? 0;
  } finally {
    db.close();
  }
}

test('a model name over 256 characters is refused with 400 naming model and never stored', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());

  for (const shape of ['anthropic', 'openai'] as const) {
    for (const length of [257, 8 * 1024 * 1024]) {
      await t.test(`${shape} path, ${length} characters`, async () => {
        stack.fake.reset();
        const model = `anthropic:${'m'.repeat(length - 'anthropic:'.length)}`;
        const res = await post(stack, shape, model);
        const text = await res.text();
        assert.equal(res.status, 400, text.slice(0, 300));
        assert.ok(text.length < 1024, 'the model is not echoed');
        const body = JSON.parse(text) as { type?: string; error: { code: string; message: string } };
        if (shape === 'anthropic') assert.equal(body.type, 'error');
        assert.equal(body.error.code, 'invalid_request');
        assert.match(body.error.message, /^model: .*256/);
        assert.equal(stack.fake.requests.length, 0, 'no upstream request');
        assert.ok(longestPayload(stack) < 4096, 'no event stores the model');
      });
    }

    await t.test(`${shape} path, 256 characters pass validation`, async () => {
      stack.fake.reset();
      const res = await post(stack, shape, `anthropic:${'m'.repeat(256 - 'anthropic:'.length)}`);
      const text = await res.text();
      assert.notEqual(res.status, 400, text.slice(0, 300));
    });
  }
});

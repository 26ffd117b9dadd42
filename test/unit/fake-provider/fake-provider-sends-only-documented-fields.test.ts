/**
 * The fake provider sends no field the real API never sends: every field path of its answers (text, tool
 * call and thinking replies, with cache usage) occurs in the providers' documented examples
 * (test/fixtures/provider-docs.ts). Issue 13: `citations: null` on Anthropic text blocks broke @ai-sdk/anthropic.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createFakeProvider } from '../../fake-provider/server.ts';
import { ANTHROPIC_COUNT_TOKENS, ANTHROPIC_MESSAGE, fieldPaths } from '../../fixtures/provider-docs.ts';

const TOOLS = [
  { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
];

async function post(path: string, body: unknown): Promise<unknown> {
  const fake = createFakeProvider();
  const res = await fake.fetch(`http://fake${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  return res.json();
}

function undocumented(sent: unknown, documented: unknown): string[] {
  const known = fieldPaths(documented);
  return [...fieldPaths(sent)].filter((path) => !known.has(path));
}

test('an Anthropic message with thinking, text, a tool call and cache usage has only documented fields', async () => {
  const body = await post('/v1/messages', {
    model: 'claude-x',
    max_tokens: 100,
    tools: TOOLS,
    messages: [
      { role: 'user', content: 'hi [[fake:thinking;text=sure;tool_call;usage=cache_read:10,cache_write:2]]' },
    ],
  });
  const paths = fieldPaths(body);
  assert.ok(paths.has('content[text].text') && paths.has('content[tool_use].input'), 'every block kind sent');
  assert.ok(paths.has('content[thinking].signature'));
  assert.deepEqual(undocumented(body, ANTHROPIC_MESSAGE), []);
  assert.equal(paths.has('content[text].citations'), false, 'no citations field on a plain text block');
});

test('an Anthropic token count has only documented fields', async () => {
  const body = await post('/v1/messages/count_tokens', {
    model: 'claude-x',
    messages: [{ role: 'user', content: 'hello' }],
  });
  assert.deepEqual(undocumented(body, ANTHROPIC_COUNT_TOKENS), []);
});

/**
 * The fake provider sends no field the real API never sends: every field path of its answers (text, tool
 * call and thinking replies, with cache usage) occurs in the providers' documented examples
 * (test/fixtures/provider-docs.ts). Issue 13: `citations: null` on Anthropic text blocks broke @ai-sdk/anthropic.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { createFakeProvider } from '../../fake-provider/server.ts';
import {
  ANTHROPIC_COUNT_TOKENS,
  ANTHROPIC_FAST_MESSAGE,
  ANTHROPIC_MESSAGE,
  fieldPaths,
  OPENAI_RESPONSE,
} from '../../fixtures/provider-docs.ts';

const TOOLS = [
  { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
];

async function post(path: string, body: unknown): Promise<unknown> {
  const fake = createFakeProvider();
  const res = await fake.fetch(`http://fake${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'k',
      authorization: 'Bearer k',
      'anthropic-version': '2023-06-01',
    },
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

test('an OpenAI answer on a project whose default tier is priority says priority for a request naming none, auto or null', async () => {
  for (const tier of [undefined, 'auto', null, 'default'] as const) {
    const body = (await post('/v1/chat/completions', {
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi [[fake:priority-tier]]' }],
      ...(tier === undefined ? {} : { service_tier: tier }),
    })) as { service_tier: string };
    assert.equal(body.service_tier, tier === 'default' ? 'default' : 'priority', String(tier));
  }
});

test('an Anthropic answer in fast mode or on Priority Tier says so in documented usage fields', async () => {
  const ask = (extra: Record<string, unknown>) =>
    post('/v1/messages', {
      model: 'claude-x',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi [[fake:priority-tier]]' }],
      ...extra,
    }) as Promise<{ usage: Record<string, unknown> }>;
  // auto, the default, runs on the account's priority capacity; standard_only does not
  const fast = await ask({ speed: 'fast' });
  assert.deepEqual(undocumented(fast, ANTHROPIC_FAST_MESSAGE), []);
  assert.equal(fast.usage.speed, 'fast');
  assert.equal(fast.usage.service_tier, 'priority');
  const standard = await ask({ service_tier: 'standard_only', speed: 'standard' });
  assert.deepEqual(undocumented(standard, ANTHROPIC_FAST_MESSAGE), []);
  assert.equal(standard.usage.speed, 'standard');
  assert.equal(standard.usage.service_tier, 'standard');
});

test('an Anthropic token count has only documented fields', async () => {
  const body = await post('/v1/messages/count_tokens', {
    model: 'claude-x',
    messages: [{ role: 'user', content: 'hello' }],
  });
  assert.deepEqual(undocumented(body, ANTHROPIC_COUNT_TOKENS), []);
});

const FUNCTION_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

test('an OpenAI response with reasoning, text and a function call has only documented fields', async () => {
  const body = await post('/v1/responses', {
    model: 'gpt-x',
    tools: [FUNCTION_TOOL],
    reasoning: { effort: 'low' },
    input: [{ role: 'user', content: 'hi [[fake:text=sure;tool_call]]' }],
  });
  const paths = fieldPaths(body);
  for (const kind of ['reasoning', 'message', 'function_call'])
    assert.ok(
      [...paths].some((p) => p.startsWith(`output[${kind}]`)),
      `${kind} item sent`,
    );
  assert.deepEqual(undocumented(body, OPENAI_RESPONSE), []);
});

test('web search answers (Anthropic server tool blocks and usage, Responses web_search_call items) have only documented fields', async () => {
  const anthropic = await post('/v1/messages', {
    model: 'claude-x',
    max_tokens: 100,
    tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    messages: [{ role: 'user', content: 'news? [[fake:web-search=1;cite]]' }],
  });
  const paths = fieldPaths(anthropic);
  assert.ok(paths.has('content[text].citations[web_search_result_location].url'));
  assert.ok(paths.has('content[web_search_tool_result].content[web_search_result].url'));
  assert.ok(paths.has('usage.server_tool_use.web_search_requests'));
  assert.deepEqual(undocumented(anthropic, ANTHROPIC_MESSAGE), []);
  const openai = await post('/v1/responses', {
    model: 'gpt-x',
    tools: [{ type: 'web_search' }],
    input: 'news? [[fake:web-search=1]]',
  });
  assert.ok(fieldPaths(openai).has('output[web_search_call].action.query'));
  assert.deepEqual(undocumented(openai, OPENAI_RESPONSE), []);
});

test("the fake's Responses stream accumulates, in the OpenAI SDK's helper, to its non-streaming answer", async () => {
  const fake = createFakeProvider();
  const client = new OpenAI({ apiKey: 'k', baseURL: 'http://fake/v1', fetch: fake.fetch, maxRetries: 0 });
  const params = {
    model: 'gpt-x',
    tools: [FUNCTION_TOOL],
    input: 'hi [[fake:text=Checking the weather;tool_call]]',
  };
  const plain = await client.responses.create(params);
  fake.reset();
  const stream = client.responses.stream(params);
  const types: string[] = [];
  for await (const e of stream) types.push(e.type);
  const streamed = await stream.finalResponse();
  // the stream helper adds its own parse results (`parsed`, `parsed_arguments`) to the items
  const own = (items: unknown) =>
    JSON.parse(JSON.stringify(items, (k, v) => (k === 'parsed' || k === 'parsed_arguments' ? undefined : v)));
  assert.deepEqual(own(streamed.output), own(plain.output));
  assert.deepEqual(streamed.usage, plain.usage);
  assert.equal(streamed.output_text, 'Checking the weather');
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.completed');
  assert.ok(types.includes('response.function_call_arguments.delta'));
});

test("the fake's Responses answer cut by the token limit is incomplete, and so is the item it cut, streamed or not", async () => {
  const fake = createFakeProvider();
  const client = new OpenAI({ apiKey: 'k', baseURL: 'http://fake/v1', fetch: fake.fetch, maxRetries: 0 });
  const params = {
    model: 'gpt-x',
    max_output_tokens: 16,
    input: 'hi [[fake:text=Once upon;stop=max_tokens]]',
  };
  const plain = await client.responses.create(params);
  fake.reset();
  const stream = client.responses.stream(params);
  const done: string[] = [];
  for await (const e of stream)
    if (e.type === 'response.output_item.done' && e.item.type === 'message') done.push(e.item.status);
  const streamed = await stream.finalResponse();
  for (const r of [plain, streamed]) {
    assert.equal(r.status, 'incomplete');
    assert.deepEqual(r.incomplete_details, { reason: 'max_output_tokens' });
    assert.deepEqual(
      r.output.map((o) => [o.type, o.type === 'message' ? o.status : undefined]),
      [['message', 'incomplete']],
    );
    assert.equal(r.output_text, 'Once upon');
  }
  assert.deepEqual(done, ['incomplete']);
});

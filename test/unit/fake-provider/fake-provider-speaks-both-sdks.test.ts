import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { CLAUDE_SIGNATURE_PREFIX } from '../../fake-provider/reasoning-seals.ts';
import { fakeSdkClients } from '../../fake-provider/sdk-clients.ts';
import { startFakeProvider } from '../../fake-provider/server.ts';

const fake = await startFakeProvider();
after(() => fake.close());

const { anthropic, openai, openrouter } = fakeSdkClients(fake);

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { enum: ['c', 'f'] } },
    required: ['city', 'days', 'unit'],
  },
};
const WEATHER_FUNCTION = {
  type: 'function' as const,
  function: { name: WEATHER_TOOL.name, parameters: WEATHER_TOOL.input_schema },
};

test('anthropic non-streaming text echoes the model and reports usage with cache fields', async () => {
  fake.reset();
  const message = await anthropic.messages.create({
    model: 'claude-echo-1',
    max_tokens: 64,
    messages: [
      {
        role: 'user',
        content: 'hi [[fake:text=hello world;usage=in:100,out:20,cache_read:30,cache_write:5]]',
      },
    ],
  });
  assert.equal(message.model, 'claude-echo-1');
  assert.match(message.id, /^msg_/);
  assert.deepEqual(message.content, [{ type: 'text', text: 'hello world' }]);
  assert.equal(message.stop_reason, 'end_turn');
  assert.equal(message.usage.input_tokens, 100);
  assert.equal(message.usage.output_tokens, 20);
  assert.equal(message.usage.cache_read_input_tokens, 30);
  assert.equal(message.usage.cache_creation_input_tokens, 5);
  assert.match(message._request_id ?? '', /^req_/);
});

test('anthropic stop_sequence names the matched sequence, streaming and not, as the real API does', async () => {
  fake.reset();
  const ask = { model: 'claude-echo-1', max_tokens: 64, stop_sequences: ['###'] };
  const content = 'count [[fake:text=1 2 3;stop-sequence=###]]';
  const message = await anthropic.messages.create({ ...ask, messages: [{ role: 'user', content }] });
  assert.deepEqual([message.stop_reason, message.stop_sequence], ['stop_sequence', '###']);
  const streamed = await anthropic.messages
    .stream({ ...ask, messages: [{ role: 'user', content }] })
    .finalMessage();
  assert.deepEqual([streamed.stop_reason, streamed.stop_sequence], ['stop_sequence', '###']);
  const plain = await anthropic.messages.create({ ...ask, messages: [{ role: 'user', content: 'hi' }] });
  assert.deepEqual([plain.stop_reason, plain.stop_sequence], ['end_turn', null]);
});

test('anthropic stream helper assembles thinking, text-free tool calls and usage', async () => {
  fake.reset();
  const stream = anthropic.messages.stream({
    model: 'claude-x',
    max_tokens: 4096,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    tools: [WEATHER_TOOL],
    messages: [
      { role: 'user', content: 'weather? [[fake:tool_calls=2;usage=in:7,cache_read:11,cache_write:3]]' },
    ],
  });
  const message = await stream.finalMessage();
  assert.deepEqual(
    message.content.map((block) => block.type),
    ['thinking', 'tool_use', 'tool_use'],
  );
  const [thinking, first, second] = message.content;
  assert.ok(thinking.type === 'thinking' && thinking.thinking.length > 0 && thinking.signature.length > 0);
  assert.ok(first.type === 'tool_use' && second.type === 'tool_use');
  assert.match(first.id, /^toolu_/);
  assert.notEqual(first.id, second.id);
  assert.deepEqual(first.input, { city: 'city-value', days: 1, unit: 'c' });
  assert.equal(message.stop_reason, 'tool_use');
  assert.equal(message.usage.input_tokens, 7);
  assert.equal(message.usage.cache_read_input_tokens, 11);
  assert.equal(message.usage.cache_creation_input_tokens, 3);
  assert.ok(message.usage.output_tokens > 0);
});

test('anthropic stream helper accumulates to the non-streaming answer, stop_details included', async () => {
  const ask = (directives: string) => ({
    model: 'claude-x',
    max_tokens: 4096,
    thinking: { type: 'enabled' as const, budget_tokens: 1024 },
    tools: [WEATHER_TOOL],
    messages: [{ role: 'user' as const, content: `weather? [[fake:${directives}]]` }],
  });
  for (const directives of [
    'thinking;text=sure;tool_call;usage=cache_read:10,cache_write:2',
    'stop=refusal',
  ]) {
    fake.reset();
    const plain = await anthropic.messages.create(ask(directives));
    fake.reset();
    // the SDK's accumulator sets stop_details from message_delta: without it, undefined where create() has it
    const { parsed_output: _, ...streamed } = await anthropic.messages.stream(ask(directives)).finalMessage();
    assert.deepEqual(streamed, plain, directives);
    assert.ok('stop_details' in streamed && streamed.stop_details !== undefined, directives);
  }
  fake.reset();
  const refused = await anthropic.messages.create(ask('stop=refusal'));
  assert.equal(refused.stop_reason, 'refusal');
  assert.equal(refused.stop_details?.type, 'refusal');
});

test('anthropic raw stream sends ping, several input_json_delta fragments and a signature_delta', async () => {
  fake.reset();
  const stream = await anthropic.messages.create({
    model: 'claude-x',
    max_tokens: 4096,
    stream: true,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    tools: [WEATHER_TOOL],
    messages: [{ role: 'user', content: 'go [[fake:tool_call]]' }],
  });
  const types: string[] = [];
  for await (const event of stream) {
    types.push(event.type === 'content_block_delta' ? event.delta.type : event.type);
  }
  assert.equal(types[0], 'message_start');
  assert.ok(types.filter((type) => type === 'input_json_delta').length >= 3);
  assert.ok(types.includes('signature_delta'));
  assert.deepEqual(types.slice(-2), ['message_delta', 'message_stop']);
  // The raw text also carries the ping the SDK skips, where the real API sends it: right after the first
  // content_block_start (wire-formats §1.10).
  const raw = await rawText(
    `${fake.url}/v1/messages`,
    { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    {
      model: 'm',
      max_tokens: 5,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    },
  );
  assert.match(raw, /event: ping\ndata: \{"type":"ping"\}/);
  const names = [...raw.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
  assert.deepEqual(names.slice(0, 3), ['message_start', 'content_block_start', 'ping']);
  assert.equal(names.filter((name) => name === 'ping').length, 1);
  assert.doesNotMatch(raw, /\[DONE\]/);
});

test('thinking display omitted streams a signature-only thinking block', async () => {
  fake.reset();
  const message = await anthropic.messages
    .stream({
      model: 'claude-x',
      max_tokens: 4096,
      thinking: { type: 'adaptive', display: 'omitted' },
      messages: [{ role: 'user', content: 'hi' }],
    })
    .finalMessage();
  const [thinking, text] = message.content;
  assert.ok(thinking.type === 'thinking' && thinking.thinking === '' && thinking.signature.length > 0);
  assert.equal(text.type, 'text');
});

test('the second tool turn reaches the fake: its reply quotes the tool result', async () => {
  fake.reset();
  const first = await anthropic.messages.create({
    model: 'claude-x',
    max_tokens: 64,
    tools: [WEATHER_TOOL],
    tool_choice: { type: 'any' },
    messages: [{ role: 'user', content: 'weather in Oslo?' }],
  });
  const call = first.content.find((block) => block.type === 'tool_use');
  assert.ok(call?.type === 'tool_use');
  const second = await anthropic.messages.create({
    model: 'claude-x',
    max_tokens: 64,
    tools: [WEATHER_TOOL],
    messages: [
      { role: 'user', content: 'weather in Oslo?' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 21 C' }] },
    ],
  });
  assert.deepEqual(second.content, [{ type: 'text', text: 'Tool result received: Sunny, 21 C' }]);
});

test('openai non-streaming tool call carries call_ ids and JSON string arguments', async () => {
  fake.reset();
  const completion = await openai.chat.completions.create({
    model: 'gpt-echo-1',
    tools: [WEATHER_FUNCTION],
    messages: [{ role: 'user', content: 'weather? [[fake:tool_calls=2]]' }],
  });
  assert.equal(completion.model, 'gpt-echo-1');
  assert.match(completion.id, /^chatcmpl-/);
  const choice = completion.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.content, null);
  const calls = choice.message.tool_calls ?? [];
  assert.equal(calls.length, 2);
  for (const call of calls) {
    assert.ok(call.type === 'function');
    assert.match(call.id, /^call_/);
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'city-value', days: 1, unit: 'c' });
  }
});

test('openai stream helper assembles text, tool calls and the include_usage chunk', async () => {
  fake.reset();
  const stream = openai.chat.completions.stream({
    model: 'gpt-x',
    stream_options: { include_usage: true },
    tools: [WEATHER_FUNCTION],
    messages: [
      { role: 'user', content: '[[fake:text=Checking now;tool_call;usage=in:10,out:4,cache_read:90]]' },
    ],
  });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  stream.on('chunk', (chunk) => chunks.push(chunk));
  const completion = await stream.finalChatCompletion();
  const message = completion.choices[0].message;
  assert.equal(message.content, 'Checking now');
  assert.equal(message.tool_calls?.length, 1);
  assert.equal(completion.choices[0].finish_reason, 'tool_calls');
  assert.deepEqual(completion.usage?.prompt_tokens_details?.cached_tokens, 90);
  assert.equal(completion.usage?.prompt_tokens, 100);
  assert.equal(completion.usage?.completion_tokens, 4);
  const last = chunks.at(-1);
  assert.deepEqual(last?.choices, []);
  assert.ok(chunks.slice(0, -1).every((chunk) => chunk.usage === null));
  const fragments = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
  assert.ok(fragments.length >= 3);
  assert.ok(fragments[0].id && fragments[0].function?.name);
  assert.ok(fragments.slice(1).every((f) => f.id === undefined && f.function?.name === undefined));
});

test('openai stream without include_usage has no usage chunk and ends with [DONE]', async () => {
  fake.reset();
  const raw = await rawText(
    `${fake.openaiBaseUrl}/chat/completions`,
    { authorization: 'Bearer k' },
    {
      model: 'gpt-x',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    },
  );
  assert.doesNotMatch(raw, /"usage"/);
  assert.match(raw, /data: \[DONE\]\n\n$/);
  assert.match(raw, /"delta":\{"role":"assistant","content":"","refusal":null\}/);
});

test('openrouter streams reasoning, keep-alive comments and always sends usage', async () => {
  fake.reset();
  const stream = openrouter.chat.completions.stream({
    model: 'anthropic/claude-x',
    messages: [{ role: 'user', content: 'hi [[fake:thinking;usage=in:5,out:6,cost:0.0042]]' }],
  });
  const completion = await stream.finalChatCompletion();
  assert.equal(completion.model, 'anthropic/claude-x');
  assert.match(completion.id, /^gen-/);
  assert.equal(completion.choices[0].message.content, 'Hello from the fake provider.');
  assert.equal((completion.usage as unknown as { cost: number }).cost, 0.0042);
  const raw = await rawText(
    `${fake.openrouterBaseUrl}/chat/completions`,
    { authorization: 'Bearer k' },
    {
      model: 'anthropic/claude-x',
      stream: true,
      reasoning: { effort: 'low' },
      messages: [{ role: 'user', content: 'hi' }],
    },
  );
  assert.match(raw, /^: OPENROUTER PROCESSING\n\n/);
  assert.match(
    raw,
    /"reasoning_details":\[\{"type":"reasoning.text","signature":"EqQB[^"]*","format":"anthropic-claude-v1"/,
  );
  // each detail says which model family wrote it, as OpenRouter's `format` does, and carries its seal
  const gemini = await openrouter.chat.completions.create({
    model: 'google/gemini-x',
    messages: [{ role: 'user', content: 'hi [[fake:thinking]]' }],
  });
  const [detail] = (gemini.choices[0].message as unknown as { reasoning_details: Record<string, unknown>[] })
    .reasoning_details;
  assert.equal(detail.format, 'google-gemini-v1');
  assert.match(String(detail.signature), /^CiQB/);
});

test('image-check says whether an image arrived, in both shapes', async () => {
  fake.reset();
  const png =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
  const message = await anthropic.messages.create({
    model: 'claude-x',
    max_tokens: 64,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          { type: 'text', text: 'what is this? [[fake:image-check]]' },
        ],
      },
    ],
  });
  assert.deepEqual(message.content[0], {
    type: 'text',
    text: 'image-check: 1 image (image/png)',
  });
  const completion = await openai.chat.completions.create({
    model: 'gpt-x',
    messages: [{ role: 'user', content: [{ type: 'text', text: '[[fake:image-check]]' }] }],
  });
  assert.equal(completion.choices[0].message.content, 'image-check: no image');
});

test('every request is recorded with provider, path, headers and parsed body', async () => {
  fake.reset();
  await anthropic.messages.create({ model: 'a', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
  await openai.chat.completions.create({ model: 'b', messages: [{ role: 'user', content: 'y' }] });
  await openrouter.chat.completions.create({ model: 'c/d', messages: [{ role: 'user', content: 'z' }] });
  await openai.models.list();
  assert.deepEqual(
    fake.requests.map((r) => [r.provider, r.method, r.path]),
    [
      ['anthropic', 'POST', '/v1/messages'],
      ['openai', 'POST', '/v1/chat/completions'],
      ['openrouter', 'POST', '/api/v1/chat/completions'],
      ['openai', 'GET', '/v1/models'],
    ],
  );
  const [first, second] = fake.requests;
  assert.equal(first.headers.authorization, 'Bearer sk-ant-test');
  assert.ok(first.headers['anthropic-version']);
  assert.deepEqual((first.body as { messages: unknown }).messages, [{ role: 'user', content: 'x' }]);
  assert.equal((second.body as { model: string }).model, 'b');
  assert.ok(fake.requests.every((r) => typeof r.time === 'number'));
});

test('GET /v1/models answers in the shape of whoever asks', async () => {
  fake.reset();
  const anthropicModels = await anthropic.models.list();
  assert.ok(anthropicModels.data.every((model) => model.type === 'model' && model.id.length > 0));
  const openaiModels = await openai.models.list();
  assert.ok(openaiModels.data.every((model) => model.object === 'model'));
  assert.deepEqual(
    fake.requests.map((r) => r.provider),
    ['anthropic', 'openai'],
  );
});

test('missing keys get each provider’s real 401 body', async () => {
  fake.reset();
  // The SDK refuses to send without credentials, so these go out by hand.
  const anthropicReply = await fetch(`${fake.url}/v1/messages`, {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    body: '{}',
  });
  assert.equal(anthropicReply.status, 401);
  assert.match(anthropicReply.headers.get('request-id') ?? '', /^req_/);
  const anthropicBody = (await anthropicReply.json()) as { type: string; error: unknown };
  assert.equal(anthropicBody.type, 'error');
  assert.deepEqual(anthropicBody.error, {
    type: 'authentication_error',
    message: 'x-api-key header is required',
  });
  const response = await fetch(`${fake.openaiBaseUrl}/chat/completions`, { method: 'POST', body: '{}' });
  assert.equal(response.status, 401);
  const body = (await response.json()) as { error: Record<string, unknown> };
  assert.equal(body.error.type, 'invalid_request_error');
  assert.equal(body.error.code, null);
});

// --- internal ---

async function rawText(url: string, headers: Record<string, string>, body: unknown): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.text();
}

test('anthropic refuses, as the API does, the bodies that bite translators (wire-formats §1.4–1.6)', async () => {
  const user = (content: unknown) => ({ role: 'user' as const, content });
  const call = { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } };
  const result = { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' };
  const thinking = { type: 'thinking', thinking: 'hm', signature: `${CLAUDE_SIGNATURE_PREFIX}sig` };
  const loop = (assistant: unknown[]) => [
    user('q'),
    { role: 'assistant', content: assistant },
    user([result]),
  ];
  const on = { type: 'enabled', budget_tokens: 1024 };
  const refused: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an empty text block', { messages: [user([{ type: 'text', text: '' }])] }, /must be non-empty/],
    ['an empty system block', { system: [{ type: 'text', text: '' }], messages: [user('q')] }, /non-empty/],
    [
      'a tool_use answered by no tool_result',
      { messages: [user('q'), { role: 'assistant', content: [call] }, user('and?')] },
      /without `tool_result` blocks immediately after: toolu_1/,
    ],
    ['a tool_result with no tool_use before it', { messages: [user([result])] }, /unexpected `tool_use_id`/],
    [
      'a tool_use id outside the pattern',
      { messages: loop([{ ...call, id: 'functions.Bash:0' }]).slice(0, 2) },
      /tool_use\.id: String should match pattern/,
    ],
    [
      'a tool name outside the pattern',
      { tools: [{ ...WEATHER_TOOL, name: 'get weather' }], messages: [user('q')] },
      /name: String should match pattern/,
    ],
    [
      'a thinking budget under 1024',
      { thinking: { type: 'enabled', budget_tokens: 500 }, messages: [user('q')] },
      /1024/,
    ],
    [
      'a thinking budget not under max_tokens',
      { max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [user('q')] },
      /`max_tokens` must be greater than `thinking.budget_tokens`/,
    ],
    [
      'thinking with a forced tool',
      { thinking: on, tools: [WEATHER_TOOL], tool_choice: { type: 'any' }, messages: [user('q')] },
      /forces tool use/,
    ],
    [
      'thinking with temperature 0.5',
      { thinking: on, temperature: 0.5, messages: [user('q')] },
      /temperature/,
    ],
    [
      'a thinking block whose signature Claude did not issue (another model family wrote it)',
      {
        messages: [
          user('q'),
          { role: 'assistant', content: [{ ...thinking, signature: 'CiQBgemini' }] },
          user('go on'),
        ],
      },
      /messages\.1\.content\.0: Invalid `signature` in `thinking` block/,
    ],
    [
      'thinking in a tool loop whose assistant turn lost its thinking block',
      { thinking: on, tools: [WEATHER_TOOL], messages: loop([call]) },
      /Expected `thinking` or `redacted_thinking`, but found `tool_use`/,
    ],
  ];
  for (const [what, body, message] of refused) {
    await assert.rejects(
      anthropic.messages.create({ model: 'claude-x', max_tokens: 4096, ...body } as never),
      (err) => err instanceof Anthropic.BadRequestError && message.test(err.message),
      what,
    );
  }
  // the same loop with its thinking block replayed first is served
  const served = await anthropic.messages.create({
    model: 'claude-x',
    max_tokens: 4096,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    tools: [WEATHER_TOOL],
    messages: loop([thinking, call]) as never,
  });
  assert.equal(served.stop_reason, 'end_turn');
});

test('openai refuses, as the API does, tool messages out of order, images in tool results and over 4 stop sequences', async () => {
  const call = {
    id: 'call_1',
    type: 'function' as const,
    function: { name: 'get_weather', arguments: '{}' },
  };
  const assistant = { role: 'assistant' as const, content: null, tool_calls: [call] };
  const answer = { role: 'tool' as const, tool_call_id: 'call_1', content: 'Sunny' };
  const refused: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      'user text between the call and its result (wire-formats §6 #16)',
      { messages: [{ role: 'user', content: 'q' }, assistant, { role: 'user', content: 'x' }, answer] },
      /must be followed by tool messages responding to each 'tool_call_id'.*call_1/,
    ],
    [
      'a tool message answering no call',
      { messages: [{ role: 'user', content: 'q' }, answer] },
      /messages with role 'tool' must be a response to a preceeding message with 'tool_calls'/,
    ],
    [
      'an image in a tool message',
      {
        messages: [
          { role: 'user', content: 'q' },
          assistant,
          { ...answer, content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] },
        ],
      },
      /Image URLs are only allowed for messages with role 'user'/,
    ],
    [
      'five stop sequences',
      { stop: ['a', 'b', 'c', 'd', 'e'], messages: [{ role: 'user', content: 'q' }] },
      /stop/,
    ],
  ];
  for (const [what, body, message] of refused) {
    await assert.rejects(
      openai.chat.completions.create({ model: 'gpt-x', ...body } as never),
      (err) => err instanceof OpenAI.BadRequestError && message.test(err.message),
      what,
    );
  }
  const served = await openai.chat.completions.create({
    model: 'gpt-x',
    messages: [{ role: 'user', content: 'q' }, assistant, answer],
  });
  assert.equal(served.choices[0].message.content, 'Tool result received: Sunny');
});

test('openai refuses, as the API does, what a model of its kind does not take (reasoning or not)', async () => {
  const messages = [{ role: 'user' as const, content: 'q' }];
  const refused: Array<[string, Record<string, unknown>, RegExp]> = [
    ['gpt-4.1', { reasoning_effort: 'low' }, /Unrecognized request argument supplied: reasoning_effort/],
    ['gpt-5-chat-latest', { reasoning_effort: 'low' }, /reasoning_effort/],
    ['gpt-5-mini', { max_tokens: 10 }, /'max_tokens' is not supported.*max_completion_tokens/],
    ['gpt-5', { stop: ['END'] }, /'stop' is not supported with this model/],
    ['o3', { temperature: 0 }, /'temperature' does not support 0 with this model/],
    ['gpt-5-nano', { top_p: 0.5 }, /'top_p' does not support 0.5/],
    ['gpt-5', { reasoning_effort: 'none' }, /does not support 'none'/],
    ['gpt-5-pro', { reasoning_effort: 'low' }, /Supported values are: 'high'/],
    ['gpt-5.1-chat-latest', { reasoning_effort: 'high' }, /Supported values are: 'medium'/],
  ];
  for (const [model, fields, message] of refused) {
    await assert.rejects(
      openai.chat.completions.create({ model, messages, ...fields } as never),
      (err) => err instanceof OpenAI.BadRequestError && message.test(err.message),
      `${model} ${JSON.stringify(fields)}`,
    );
  }
  // what each takes is served
  for (const [model, fields] of [
    ['gpt-5-chat-latest', { temperature: 0, stop: ['END'], max_tokens: 10 }],
    ['gpt-5', { temperature: 1, reasoning_effort: 'minimal', max_completion_tokens: 10 }],
    ['gpt-4o', { temperature: 0.2, stop: ['END'] }],
  ] as const)
    await openai.chat.completions.create({ model, messages, ...fields } as never);
});

test('the Responses API refuses, as OpenAI does, reasoning on a model that does not reason and sampling on one that does', async () => {
  const refused: Array<[string, Record<string, unknown>, RegExp]> = [
    ['gpt-4.1', { reasoning: { effort: 'low' } }, /'reasoning.effort' is not supported with this model/],
    ['gpt-5-mini', { temperature: 0.2 }, /'temperature' is not supported with this model/],
    ['gpt-5', { top_p: 0.5 }, /'top_p' is not supported with this model/],
    ['o4-mini', { reasoning: { effort: 'minimal' } }, /Supported values are: 'low', 'medium', 'high'/],
  ];
  for (const [model, fields, message] of refused) {
    await assert.rejects(
      openai.responses.create({ model, input: 'q', ...fields } as never),
      (err) => err instanceof OpenAI.BadRequestError && message.test(err.message),
      `${model} ${JSON.stringify(fields)}`,
    );
  }
  await openai.responses.create({ model: 'gpt-4.1', input: 'q', temperature: 0 });
  await openai.responses.create({ model: 'gpt-5', input: 'q', reasoning: { effort: 'minimal' } });
});

test('anthropic refuses, as the API does, an empty or whitespace-only stop sequence', async () => {
  const messages = [{ role: 'user' as const, content: 'q' }];
  for (const [stop, message] of [
    [['\n'], /each stop sequence must contain non-whitespace/],
    [['END', ''], /each stop sequence must be non-empty/],
  ] as const)
    await assert.rejects(
      anthropic.messages.create({ model: 'claude-x', max_tokens: 9, messages, stop_sequences: [...stop] }),
      (err) => err instanceof Anthropic.BadRequestError && message.test(err.message),
    );
  await anthropic.messages.create({ model: 'claude-x', max_tokens: 9, messages, stop_sequences: ['\nEND'] });
});

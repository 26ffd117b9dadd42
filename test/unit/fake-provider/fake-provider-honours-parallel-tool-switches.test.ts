/**
 * The fake provider honours the switches the real APIs honour (wire-formats §1.5, §2.4): parallel tool calls
 * turned off give one call at most, and Anthropic's forced tool choice prefills the turn, so no text precedes
 * the call.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type OpenAI from 'openai';
import { fakeSdkClients } from '../../fake-provider/sdk-clients.ts';
import { startFakeProvider } from '../../fake-provider/server.ts';

const fake = await startFakeProvider();
after(() => fake.close());

const { anthropic, openai } = fakeSdkClients(fake);

const schema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };
const TOOLS = [
  { name: 'get_weather', input_schema: schema },
  { name: 'get_time', input_schema: schema },
];
const FUNCTIONS = TOOLS.map((t) => ({
  type: 'function' as const,
  function: { name: t.name, parameters: t.input_schema },
}));
const RESPONSES_TOOLS = TOOLS.map((t) => ({
  type: 'function' as const,
  name: t.name,
  parameters: t.input_schema,
  strict: false,
}));

test('Anthropic: disable_parallel_tool_use gives one tool_use, streaming and not', async () => {
  for (const type of ['auto', 'any'] as const) {
    const body = {
      model: 'claude-x',
      max_tokens: 64,
      tools: TOOLS,
      messages: [{ role: 'user' as const, content: 'weather? [[fake:tool_calls=2]]' }],
    };
    const parallel = await anthropic.messages.create({ ...body, tool_choice: { type } });
    assert.equal(parallel.content.filter((b) => b.type === 'tool_use').length, 2, type);
    const single = await anthropic.messages.create({
      ...body,
      tool_choice: { type, disable_parallel_tool_use: true },
    });
    assert.deepEqual(
      single.content.map((b) => b.type),
      ['tool_use'],
      type,
    );
    const streamed = await anthropic.messages
      .stream({ ...body, tool_choice: { type, disable_parallel_tool_use: true } })
      .finalMessage();
    assert.deepEqual(
      streamed.content.map((b) => b.type),
      ['tool_use'],
      type,
    );
    assert.equal(streamed.stop_reason, 'tool_use');
  }
});

test('Anthropic: no text precedes a forced tool call, while auto may say something first', async () => {
  const body = {
    model: 'claude-x',
    max_tokens: 64,
    tools: TOOLS,
    messages: [{ role: 'user' as const, content: 'weather? [[fake:text=Checking;tool_call]]' }],
  };
  const auto = await anthropic.messages.create({ ...body, tool_choice: { type: 'auto' } });
  assert.deepEqual(
    auto.content.map((b) => b.type),
    ['text', 'tool_use'],
  );
  for (const tool_choice of [{ type: 'any' as const }, { type: 'tool' as const, name: 'get_time' }]) {
    const forced = await anthropic.messages.create({ ...body, tool_choice });
    assert.deepEqual(
      forced.content.map((b) => b.type),
      ['tool_use'],
      tool_choice.type,
    );
  }
});

test('OpenAI Chat: parallel_tool_calls false gives one tool call, streaming and not', async () => {
  const body = {
    model: 'gpt-x',
    tools: FUNCTIONS,
    messages: [{ role: 'user' as const, content: 'weather? [[fake:tool_calls=2]]' }],
  };
  const parallel = await openai.chat.completions.create(body);
  assert.equal(parallel.choices[0].message.tool_calls?.length, 2);
  const single = await openai.chat.completions.create({ ...body, parallel_tool_calls: false });
  assert.equal(single.choices[0].message.tool_calls?.length, 1);
  const streamed = await openai.chat.completions
    .stream({ ...body, parallel_tool_calls: false })
    .finalChatCompletion();
  assert.equal(streamed.choices[0].message.tool_calls?.length, 1);
  assert.equal(streamed.choices[0].finish_reason, 'tool_calls');
});

test('OpenAI Responses: parallel_tool_calls false gives one function_call, streaming and not', async () => {
  const body = { model: 'gpt-x', tools: RESPONSES_TOOLS, input: 'weather? [[fake:tool_calls=2]]' };
  const calls = (r: OpenAI.Responses.Response) => r.output.filter((i) => i.type === 'function_call').length;
  assert.equal(calls(await openai.responses.create(body)), 2);
  const single = await openai.responses.create({ ...body, parallel_tool_calls: false });
  assert.equal(calls(single), 1);
  assert.equal(single.parallel_tool_calls, false, 'the answer echoes the switch');
  const streamed = await openai.responses.stream({ ...body, parallel_tool_calls: false }).finalResponse();
  assert.equal(calls(streamed), 1);
});

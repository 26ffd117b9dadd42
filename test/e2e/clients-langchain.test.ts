/**
 * LangChain against the gateway (issue 13): ChatOpenAI on Chat Completions and on the Responses API
 * (`useResponsesApi: true`), and ChatAnthropic, each as its docs configure a custom endpoint. Each: text,
 * streaming, a tool round trip (bindTools, the call run by the test, a ToolMessage back), structured output
 * (withStructuredOutput) and a cross-shape call (its wire talking to the other vendor's model); ChatOpenAI's
 * JSON mode.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { type AIMessage, type AIMessageChunk, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

const WEATHER = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** ChatAnthropic asks for it by a forced tool, whose input the fake builds from the schema ("city-value"). */
const PLACE = {
  type: 'object',
  title: 'Place',
  description: 'A place',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};

test('LangChain ChatOpenAI (both APIs) and ChatAnthropic', { timeout: 60_000 }, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const { fake, gw, token } = stack;
  t.beforeEach(() => fake.reset());

  const openai = (model: string, useResponsesApi: boolean) =>
    new ChatOpenAI({
      model,
      apiKey: token,
      configuration: { baseURL: `${gw.url}/v1` },
      useResponsesApi,
      maxRetries: 0,
    });
  const claude = (model: string) =>
    new ChatAnthropic({ model, apiKey: token, anthropicApiUrl: gw.url, maxRetries: 0, maxTokens: 256 });

  const cases: Array<{ name: string; model: BaseChatModel; path: string; shape: string }> = [
    {
      name: 'ChatOpenAI',
      model: openai('openai:gpt-5-mini', false),
      path: '/v1/chat/completions',
      shape: 'openai',
    },
    {
      name: 'ChatOpenAI on a Claude model',
      model: openai('haiku', false),
      path: '/v1/messages',
      shape: 'openai',
    },
    {
      name: 'ChatOpenAI useResponsesApi',
      model: openai('openai:gpt-5-mini', true),
      path: '/v1/responses',
      shape: 'openai_responses',
    },
    {
      name: 'ChatOpenAI useResponsesApi on a Claude model',
      model: openai('haiku', true),
      path: '/v1/messages',
      shape: 'openai_responses',
    },
    { name: 'ChatAnthropic', model: claude('claude-haiku-4-5'), path: '/v1/messages', shape: 'anthropic' },
    {
      name: 'ChatAnthropic on a GPT model',
      model: claude('openai:gpt-5-mini'),
      path: '/v1/chat/completions',
      shape: 'anthropic',
    },
  ];

  for (const c of cases) {
    await t.test(`${c.name}: text, stream and a tool round trip`, async () => {
      const reply = await c.model.invoke('hello');
      assert.equal(reply.text, 'Hello from the fake provider.');
      assert.equal(fake.requests.at(-1)?.path, c.path);

      let streamed = '';
      for await (const chunk of await c.model.stream('hi [[fake:text=streamed reply]]'))
        streamed += chunk.text;
      assert.equal(streamed, 'streamed reply');

      const withTools = c.model.bindTools!([WEATHER]);
      const ask = new HumanMessage('weather? [[fake:tool_call]]');
      const call = (await withTools.invoke([ask])) as AIMessage;
      const tc = call.tool_calls?.[0];
      assert.equal(tc?.name, 'get_weather');
      assert.deepEqual(tc?.args, { city: 'city-value' });
      const answer = await withTools.invoke([
        ask,
        call,
        new ToolMessage({ tool_call_id: tc!.id!, content: 'Sunny, 21 C' }),
      ]);
      assert.equal(answer.text, 'Tool result received: Sunny, 21 C');

      // withStructuredOutput: a JSON schema (ChatOpenAI) or a forced tool (ChatAnthropic) on any model
      const place = await c.model.withStructuredOutput(PLACE).invoke('where? [[fake:text={"city":"Oslo"}]]');
      assert.deepEqual(place, { city: c.name.startsWith('ChatAnthropic') ? 'city-value' : 'Oslo' });
      // both structured-output methods with a zod schema, and a tool call streamed in chunks
      const Place = z.object({ city: z.string(), population: z.number().int() });
      for (const method of ['functionCalling', 'jsonSchema'] as const) {
        const got = await c.model.withStructuredOutput(Place, { method }).invoke('where?');
        assert.deepEqual(got, { city: 'city-value', population: 1 }, method);
      }
      let streamedCall: AIMessageChunk | undefined;
      for await (const chunk of await withTools.stream([ask]))
        streamedCall = streamedCall ? streamedCall.concat(chunk) : chunk;
      assert.ok((streamedCall?.tool_call_chunks?.length ?? 0) > 0);
      assert.deepEqual(streamedCall?.tool_calls?.[0]?.args, { city: 'city-value' });
      assert.ok((streamedCall?.usage_metadata?.output_tokens ?? 0) > 0);
      const turns = readEvents(stack.files.db, 'turn.completed').slice(-8);
      assert.ok(turns.every((e) => e.payload.inbound_shape === c.shape && e.payload.status === 200));
    });
  }

  await t.test(
    "ChatOpenAI JSON mode (both APIs): a JSON object, and OpenAI's 400 when no message says json",
    async () => {
      for (const responsesApi of [false, true]) {
        const jsonMode = openai('openai:gpt-5-mini', responsesApi).withStructuredOutput(PLACE, {
          method: 'jsonMode',
        });
        // OpenAI's JSON mode answers a JSON object whatever the model says (the fake's unscripted one is {})
        assert.deepEqual(await jsonMode.invoke('where? Answer in JSON.'), {});
        await assert.rejects(jsonMode.invoke('where?'), /400 .*must contain the word 'json' in some form/);
      }
    },
  );

  await t.test('ChatOpenAI image blocks: which reach the model on each API', async () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const blocks = {
      imageUrl: { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      sourceType: { type: 'image', source_type: 'base64', mime_type: 'image/png', data: png },
      v1: { type: 'image', mimeType: 'image/png', data: png },
    };
    const ask = (block: object) =>
      new HumanMessage({
        content: [{ type: 'text', text: 'what is it? [[fake:image-check]]' }, block] as never,
      });
    const seen = 'image-check: 1 image (image/png)';
    for (const model of ['openai:gpt-5-mini', 'haiku']) {
      const chat = openai(model, false);
      const responses = openai(model, true);
      assert.equal((await chat.invoke([ask(blocks.imageUrl)])).text, seen, model);
      assert.equal((await responses.invoke([ask(blocks.imageUrl)])).text, seen, model);
      assert.equal((await chat.invoke([ask(blocks.sourceType)])).text, seen, model);
      // sent as a Chat Completions part on the Responses API, and a v1 block as is on Chat Completions:
      // OpenAI refuses both, and so does the gateway on a Claude model
      await assert.rejects(responses.invoke([ask(blocks.sourceType)]), /image_url/, model);
      await assert.rejects(chat.invoke([ask(blocks.v1)]), /type image|'image'/, model);
      // LangChain leaves a v1 block out of a Responses request
      assert.equal((await responses.invoke([ask(blocks.v1)])).text, 'image-check: no image', model);
    }
  });
});

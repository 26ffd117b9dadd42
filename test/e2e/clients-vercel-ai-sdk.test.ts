/**
 * The Vercel AI SDK (ai 7) against the gateway, as its docs configure it (issue 13): `openai(model)` (the
 * Responses API), `openai.chat(model)` (Chat Completions) and `@ai-sdk/anthropic` (Messages; its base URL
 * ends in `/v1`). Each provider: text, streaming, a tool round trip the SDK drives itself (two steps, also
 * streamed), structured output (`Output.object`), and a cross-shape call (its wire talking to the other
 * vendor's model). Before issue 13 `openai(model)` was a
 * 404.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import {
  generateObject,
  generateText,
  jsonSchema,
  type LanguageModel,
  Output,
  stepCountIs,
  streamObject,
  streamText,
  tool,
} from 'ai';
import { z } from 'zod';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { PNG_BASE64 } from '../helpers/sdk-matrix.ts';

test('the Vercel AI SDK: Responses, Chat Completions and Anthropic providers', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const { fake, gw, token } = stack;
  const openai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: token });
  const anthropic = createAnthropic({ baseURL: `${gw.url}/v1`, apiKey: token });
  t.beforeEach(() => fake.reset());

  const weather = tool({
    description: 'Weather for a city',
    inputSchema: jsonSchema<{ city: string }>({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    }),
    execute: async ({ city }) => `Sunny in ${city}`,
  });

  const CITY = jsonSchema<{ city: string }>({
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  });

  const cases: Array<{ name: string; model: LanguageModel; path: string; shape: string }> = [
    {
      name: 'openai(model), Responses',
      model: openai('openai:gpt-5-mini'),
      path: '/v1/responses',
      shape: 'openai_responses',
    },
    {
      name: 'openai(model) on a Claude model',
      model: openai('haiku'),
      path: '/v1/messages',
      shape: 'openai_responses',
    },
    {
      name: 'openai.chat(model)',
      model: openai.chat('openai:gpt-5-mini'),
      path: '/v1/chat/completions',
      shape: 'openai',
    },
    {
      name: 'openai.chat(model) on a Claude model',
      model: openai.chat('haiku'),
      path: '/v1/messages',
      shape: 'openai',
    },
    {
      name: '@ai-sdk/anthropic',
      model: anthropic('claude-haiku-4-5'),
      path: '/v1/messages',
      shape: 'anthropic',
    },
    {
      name: '@ai-sdk/anthropic on a GPT model',
      model: anthropic('openai:gpt-5-mini'),
      path: '/v1/chat/completions',
      shape: 'anthropic',
    },
  ];

  await t.test(
    'openai(model) on a Claude model: a conversation the SDK continues by item_reference (its default, store on)',
    async () => {
      const sentToGateway: string[] = [];
      const watched = createOpenAI({
        baseURL: `${gw.url}/v1`,
        apiKey: token,
        fetch: async (url, init) => {
          sentToGateway.push(String(init?.body ?? ''));
          return fetch(url, init);
        },
      });
      const model = watched('haiku');
      const first = await generateText({
        model,
        prompt: 'my name is Ada [[fake:text=Hi Ada]]',
        maxRetries: 0,
      });
      assert.equal(first.text, 'Hi Ada');
      fake.reset();
      const second = await generateText({
        model,
        messages: [
          { role: 'user', content: 'my name is Ada' },
          ...first.response.messages,
          { role: 'user', content: 'what is my name?' },
        ],
        maxRetries: 0,
      });
      assert.equal(second.text, 'Hello from the fake provider.');
      const sent = fake.requests[0]!.body as { messages: Array<{ role: string; content: unknown }> };
      assert.deepEqual(
        sent.messages.map((m) => m.role),
        ['user', 'assistant', 'user'],
      );
      assert.match(JSON.stringify(sent.messages[1]!.content), /Hi Ada/);
      // what the SDK sent for the assistant turn was a reference, resolved by the gateway
      assert.match(sentToGateway.at(-1)!, /"type":"item_reference"/);
      assert.doesNotMatch(sentToGateway.at(-1)!, /Hi Ada/);
      // a tool step after text: the SDK refers to that text by id in its second step
      fake.reset();
      const round = await generateText({
        model,
        prompt: 'weather? [[fake:text=Let me check;tool_call]]',
        tools: { get_weather: weather },
        stopWhen: stepCountIs(2),
        maxRetries: 0,
      });
      assert.equal(round.steps.length, 2);
      assert.equal(round.text, 'Tool result received: Sunny in city-value');
      assert.match(JSON.stringify(fake.requests[1]!.body), /Let me check/);
    },
  );

  await t.test(
    "openai.tools.webSearch() on a Claude model: Claude's own search runs, and the SDK reads its search call, the pages it read and the page cited, streamed or not",
    async () => {
      const ask = {
        model: openai('anthropic:claude-sonnet-4-5'),
        prompt: 'capital of France? [[fake:web-search=1;cite]]',
        tools: { web_search: openai.tools.webSearch({}) },
        maxRetries: 0,
      };
      const whole = await generateText(ask);
      const streamed = streamText(ask);
      for (const r of [whole, { content: await streamed.content, sources: await streamed.sources }]) {
        const kinds = r.content.map((p) =>
          p.type === 'tool-call' || p.type === 'tool-result' ? `${p.type}:${p.toolName}` : p.type,
        );
        assert.deepEqual(kinds.slice(0, 2), ['tool-call:web_search', 'tool-result:web_search']);
        // the pages the search read are its sources (the SDK asks for them), the page cited the text's citation
        assert.deepEqual(
          r.sources.map((x) => x.sourceType === 'url' && x.url),
          ['https://example.com/search/1'],
        );
        assert.match(JSON.stringify(r.content.at(-1)), /"url":"https:\/\/example.com\/paris"/);
      }
      assert.equal(
        (fake.requests[0]!.body as { tools: Array<{ type: string }> }).tools[0]!.type,
        'web_search_20250305',
      );
    },
  );

  await t.test(
    'openai(model) and openai.chat(model) by a gateway name with temperature: a reasoning model gets none, and the answer says so',
    async () => {
      // the SDK leaves temperature and topP out only for the OpenAI names it knows (gpt-5-mini); OpenAI's
      // reasoning models refuse them with a 400
      for (const model of [openai('openai:gpt-5-mini'), openai.chat('openai:gpt-5-mini')]) {
        fake.reset();
        const answer = await generateText({
          model,
          prompt: 'hi',
          temperature: 0.5,
          topP: 0.9,
          maxRetries: 0,
        });
        assert.equal(answer.text, 'Hello from the fake provider.');
        assert.equal(answer.response.headers?.['svc-dropped-params'], 'temperature, top_p');
        const sent = fake.requests[0]!.body as Record<string, unknown>;
        assert.deepEqual([sent.model, sent.temperature, sent.top_p], ['gpt-5-mini', undefined, undefined]);
      }
      // a model that takes sampling gets it as sent
      fake.reset();
      await generateText({
        model: openai.chat('openai:gpt-4.1'),
        prompt: 'hi',
        temperature: 0.5,
        maxRetries: 0,
      });
      assert.equal((fake.requests[0]!.body as { temperature?: number }).temperature, 0.5);
    },
  );

  await t.test(
    'openai.chat(model) on an OpenRouter model: a failure mid-stream reaches the SDK as an error',
    async () => {
      const stream = streamText({
        model: openai.chat('openrouter:google/gemini-2.5-flash'),
        prompt: 'hi [[fake:stream-error=529]]',
        maxRetries: 0,
        onError: () => {},
      });
      const errors: unknown[] = [];
      for await (const part of stream.fullStream) if (part.type === 'error') errors.push(part.error);
      // OpenRouter's error chunk (error beside choices that finished "error") read as an answer that ended
      assert.equal(errors.length, 1, 'one error part');
      assert.match(String((errors[0] as { message?: string }).message), /overloaded/);
      const failed = readEvents(stack.files.db, 'llm.call_failed').at(-1)!;
      assert.equal(failed.payload.error_class, 'overloaded');
    },
  );

  for (const c of cases) {
    await t.test(`${c.name}: text, stream and a tool round trip`, async () => {
      // the provider's cache reads and writes and reasoning tokens reach the SDK's usage in its own terms,
      // whole and streamed, and the trace bills the same call
      const usage = '[[fake:usage=in:100,out:20,cache_read:50,cache_write:10,reasoning:7]]';
      const text = await generateText({
        model: c.model,
        prompt: `hello ${usage}`,
        maxRetries: 0,
        maxOutputTokens: 256,
      });
      assert.equal(text.text, 'Hello from the fake provider.');
      assert.equal(fake.requests.at(-1)?.path, c.path);

      const stream = streamText({
        model: c.model,
        prompt: `hi [[fake:text=streamed reply]] ${usage}`,
        maxRetries: 0,
        maxOutputTokens: 256,
      });
      let streamed = '';
      for await (const piece of stream.textStream) streamed += piece;
      assert.equal(streamed, 'streamed reply');
      assert.equal(await stream.finishReason, 'stop');
      for (const u of [text.usage, await stream.usage]) {
        assert.deepEqual(
          [u.inputTokens, u.inputTokenDetails, u.outputTokens, u.outputTokenDetails.reasoningTokens],
          [160, { noCacheTokens: 100, cacheReadTokens: 50, cacheWriteTokens: 10 }, 20, 7],
        );
      }
      const billed = readEvents(stack.files.db, 'llm.call_completed').slice(-2);
      for (const e of billed)
        assert.deepEqual(
          [
            e.payload.input_tokens,
            e.payload.cached_input_tokens,
            e.payload.cache_creation_input_tokens,
            e.payload.output_tokens,
            e.payload.reasoning_tokens,
          ],
          [100, 50, 10, 20, 7],
        );

      const round = await generateText({
        model: c.model,
        prompt: 'weather? [[fake:tool_call]]',
        tools: { get_weather: weather },
        stopWhen: stepCountIs(2),
        maxRetries: 0,
        maxOutputTokens: 256,
      });
      assert.equal(round.steps.length, 2);
      assert.equal(round.steps[0].toolCalls[0]?.toolName, 'get_weather');
      assert.equal(round.text, 'Tool result received: Sunny in city-value');

      // the same loop streamed, with text before the call
      const streamedRound = streamText({
        model: c.model,
        prompt: 'weather? [[fake:text=Checking;tool_call]]',
        tools: { get_weather: weather },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
        maxOutputTokens: 256,
      });
      let loopText = '';
      for await (const piece of streamedRound.textStream) loopText += piece;
      assert.equal((await streamedRound.steps).length, 2);
      assert.equal(loopText, 'CheckingTool result received: Sunny in city-value');
      assert.ok(((await streamedRound.totalUsage).inputTokens ?? 0) > 0);

      // structured output: a JSON schema the SDK sends in its provider's own form (or as a forced tool)
      const structured = await generateText({
        model: c.model,
        prompt: 'which city? [[fake:text={"city":"Oslo"}]]',
        output: Output.object({ schema: CITY }),
        maxRetries: 0,
        maxOutputTokens: 256,
      });
      // @ai-sdk/anthropic asks a model it does not know by a forced `json` tool, whose input the fake
      // builds from the schema
      const forcedTool = c.name === '@ai-sdk/anthropic on a GPT model';
      assert.deepEqual(structured.output, { city: forcedTool ? 'city-value' : 'Oslo' });
      // generateObject / streamObject with a zod schema, and an image part
      const Place = z.object({ city: z.string(), population: z.number().int() });
      const object = await generateObject({ model: c.model, schema: Place, prompt: 'where?', maxRetries: 0 });
      assert.deepEqual(object.object, { city: 'city-value', population: 1 });
      const streamedObject = streamObject({ model: c.model, schema: Place, prompt: 'where?', maxRetries: 0 });
      for await (const _ of streamedObject.partialObjectStream);
      assert.deepEqual(await streamedObject.object, { city: 'city-value', population: 1 });
      const image = {
        type: 'image' as const,
        image: Buffer.from(PNG_BASE64, 'base64'),
        mediaType: 'image/png',
      };
      const seen = await generateText({
        model: c.model,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'what? [[fake:image-check]]' }, image] }],
        maxRetries: 0,
      });
      assert.equal(seen.text, 'image-check: 1 image (image/png)');
      // a PDF file part reaches the model as a document named by its filename, whatever the wire
      const pdf = { type: 'file' as const, data: Buffer.from('%PDF-1.4\n'), mediaType: 'application/pdf' };
      const report = [
        { type: 'text' as const, text: 'sum up' },
        { ...pdf, filename: 'q3.pdf' },
      ];
      await generateText({ model: c.model, messages: [{ role: 'user', content: report }], maxRetries: 0 });
      assert.match(JSON.stringify(fake.requests.at(-1)!.body), /"(filename|title)":"q3\.pdf"/);
      const turns = readEvents(stack.files.db, 'turn.completed').slice(-11);
      assert.ok(turns.every((e) => e.payload.inbound_shape === c.shape && e.payload.status === 200));
    });
  }
});

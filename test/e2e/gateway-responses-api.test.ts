/**
 * POST /v1/responses (issue 13) with the OpenAI SDK's `responses.create` and `responses.stream`: an OpenAI
 * model gets the client's bytes on its own `/v1/responses` (only `model` replaced), an Anthropic or
 * OpenRouter model is translated; text, a tool round trip and streaming each way, the requested model
 * echoed, usage with cached tokens, `inbound_shape: "openai_responses"` on the trace, and a follow-up on
 * stored state (`previous_response_id`) refused with a 400 that says what works where it cannot be served.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import type {
  FunctionTool,
  ResponseCreateParamsNonStreaming,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

const WEATHER: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

const MODELS = [
  { model: 'openai:gpt-5-mini', path: '/v1/responses', upstream: 'gpt-5-mini' },
  { model: 'anthropic:claude-haiku-4-5', path: '/v1/messages', upstream: 'claude-haiku-4-5' },
  {
    model: 'openrouter:google/gemini-2.5-flash',
    path: '/api/v1/chat/completions',
    upstream: 'google/gemini-2.5-flash',
  },
] as const;

test('the Responses API through the gateway, same wire and translated', { timeout: 60_000 }, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const { fake, gw, token } = stack;
  const client = new OpenAI({ apiKey: token, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  t.beforeEach(() => fake.reset());

  for (const m of MODELS) {
    await t.test(`${m.model}: text, then a tool round trip, non-streaming`, async () => {
      fake.setDefault('usage=in:40,out:12,cache_read:1200');
      const { data: first, response } = await client.responses
        .create({ model: m.model, instructions: 'Be brief.', input: 'hello', max_output_tokens: 200 })
        .withResponse();
      assert.equal(first.model, m.model);
      assert.equal(first.status, 'completed');
      assert.equal(first.output_text, 'Hello from the fake provider.');
      assert.equal(first.usage?.input_tokens, 1240);
      assert.equal(first.usage?.input_tokens_details.cached_tokens, 1200);
      assert.equal(first.usage?.output_tokens, 12);
      assert.equal(response.headers.get('svc-routed-model'), m.model);
      const sent = fake.requests.at(-1)!;
      assert.equal(sent.path, m.path);
      assert.equal((sent.body as { model: string }).model, m.upstream);
      if (m.path === '/v1/responses')
        assert.deepEqual(sent.body, {
          model: m.upstream,
          instructions: 'Be brief.',
          input: 'hello',
          max_output_tokens: 200,
        });

      const ask: ResponseInputItem[] = [{ role: 'user', content: 'weather in Oslo? [[fake:tool_call]]' }];
      const call = await client.responses.create({ model: m.model, input: ask, tools: [WEATHER] });
      const fc = call.output.find((o) => o.type === 'function_call');
      assert.ok(fc && fc.type === 'function_call', 'a function_call item');
      assert.equal(fc.name, 'get_weather');
      assert.deepEqual(JSON.parse(fc.arguments), { city: 'city-value' });
      const answer = await client.responses.create({
        model: m.model,
        tools: [WEATHER],
        input: [
          ...ask,
          { type: 'function_call', call_id: fc.call_id, name: fc.name, arguments: fc.arguments },
          { type: 'function_call_output', call_id: fc.call_id, output: 'Sunny, 21 C' },
        ],
      });
      assert.equal(answer.output_text, 'Tool result received: Sunny, 21 C');
    });

    await t.test(`${m.model}: the stream helper assembles text and a tool call`, async () => {
      fake.setDefault('usage=in:40,out:12,cache_read:1200');
      const stream = client.responses.stream({
        model: m.model,
        tools: [WEATHER],
        input: 'Checking [[fake:text=Let me check;tool_call]]',
      });
      const types: string[] = [];
      let text = '';
      let argsDone: string[] = [];
      for await (const e of stream) {
        types.push(e.type);
        if (e.type === 'response.output_text.delta') text += e.delta;
        // as the API sends it: no name (the call's item has it)
        if (e.type === 'response.function_call_arguments.done') argsDone = Object.keys(e).sort();
      }
      assert.deepEqual(argsDone, ['arguments', 'item_id', 'output_index', 'sequence_number', 'type']);
      const final = await stream.finalResponse();
      assert.equal(types[0], 'response.created');
      assert.equal(types.at(-1), 'response.completed');
      assert.equal(text, 'Let me check');
      assert.equal(final.model, m.model);
      assert.equal(final.output_text, 'Let me check');
      const fc = final.output.find((o) => o.type === 'function_call');
      assert.deepEqual(fc && fc.type === 'function_call' && JSON.parse(fc.arguments), { city: 'city-value' });
      assert.equal(final.usage?.input_tokens_details.cached_tokens, 1200);
    });
  }

  await t.test('each call is traced with inbound_shape openai_responses and priced', () => {
    const calls = readEvents(stack.files.db, 'llm.call_completed');
    const mine = calls.filter((e) => e.payload.inbound_shape === 'openai_responses');
    assert.equal(mine.length, MODELS.length * 4);
    for (const e of mine) {
      assert.equal(e.payload.cached_input_tokens, 1200);
      assert.equal(e.payload.input_tokens, 40);
      assert.ok(Number(e.payload.cost_usd) > 0);
    }
  });

  await t.test(
    'cache writes: the client reads them as cache_write_tokens and the trace records them, on every model',
    async () => {
      fake.setDefault('usage=in:40,out:12,cache_read:1200,cache_write:100');
      for (const m of MODELS) {
        const { data, response } = await client.responses
          .create({ model: m.model, input: 'hello' })
          .withResponse();
        assert.deepEqual(data.usage?.input_tokens_details, { cached_tokens: 1200, cache_write_tokens: 100 });
        assert.equal(data.usage?.input_tokens, 1340);
        const call = readEvents(stack.files.db, 'llm.call_completed').find(
          (e) => e.turn_id === response.headers.get('svc-request-id'),
        );
        assert.ok(call, `llm.call_completed of ${m.model}`);
        assert.equal(call.payload.input_tokens, 40, m.model);
        assert.equal(call.payload.cached_input_tokens, 1200, m.model);
        assert.equal(call.payload.cache_creation_input_tokens, 100, m.model);
      }
    },
  );

  await t.test(
    "OpenAI's explicit prompt_cache_breakpoint on a Claude model: a one-hour cache_control on that block (the last four kept, the rest named), the write billed at the hour's rate",
    async () => {
      const bp = { mode: 'explicit' as const };
      const long = 'Answer in one short line. '.repeat(1400);
      // Responses: five breakpoints (one with 12h, the request's ttl 30m); Claude takes four. prewarm (write,
      // answer nothing) has no Claude form
      const { data, response } = await client.responses
        .create({
          model: 'haiku',
          prompt_cache_options: { mode: 'explicit', ttl: '30m', prewarm: true },
          input: [
            { role: 'developer', content: [{ type: 'input_text', text: long, prompt_cache_breakpoint: bp }] },
            {
              role: 'user',
              content: ['a', 'b', 'c', 'd'].map((text) => ({
                type: 'input_text' as const,
                text,
                prompt_cache_breakpoint: text === 'd' ? { ...bp, ttl: '12h' as const } : bp,
              })),
            },
          ],
        })
        .withResponse();
      assert.equal(
        response.headers.get('svc-dropped-params'),
        'prompt_cache_options.prewarm, input.0.content.0.prompt_cache_breakpoint',
      );
      const sent = fake.requests[0].body as {
        system: Array<{ cache_control?: unknown }>;
        messages: Array<{ content: Array<{ cache_control?: unknown }> }>;
      };
      const hour = { type: 'ephemeral', ttl: '1h' };
      assert.deepEqual(
        [sent.system[0].cache_control, ...sent.messages[0].content.map((b) => b.cache_control)],
        [undefined, hour, hour, hour, hour],
      );
      const written = data.usage?.input_tokens_details.cache_write_tokens ?? 0;
      assert.ok(written > 4096, `the prompt is written for an hour (${written})`);
      const call = readEvents(stack.files.db, 'llm.call_completed').find(
        (e) => e.turn_id === response.headers.get('svc-request-id'),
      )!.payload;
      assert.equal(call.cache_creation_1h_input_tokens, written);
      // haiku: input 1, output 5, one-hour writes 2 (twice input) per million
      const nanoUsd =
        1000 * (call.input_tokens as number) + 5000 * (call.output_tokens as number) + 2000 * written;
      assert.equal(Number(call.cost_usd), nanoUsd / 1e9);
      // a follow-up's breakpoint beside the five of the turn it continues: the earliest two of those are left
      // out and named as items of the earlier turns (before: no header)
      const follow = await client.responses
        .create({
          model: 'haiku',
          previous_response_id: data.id,
          input: [
            { role: 'user', content: [{ type: 'input_text', text: 'e', prompt_cache_breakpoint: bp }] },
          ],
        })
        .withResponse();
      assert.equal(
        follow.response.headers.get('svc-dropped-params'),
        'previous_response_id.input.0.content.0.prompt_cache_breakpoint, previous_response_id.input.1.content.0.prompt_cache_breakpoint',
      );
      const marks = JSON.stringify(fake.requests[1].body).match(/"cache_control"/g) ?? [];
      assert.equal(marks.length, 4);
      // Chat Completions: a breakpoint on the system part; the next request reads what the first wrote
      fake.reset();
      const ask = {
        model: 'haiku',
        messages: [
          {
            role: 'system' as const,
            content: [
              {
                type: 'text' as const,
                text: `Chat. ${long}`,
                prompt_cache_breakpoint: { ...bp, ttl: '30m' as const },
              },
            ],
          },
          { role: 'user' as const, content: 'hi' },
        ],
      };
      const first = await client.chat.completions.create(ask).withResponse();
      const second = await client.chat.completions.create(ask);
      assert.equal(first.response.headers.get('svc-dropped-params'), null);
      assert.deepEqual((fake.requests[0].body as typeof sent).system[0].cache_control, hour);
      const wrote = first.data.usage?.prompt_tokens_details?.cache_write_tokens ?? 0;
      assert.ok(wrote > 4096, `the system prompt is written (${wrote})`);
      assert.equal(second.usage?.prompt_tokens_details?.cached_tokens, wrote);
      // a client's own five-minute cache_control (OpenRouter's form) before a breakpoint: the API refuses an
      // hour after five minutes, so the breakpoint goes as a five-minute mark (before: the API's 400)
      fake.reset();
      const mixed = await client.chat.completions.create({
        model: 'haiku',
        messages: [
          {
            role: 'system',
            content: [{ type: 'text', text: 'rules', cache_control: { type: 'ephemeral' } }],
          },
          { role: 'user', content: [{ type: 'text', text: 'hi', prompt_cache_breakpoint: bp }] },
        ],
      } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      assert.equal(mixed.object, 'chat.completion');
      const mixedSent = fake.requests[0].body as typeof sent;
      assert.deepEqual(
        [mixedSent.system[0].cache_control, mixedSent.messages[0].content[0].cache_control],
        [{ type: 'ephemeral' }, { type: 'ephemeral' }],
      );
    },
  );

  await t.test(
    "a custom tool's call on an OpenAI model (Codex's apply_patch): the client gets its custom_tool_call and the trace says tool_use, streaming and not",
    async () => {
      fake.setDefault('usage=in:40,out:12');
      const body = {
        model: 'openai:gpt-5-mini',
        tools: [{ type: 'custom' as const, name: 'apply_patch', description: 'Edit files' }],
        input: 'fix it [[fake:tool_call]]',
      };
      const { data, response } = await client.responses.create(body).withResponse();
      const streamed = client.responses.stream(body);
      const final = await streamed.finalResponse();
      for (const answer of [data, final]) {
        const call = answer.output.find((o) => o.type === 'custom_tool_call');
        assert.equal(call?.type === 'custom_tool_call' && call.input, 'apply_patch input');
      }
      const traced = readEvents(stack.files.db, 'llm.call_completed').slice(-2);
      assert.equal(traced[0].turn_id, response.headers.get('svc-request-id'));
      assert.deepEqual(
        traced.map((e) => [e.payload.stream, e.payload.stop_reason]),
        [
          [false, 'tool_use'],
          [true, 'tool_use'],
        ],
      );
    },
  );

  await t.test(
    "a Codex conversation moved from a Claude model to an OpenAI one (store: false, the whole history resent): Claude's reasoning items stay out of OpenAI's input, OpenAI's own go in",
    async () => {
      const ask = (model: string, input: ResponseInputItem[]) =>
        client.responses.create({
          model,
          input,
          store: false,
          include: ['reasoning.encrypted_content'],
          reasoning: { effort: 'low' },
        });
      const first: ResponseInputItem[] = [{ role: 'user', content: 'plan it [[fake:thinking]]' }];
      const claude = await ask('anthropic:claude-haiku-4-5', first);
      const openai = await ask('openai:gpt-5-mini', [
        ...first,
        ...(claude.output as ResponseInputItem[]),
        { role: 'user', content: 'go on [[fake:thinking]]' },
      ]);
      assert.equal(openai.status, 'completed');
      const sent = (fake.requests.at(-1)!.body as { input: Array<{ type?: string }> }).input;
      assert.deepEqual(
        sent.map((i) => i.type ?? 'message'),
        ['message', 'message', 'message'],
      );
      // OpenAI's own sealed reasoning, replayed, still reaches it
      const again = await ask('openai:gpt-5-mini', [
        { role: 'user', content: 'go on' },
        ...(openai.output as ResponseInputItem[]),
        { role: 'user', content: 'and then?' },
      ]);
      assert.equal(again.status, 'completed');
      const resent = (fake.requests.at(-1)!.body as { input: Array<{ type?: string }> }).input;
      assert.deepEqual(
        resent.map((i) => i.type ?? 'message'),
        ['message', 'reasoning', 'message', 'message'],
      );
    },
  );

  await t.test(
    'hosted web searches on an OpenAI model: each web_search_call is counted and priced, streaming and not',
    async () => {
      const ask = {
        model: 'openai:gpt-5-mini',
        input: 'news today? [[fake:web-search=3;usage=in:1000,out:100]]',
        tools: [{ type: 'web_search' as const }],
      };
      const { data: whole, response } = await client.responses.create(ask).withResponse();
      const streamed = await client.responses.stream(ask).finalResponse();
      for (const r of [whole, streamed])
        assert.deepEqual(
          r.output.map((o) => o.type),
          ['web_search_call', 'web_search_call', 'web_search_call', 'message'],
        );
      const traced = readEvents(stack.files.db, 'llm.call_completed').slice(-2);
      assert.equal(traced[0].turn_id, response.headers.get('svc-request-id'));
      for (const [i, e] of traced.entries()) {
        assert.equal(e.payload.web_search_requests, 3, `call ${i}`);
        // gpt-5-mini: 1000 × 0.25 + 100 × 2 = 450 per million tokens, plus 3 searches × 10 USD per 1,000
        assert.equal(e.payload.cost_usd, '0.030450', `call ${i}`);
      }
    },
  );

  await t.test(
    "hosted web search on a Claude model runs Claude's own search tool: a web_search_call per search before the message citing the pages, streamed with the search's events, billed; a replay goes without the calls",
    async () => {
      const model = 'anthropic:claude-sonnet-4-5';
      const tools = [
        {
          type: 'web_search' as const,
          search_context_size: 'low' as const,
          filters: { allowed_domains: ['https://example.com'] },
          user_location: { type: 'approximate' as const, country: 'FR', city: 'Paris', region: null },
        },
      ];
      const ask = {
        model,
        tools,
        input: 'capital of France? [[fake:web-search=2;cite;usage=in:1000,out:100]]',
        include: ['web_search_call.action.sources' as const],
      };
      const { data: whole, response } = await client.responses.create(ask).withResponse();
      assert.equal(response.headers.get('svc-dropped-tools'), null);
      assert.equal(response.headers.get('svc-dropped-params'), 'tools.0.search_context_size');
      assert.deepEqual((fake.requests[0].body as { tools: unknown }).tools, [
        {
          type: 'web_search_20250305',
          name: 'web_search',
          allowed_domains: ['example.com'],
          user_location: { type: 'approximate', country: 'FR', city: 'Paris' },
        },
      ]);
      const stream = client.responses.stream(ask);
      const events: Array<{ type: string; output_index?: number; item?: { id?: string } }> = [];
      for await (const e of stream) events.push(e);
      const streamed = await stream.finalResponse();
      for (const r of [whole, streamed]) {
        assert.deepEqual(
          r.output.map((o) => o.type),
          ['web_search_call', 'web_search_call', 'message', 'message'],
        );
        const search = r.output[0];
        assert.ok(search.type === 'web_search_call');
        assert.equal(search.status, 'completed');
        assert.deepEqual(search.action, {
          type: 'search',
          query: 'fake search 1',
          sources: [{ type: 'url', url: 'https://example.com/search/1' }],
        });
        const cited = r.output[3];
        assert.ok(cited.type === 'message' && cited.content[0].type === 'output_text');
        assert.deepEqual(
          cited.content[0].annotations.map((a) => a.type === 'url_citation' && a.url),
          ['https://example.com/paris'],
        );
      }
      // streamed as OpenAI streams a search: its item added, in_progress, searching, completed, its item done
      const first = events.filter((e) => e.output_index === 0).map((e) => e.type);
      assert.deepEqual(first, [
        'response.output_item.added',
        'response.web_search_call.in_progress',
        'response.web_search_call.searching',
        'response.web_search_call.completed',
        'response.output_item.done',
      ]);
      for (const e of events)
        if (e.type === 'response.output_item.done')
          assert.equal(streamed.output[e.output_index!].id, e.item!.id);
      // both calls billed their searches: sonnet 4.5, 1000 × 3 + 100 × 15 per million, plus 2 × 10 USD per 1,000
      const traced = readEvents(stack.files.db, 'llm.call_completed').slice(-2);
      assert.equal(traced[0].turn_id, response.headers.get('svc-request-id'));
      for (const e of traced) {
        assert.equal(e.payload.web_search_requests, 2);
        assert.equal(e.payload.cost_usd, '0.024500');
      }
      // the conversation replayed (output items as input) or continued by id goes to Claude without the calls
      fake.reset();
      const replay = await client.responses.create({
        model,
        tools,
        input: [
          { role: 'user', content: 'capital of France?' },
          ...(whole.output as ResponseInputItem[]),
          { role: 'user', content: 'and of Spain?' },
        ],
      });
      const next = await client.responses.create({
        model,
        tools,
        previous_response_id: whole.id,
        input: 'and Spain?',
      });
      for (const r of [replay, next]) assert.equal(r.status, 'completed');
      for (const sent of fake.requests) {
        const history = JSON.stringify((sent.body as { messages: unknown }).messages);
        assert.ok(history.includes('Paris is the capital of France.'), history);
        assert.ok(!history.includes('server_tool_use') && !history.includes('web_search_call'), history);
      }
    },
  );

  await t.test(
    "Chat Completions web_search_options to a Claude model runs Claude's search tool: the pages cited are the message's url_citation annotations, the search billed",
    async () => {
      const ask = {
        model: 'anthropic:claude-sonnet-4-5',
        messages: [
          { role: 'user' as const, content: 'capital? [[fake:web-search=1;cite;usage=in:1000,out:100]]' },
        ],
        web_search_options: {
          search_context_size: 'high' as const,
          user_location: { type: 'approximate' as const, approximate: { country: 'FR' } },
        },
      };
      const { data, response } = await client.chat.completions.create(ask).withResponse();
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('svc-dropped-params'), 'web_search_options.search_context_size');
      assert.deepEqual((fake.requests[0].body as { tools: unknown }).tools, [
        {
          type: 'web_search_20250305',
          name: 'web_search',
          user_location: { type: 'approximate', country: 'FR' },
        },
      ]);
      const streamed = await client.chat.completions.stream(ask).finalChatCompletion();
      for (const r of [data, streamed])
        assert.deepEqual(
          r.choices[0].message.annotations?.map((a) => a.url_citation.url),
          ['https://example.com/paris'],
        );
      // sonnet 4.5: 1000 × 3 + 100 × 15 per million tokens, plus 1 search × 10 USD per 1,000
      for (const e of readEvents(stack.files.db, 'llm.call_completed').slice(-2)) {
        assert.equal(e.payload.web_search_requests, 1);
        assert.equal(e.payload.cost_usd, '0.014500');
      }
    },
  );

  await t.test(
    "a forced hosted web search (tool_choice web_search) on a Claude model forces Claude's search tool; a model that cannot search, or tools with no live search, get a 400 saying what works",
    async () => {
      // both spellings; forcing a tool turns Claude's thinking off (the API refuses both together)
      for (const type of ['web_search', 'web_search_preview'] as const) {
        fake.reset();
        const forced = await client.responses.create({
          model: 'anthropic:claude-sonnet-4-5',
          tools: [{ type }],
          tool_choice: { type } as { type: 'web_search_preview' }, // the SDK's types know the preview only
          reasoning: { effort: 'low' },
          input: 'news today? [[fake:cite]]',
        });
        assert.equal(forced.status, 'completed');
        assert.deepEqual(
          forced.output.map((o) => o.type),
          ['web_search_call', 'message', 'message'],
        );
        const sent = fake.requests[0].body as Record<string, unknown>;
        assert.deepEqual(sent.tool_choice, { type: 'tool', name: 'web_search' });
        assert.equal(sent.thinking, undefined);
      }
      const refused = (model: string, tools: unknown[]) =>
        client.responses
          .create({
            model,
            tools: tools as FunctionTool[],
            tool_choice: { type: 'web_search' } as unknown as { type: 'web_search_preview' },
            input: 'news today?',
          })
          .then(
            () => assert.fail('answered'),
            (err: unknown) => {
              assert.ok(err instanceof OpenAI.BadRequestError, String(err));
              assert.match(err.message, /^400 tool_choice: /);
              return err.message;
            },
          );
      assert.match(
        await refused('openrouter:google/gemini-2.5-flash', [{ type: 'web_search' }]),
        /a forced web search\) can be served only by an OpenAI or Claude model, and openrouter:google\/gemini-2\.5-flash is not one; leave tool_choice out/,
      );
      assert.match(
        await refused('anthropic:claude-sonnet-4-5', [{ type: 'web_search', external_web_access: false }]),
        /without a web search tool among tools that searches the live web .*declare a \{"type": "web_search"\} tool/,
      );
    },
  );

  await t.test(
    'a function named web_search beside the hosted web search, on a Claude model (whose search tool has that name): a 400 naming tools before any call; on an OpenAI model both go',
    async () => {
      const fn = {
        type: 'function' as const,
        name: 'web_search',
        strict: false,
        parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      };
      const because =
        /400 tools: a function named web_search cannot go to a Claude model beside OpenAI's hosted web search.*rename the function/;
      fake.reset();
      await assert.rejects(
        client.responses.create({
          model: 'anthropic:claude-sonnet-4-5',
          tools: [fn, { type: 'web_search' }],
          input: 'find it',
        }),
        because,
      );
      await assert.rejects(
        client.chat.completions.create({
          model: 'anthropic:claude-sonnet-4-5',
          messages: [{ role: 'user', content: 'find it' }],
          tools: [{ type: 'function', function: { name: fn.name, parameters: fn.parameters } }],
          web_search_options: {},
        }),
        because,
      );
      assert.equal(fake.requests.length, 0);
      const openai = await client.responses.create({
        model: 'openai:gpt-5-mini',
        tools: [fn, { type: 'web_search' }],
        input: 'find it [[fake:tool_call]]',
      });
      assert.deepEqual(
        openai.output.map((o) => (o.type === 'function_call' ? o.name : o.type)),
        ['web_search'],
      );
    },
  );

  await t.test(
    'a refusal from an OpenAI model reaches the client as its refusal part and is traced as a refusal',
    async () => {
      const input = 'something bad [[fake:text=I cannot help with that;stop=refusal]]';
      const { data: whole, response } = await client.responses
        .create({ model: 'openai:gpt-5-mini', input })
        .withResponse();
      const stream = client.responses.stream({ model: 'openai:gpt-5-mini', input });
      let refusal = '';
      for await (const e of stream) if (e.type === 'response.refusal.delta') refusal += e.delta;
      const streamed = await stream.finalResponse();
      for (const r of [whole, streamed]) {
        assert.equal(r.status, 'completed');
        const message = r.output.find((o) => o.type === 'message');
        // (the stream helper's final response adds `parsed: null` to each part)
        assert.deepEqual(
          message?.type === 'message' &&
            message.content.map((p) => ({ type: p.type, refusal: 'refusal' in p ? p.refusal : undefined })),
          [{ type: 'refusal', refusal: 'I cannot help with that' }],
        );
      }
      assert.equal(refusal, 'I cannot help with that');
      // the two calls just made, in order: the whole answer, then the stream
      const traced = readEvents(stack.files.db, 'llm.call_completed').slice(-2);
      assert.equal(traced[0].turn_id, response.headers.get('svc-request-id'));
      assert.deepEqual(
        traced.map((e) => e.payload.stop_reason),
        ['refusal', 'refusal'],
      );
    },
  );

  await t.test(
    'a follow-up on a Claude model names the earlier answer: previous_response_id and item_reference both work',
    async () => {
      const first = await client.responses.create({
        model: 'haiku',
        input: 'my name is Ada [[fake:text=Hi Ada]]',
      });
      assert.equal(first.output_text, 'Hi Ada');
      fake.reset();
      const { data: next, response: nextHttp } = await client.responses
        .create({ model: 'haiku', input: 'and then?', previous_response_id: first.id })
        .withResponse();
      assert.equal(next.previous_response_id, first.id);
      // routing saw the whole conversation too (three messages), not only the newest turn
      const decided = readEvents(stack.files.db, 'route.decided').find(
        (e) => e.turn_id === nextHttp.headers.get('svc-request-id'),
      );
      assert.ok(decided, 'route.decided of the follow-up');
      assert.equal((decided.payload.fingerprint as { messages: number }).messages, 3);
      // the upstream got the whole conversation: the first question, its answer, the new question
      const sent = fake.requests[0].body as { messages: Array<{ role: string; content: unknown }> };
      assert.deepEqual(
        sent.messages.map((m) => [m.role, textOf(m.content)]),
        [
          ['user', 'my name is Ada [[fake:text=Hi Ada]]'],
          ['assistant', 'Hi Ada'],
          ['user', 'and then?'],
        ],
      );
      // a chain: the follow-up of the follow-up still carries everything
      fake.reset();
      await client.responses.create({ model: 'haiku', input: 'and now?', previous_response_id: next.id });
      assert.equal((fake.requests[0].body as { messages: unknown[] }).messages.length, 5);
      // an item_reference to an earlier output item is that item
      fake.reset();
      const messageItem = first.output.find((i) => i.type === 'message')!;
      await client.responses.create({
        model: 'haiku',
        input: [
          { role: 'user', content: 'my name is Ada' },
          { type: 'item_reference', id: messageItem.id! },
          { role: 'user', content: 'what is my name?' },
        ],
      });
      const referenced = fake.requests[0].body as { messages: Array<{ role: string; content: unknown }> };
      assert.deepEqual(
        referenced.messages.map((m) => m.role),
        ['user', 'assistant', 'user'],
      );
      assert.match(JSON.stringify(referenced.messages[1]!.content), /Hi Ada/);
      // store: false keeps nothing to follow up on
      const unkept = await client.responses.create({ model: 'haiku', input: 'secret', store: false });
      await assert.rejects(
        client.responses.create({ model: 'haiku', input: 'and?', previous_response_id: unkept.id }),
        (err) => err instanceof OpenAI.BadRequestError && /no longer kept by this gateway/.test(err.message),
      );
      // another key cannot follow up on this key's answers, however it learned the id
      const other = await stack.issue();
      const stranger = new OpenAI({ apiKey: other.token, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      fake.reset();
      await assert.rejects(
        stranger.responses.create({ model: 'haiku', input: 'and?', previous_response_id: first.id }),
        (err) => err instanceof OpenAI.BadRequestError && /previous_response_id/.test(err.message),
      );
      assert.equal(fake.requests.length, 0);
      // the same follow-up on an OpenAI model: the earlier turns go as plain input (OpenAI never stored them)
      fake.reset();
      await client.responses.create({ model: 'mini', input: 'and then?', previous_response_id: first.id });
      const toOpenAI = fake.requests[0]!.body as {
        input: Array<Record<string, unknown>>;
        previous_response_id?: string;
      };
      assert.equal(toOpenAI.previous_response_id, undefined);
      assert.deepEqual(
        toOpenAI.input.map((i) => i.role),
        ['user', 'assistant', 'user'],
      );
      assert.ok(toOpenAI.input.every((i) => i.id === undefined && i.type !== 'reasoning'));
    },
  );

  await t.test(
    'a conversation OpenAI stored (store on, the SDK default) continues on a Claude model, streamed or not',
    async () => {
      // the first turn on an OpenAI model, with reasoning OpenAI sealed
      const first = await client.responses.create({
        model: 'mini',
        instructions: 'Be brief.',
        input: 'my name is Ada [[fake:text=Hi Ada]]',
        reasoning: { effort: 'low' },
        include: ['reasoning.encrypted_content'],
      });
      assert.match(JSON.stringify(first.output), /"encrypted_content":"gAAAAA/);
      const toClaude = (body: unknown) =>
        (body as { system?: unknown; messages: Array<{ role: string; content: unknown }> }).messages.map(
          (m) => [m.role, textOf(m.content)],
        );
      const next = await client.responses.create({
        model: 'haiku',
        input: 'and then?',
        previous_response_id: first.id,
      });
      assert.equal(next.previous_response_id, first.id);
      const sent = fake.requests.at(-1)!;
      assert.equal(sent.path, '/v1/messages');
      // the earlier turns as they were, without OpenAI's reasoning and without the earlier instructions
      assert.deepEqual(toClaude(sent.body), [
        ['user', 'my name is Ada [[fake:text=Hi Ada]]'],
        ['assistant', 'Hi Ada'],
        ['user', 'and then?'],
      ]);
      assert.doesNotMatch(JSON.stringify(sent.body), /gAAAAA|thinking|Be brief/);
      // back on the OpenAI model, naming the Claude turn: every turn as plain input, no id OpenAI lacks
      await client.responses.create({ model: 'mini', input: 'and now?', previous_response_id: next.id });
      const back = fake.requests.at(-1)!.body as {
        input: Array<{ role?: string }>;
        previous_response_id?: string;
      };
      assert.equal(back.previous_response_id, undefined);
      assert.deepEqual(
        back.input.map((i) => i.role),
        ['user', 'assistant', 'user', 'assistant', 'user'],
      );
      // naming OpenAI's own response on an OpenAI model goes to OpenAI as sent (it has it)
      await client.responses.create({ model: 'mini', input: 'again?', previous_response_id: first.id });
      assert.deepEqual(
        [fake.requests.at(-1)!.body].map((b) => [
          (b as { previous_response_id: string }).previous_response_id,
          (b as { input: unknown }).input,
        ]),
        [[first.id, 'again?']],
      );
      // but not for another key: OpenAI holds every key's answers under the gateway's one account, so sent on
      // it would continue this key's conversation (before: served); its output items likewise
      const outsider = new OpenAI({
        apiKey: (await stack.issue()).token,
        baseURL: `${gw.url}/v1`,
        maxRetries: 0,
      });
      const sentBefore = fake.requests.length;
      const firstItem = first.output.find((i) => i.type === 'message')!.id!;
      for (const [body, words] of [
        [
          { previous_response_id: first.id, input: 'what is my name?' },
          /^400 previous_response_id: Previous response with id '.+' not found\.$/,
        ],
        [
          {
            input: [
              { type: 'item_reference', id: firstItem },
              { role: 'user', content: 'and?' },
            ],
          },
          /^400 input: Item with id '.+' not found\.$/,
        ],
      ] as const)
        await assert.rejects(
          outsider.responses.create({
            model: 'mini',
            ...body,
          } as OpenAI.Responses.ResponseCreateParamsNonStreaming),
          (err) => err instanceof OpenAI.BadRequestError && words.test(err.message),
        );
      assert.equal(fake.requests.length, sentBefore);

      // streamed on the OpenAI model, then followed up on Claude, streamed too
      const streamed = await client.responses
        .stream({ model: 'mini', input: 'I am Bo [[fake:text=Hi Bo]]' })
        .finalResponse();
      const followed = await client.responses
        .stream({ model: 'haiku', input: 'who am I?', previous_response_id: streamed.id })
        .finalResponse();
      assert.equal(followed.status, 'completed');
      assert.deepEqual(toClaude(fake.requests.at(-1)!.body), [
        ['user', 'I am Bo [[fake:text=Hi Bo]]'],
        ['assistant', 'Hi Bo'],
        ['user', 'who am I?'],
      ]);

      // kept for the key that asked only; store: false and a stream that failed keep nothing
      const other = await stack.issue();
      const stranger = new OpenAI({ apiKey: other.token, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const unkept = await client.responses.create({ model: 'mini', input: 'secret', store: false });
      let failedId = '';
      await assert.rejects(async () => {
        const events = await client.responses.create({
          model: 'mini',
          input: 'cut [[fake:long=4096;reset-after=5]]',
          stream: true,
        });
        for await (const e of events) if (e.type === 'response.created') failedId = e.response.id;
      });
      assert.ok(failedId, 'the failed stream named its response');
      const calls = fake.requests.length;
      for (const [asker, id] of [
        [stranger, first.id],
        [client, unkept.id],
        [client, failedId],
      ] as const)
        await assert.rejects(
          asker.responses.create({ model: 'haiku', input: 'and?', previous_response_id: id }),
          (err) => err instanceof OpenAI.BadRequestError && /previous_response_id/.test(err.message),
        );
      assert.equal(fake.requests.length, calls);
    },
  );

  await t.test(
    'a PDF given inline (input_file with file_data) reaches a Claude model as a document, as on the chat path',
    async () => {
      // the Vercel AI SDK's openai(model) sends every PDF file part this way; openai.chat(model) got through
      const pdf = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');
      const file = {
        type: 'input_file',
        filename: 'notes.pdf',
        file_data: `data:application/pdf;base64,${pdf}`,
      };
      const input = [
        { role: 'user', content: [{ type: 'input_text', text: 'summarize' }, file] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_1', output: [file] },
      ] as unknown as ResponseInputItem[];
      const res = await client.responses.create({
        model: 'anthropic:claude-haiku-4-5',
        input,
        tools: [WEATHER],
      });
      assert.equal(res.status, 'completed');
      const messages = (fake.requests[0].body as { messages: Array<{ content: unknown }> }).messages;
      const document = {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: pdf },
        title: 'notes.pdf',
      };
      assert.deepEqual(messages[0].content, [{ type: 'text', text: 'summarize' }, document]);
      const result = (messages[2].content as Array<{ type: string; content: unknown }>)[0];
      assert.equal(result.type, 'tool_result');
      assert.deepEqual(result.content, [document]);
      // an explicit prompt-cache breakpoint on the file is the document's cache_control
      fake.reset();
      const marked = { ...file, prompt_cache_breakpoint: { mode: 'explicit' } };
      await client.responses.create({
        model: 'anthropic:claude-haiku-4-5',
        input: [{ role: 'user', content: [marked] }] as unknown as ResponseInputItem[],
      });
      assert.deepEqual(
        (fake.requests[0].body as { messages: Array<{ content: unknown }> }).messages[0].content,
        [{ ...document, cache_control: { type: 'ephemeral', ttl: '1h' } }],
      );
      // to an OpenRouter model it stays a file part, a tool's one moved to the next user message
      fake.reset();
      await client.responses.create({ model: 'openrouter:google/gemini-2.5-flash', input, tools: [WEATHER] });
      const chat = (fake.requests[0].body as { messages: Array<{ role: string; content: unknown }> })
        .messages;
      const part = { type: 'file', file: { file_data: file.file_data, filename: 'notes.pdf' } };
      assert.deepEqual(
        chat.map((m) => m.role),
        ['user', 'assistant', 'tool', 'user'],
      );
      assert.deepEqual(chat[0].content, [{ type: 'text', text: 'summarize' }, part]);
      assert.equal(chat[2].content, '[document attached in the next user message]');
      assert.deepEqual(chat[3].content, [part]);
      // what only OpenAI can resolve is still a 400 naming it
      await assert.rejects(
        client.responses.create({
          model: 'anthropic:claude-haiku-4-5',
          input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }],
        }),
        (err) =>
          err instanceof OpenAI.BadRequestError &&
          err.message.startsWith('400 input.0.content.0: a content part of type input_file'),
      );
    },
  );

  await t.test(
    'an image with detail "original" or null (both in the SDK types) is served: as sent to OpenAI, without it elsewhere',
    async () => {
      const url =
        'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
      for (const detail of ['original', null]) {
        const image = { type: 'input_image', image_url: url, detail };
        const input = [
          { role: 'user', content: [image] },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: [image] },
        ] as unknown as ResponseInputItem[];
        for (const model of ['openai:gpt-5-mini', 'anthropic:claude-haiku-4-5']) {
          fake.reset();
          const res = await client.responses.create({ model, input, tools: [WEATHER] });
          assert.equal(res.status, 'completed');
          const sent = JSON.stringify(fake.requests[0].body);
          if (model.startsWith('openai:')) assert.ok(sent.includes(`"detail":${JSON.stringify(detail)}`));
          else assert.ok(sent.includes('"type":"image"') && !sent.includes('"detail"'));
        }
      }
    },
  );

  await t.test(
    "Codex's tools on a Claude model: a namespace's functions are flattened and called back by name and namespace; hosted web search is left out and named in svc-dropped-tools",
    async () => {
      const lookup = { ...WEATHER, name: 'lookup' };
      const tools = [
        { type: 'namespace', name: 'crm', description: 'CRM tools', tools: [lookup] },
        WEATHER,
        { type: 'web_search', external_web_access: false },
      ] as unknown as FunctionTool[];
      const ask: ResponseInputItem[] = [{ role: 'user', content: 'find Ada [[fake:tool_call]]' }];
      const { data: call, response } = await client.responses
        .create({ model: 'haiku', input: ask, tools })
        .withResponse();
      assert.equal(response.headers.get('svc-dropped-tools'), 'web_search');
      const upstream = fake.requests[0].body as { tools: Array<{ name: string; type?: string }> };
      assert.deepEqual(
        upstream.tools.map((x) => x.name),
        ['crm__lookup', 'get_weather'],
      );
      const fc = call.output.find((o) => o.type === 'function_call');
      assert.ok(fc && fc.type === 'function_call');
      assert.equal(fc.name, 'lookup');
      assert.equal(fc.namespace, 'crm');
      // the call comes back in the history as the client got it, and goes upstream flattened again
      fake.reset();
      const answer = await client.responses.create({
        model: 'haiku',
        tools,
        input: [
          ...ask,
          {
            type: 'function_call',
            call_id: fc.call_id,
            name: 'lookup',
            namespace: 'crm',
            arguments: fc.arguments,
          },
          { type: 'function_call_output', call_id: fc.call_id, output: 'Ada, London' },
        ] as ResponseInputItem[],
      });
      assert.equal(answer.output_text, 'Tool result received: Ada, London');
      const history = (fake.requests[0].body as { messages: Array<{ content: unknown }> }).messages;
      assert.ok(JSON.stringify(history).includes('"name":"crm__lookup"'));
      // streamed: the item names the member, with its namespace; the arguments.done event, as the API's,
      // carries the arguments and the item's id only
      fake.reset();
      const stream = client.responses.stream({ model: 'haiku', input: ask, tools });
      let argsDone: string[] = [];
      for await (const e of stream)
        if (e.type === 'response.function_call_arguments.done') argsDone = Object.keys(e).sort();
      const final = await stream.finalResponse();
      const streamed = final.output.find((o) => o.type === 'function_call');
      assert.ok(streamed && streamed.type === 'function_call');
      assert.deepEqual([streamed.name, streamed.namespace], ['lookup', 'crm']);
      assert.deepEqual(argsDone, ['arguments', 'item_id', 'output_index', 'sequence_number', 'type']);
      // an OpenAI model gets the client's tools untouched, web search included
      fake.reset();
      const same = await client.responses.create({ model: 'mini', input: 'hi', tools }).withResponse();
      assert.equal(same.response.headers.get('svc-dropped-tools'), null);
      assert.deepEqual(
        (fake.requests[0].body as { tools: unknown }).tools,
        JSON.parse(JSON.stringify(tools)),
      );
    },
  );

  await t.test(
    'service_tier, which Claude has no form of, is left out on a Claude model and named in svc-dropped-params, as on the Chat path, and so is a paid tier the OpenAI model has no prices for',
    async () => {
      const claude = await client.responses
        .create({ model: 'haiku', input: 'hi', service_tier: 'flex' })
        .withResponse();
      assert.equal(claude.response.headers.get('svc-dropped-params'), 'service_tier');
      assert.equal((fake.requests.at(-1)!.body as Record<string, unknown>).service_tier, undefined);
      const openai = await client.responses
        .create({ model: 'mini', input: 'hi', service_tier: 'flex' })
        .withResponse();
      // the built-in table prices no tier: flex would run billed at the standard prices
      assert.equal(openai.response.headers.get('svc-dropped-params'), 'service_tier');
      assert.equal((fake.requests.at(-1)!.body as Record<string, unknown>).service_tier, undefined);
      assert.equal(openai.data.service_tier, 'default');
    },
  );

  await t.test(
    'previous_response_id on a model that is not OpenAI is a 400 that says what works',
    async () => {
      await assert.rejects(
        client.responses.create({ model: 'haiku', input: 'and then?', previous_response_id: 'resp_abc' }),
        (err) =>
          err instanceof OpenAI.BadRequestError &&
          err.code === 'invalid_request' &&
          /^400 previous_response_id: a response stored by OpenAI or no longer kept by this gateway can be served only by an OpenAI model, and anthropic:claude-haiku-4-5 is not one/.test(
            err.message,
          ) &&
          /send the whole conversation as input items/.test(err.message),
      );
      assert.equal(fake.requests.length, 0);
      // Codex's additional_tools item and a hosted tool: named, with what works instead
      const codexLike = [
        { type: 'additional_tools', role: 'developer', tools: [] },
        { role: 'user', content: 'hi' },
      ] as unknown as ResponseInputItem[];
      const cases: Array<[Partial<ResponseCreateParamsNonStreaming>, string]> = [
        [{ input: codexLike }, '400 input.0: an input item of type additional_tools'],
        [
          { tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] },
          '400 tools.0: a tool of type file_search',
        ],
      ];
      for (const [params, field] of cases) {
        await assert.rejects(
          client.responses.create({ model: 'anthropic:claude-haiku-4-5', input: 'hi', ...params }),
          (err) => err instanceof OpenAI.BadRequestError && err.message.startsWith(field),
        );
      }
      assert.equal(fake.requests.length, 0);
      // the gateway stores nothing: retrieving a response is an OpenAI-shaped 404 the SDK raises as its own
      // each asked only when awaited: a 404 answered while the other is awaited would be an unhandled rejection
      for (const ask of [
        () => client.responses.retrieve('resp_abc'),
        () => client.responses.delete('resp_abc'),
      ])
        await assert.rejects(ask(), (err) => err instanceof OpenAI.NotFoundError);
      // the same follow-up on an OpenAI model is the provider's to answer (OpenAI stored no such response)
      await assert.rejects(
        client.responses.create({ model: 'mini', input: 'and then?', previous_response_id: 'resp_abc' }),
        (err) =>
          err instanceof OpenAI.BadRequestError &&
          /Previous response with id 'resp_abc' not found/.test(err.message),
      );
      assert.equal((fake.requests[0].body as Record<string, unknown>).previous_response_id, 'resp_abc');
    },
  );

  await t.test(
    'a stream that failed, or that its client left, keeps nothing: a follow-up naming it is a 400, never an answer without it',
    async () => {
      // a key of its own: the fake numbers its ids afresh after each reset, so an id may repeat one this
      // gateway kept for the first key's earlier answers (a provider never reuses one)
      const own = new OpenAI({ apiKey: (await stack.issue()).token, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      /** The id `response.created` announced, and the stream helper's end (its finalResponse settled). */
      const streamed = async (model: string, input: string, leave = false) => {
        const controller = new AbortController();
        const stream = own.responses.stream({ model, input }, { signal: controller.signal });
        let id = '';
        stream.on('response.created', (e) => {
          id = e.response.id;
        });
        stream.on('response.output_text.delta', () => {
          if (leave) controller.abort();
        });
        const end = await stream.finalResponse().then(
          (r) => r,
          (err: unknown) => err,
        );
        return { id, end };
      };
      const followUp = (id: string, model: string) =>
        assert.rejects(
          own.responses.create({ model: 'haiku', input: 'and the number?', previous_response_id: id }),
          (err) =>
            err instanceof OpenAI.BadRequestError &&
            err.code === 'invalid_request' &&
            /previous_response_id/.test(err.message),
          `${model}: the follow-up of ${id}`,
        );
      for (const [model, input, leave] of [
        // a reset after the first text, translated from Claude and on OpenAI's own wire
        ['haiku', 'the number is 42 [[fake:reset-after=5]]', false],
        ['mini', 'the number is 42 [[fake:reset-after=5]]', false],
        // the client leaves at the first text while the rest is held back upstream
        ['haiku', 'the number is 42 [[fake:hold-after=6]]', true],
      ] as const) {
        fake.reset();
        const { id, end } = await streamed(model, input, leave);
        assert.ok(id, `${model}: response.created named the response`);
        // finalResponse() never hands out the broken answer as a whole one
        if (leave) assert.ok(end instanceof OpenAI.APIUserAbortError, `${model}: ${end}`);
        else
          assert.ok(
            end instanceof OpenAI.APIError && end.code === 'upstream_error',
            `${model}: not the upstream_error APIError: ${end}`,
          );
        const sent = fake.requests.length;
        await followUp(id, model);
        assert.equal(fake.requests.length, sent, `${model}: the follow-up reached no provider`);
      }
    },
  );
});

/** The text of an Anthropic message's content (a string or text blocks). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return (content as Array<{ text?: string }>).map((b) => b.text ?? '').join('');
}

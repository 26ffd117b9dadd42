/**
 * The Anthropic SDK through the gateway to each provider, streaming and not, for plain text, a tool call
 * answered in a second turn, and a base64 PNG: the SDK sees the right message, the provider receives exactly
 * the expected body (same wire: the client's body with only `model` replaced), and the trace store holds the
 * turn's four events with the right attribution and cost.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type Anthropic from '@anthropic-ai/sdk';
import { APIError } from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { REDACTED_DATA } from '../fake-provider/responses.ts';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';
import {
  checkTrace,
  checkUpstream,
  conversation,
  KINDS,
  type MatrixProvider,
  PROVIDERS,
  scriptFake,
  type ToolCall,
  type TurnSpec,
  USAGE,
} from '../helpers/sdk-matrix.ts';

// SDK 1.x sends this version; a same-wire upstream must receive the client's version unchanged.
const CLIENT_VERSION = '2026-10-21';
// A translated request carries the gateway's default version (wire-formats §1.2).
const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

let stack: GatewayStack;
before(async () => {
  stack = await startGatewayStack();
});
after(async () => {
  await stack?.stop();
});

for (const p of PROVIDERS) {
  for (const stream of [false, true]) {
    for (const kind of KINDS) {
      const mode = stream ? 'streaming' : 'non-streaming';
      test(`Anthropic SDK → ${p.model}, ${mode}, ${kind}: answer, upstream body and trace are right`, async () => {
        let call: ToolCall | undefined;
        for (const next of conversation(kind)) call = await exchange(p, stream, next(call));
      });
    }
  }
}

// Message threads (beta message-threads-2026-08-12): the SDK's tool runner threads by default, so its
// second turn sends only the tool result and names the reply it continues. A Claude model continues the
// thread the Anthropic API holds; any other model is refused the way the API refuses a request it cannot
// thread (error_code thread_unsupported_request), on which the runner sends the whole conversation again.
for (const p of PROVIDERS) {
  test(`Anthropic SDK tool runner (a message thread) → ${p.model}: the tool's result reaches the model`, async () => {
    stack.fake.reset();
    const weather = betaTool({
      name: 'get_weather',
      description: 'Weather of a city',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      run: async ({ city }) => `sunny in ${city}`,
    });
    const answer = await stack.anthropic.beta.messages.toolRunner({
      model: p.model,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'weather? [[fake:tool_call]]' }],
      tools: [weather],
    });
    assert.deepEqual(
      answer.content.map((b) => pick(b, ['type', 'text'])),
      [{ type: 'text', text: 'Tool result received: sunny in city-value' }],
    );
    const sent = stack.fake.requests.map((r) => r.body as Record<string, unknown>);
    assert.equal(sent.length, 2, 'one upstream call per turn, none refused');
    if (p.wire === 'anthropic') {
      assert.deepEqual(sent[0].thread, { type: 'create' });
      assert.equal((sent[1].thread as { type: string }).type, 'continue');
      assert.equal((sent[1].messages as unknown[]).length, 1, 'a continued thread sends only the new turn');
    } else {
      assert.ok(sent.every((b) => !('thread' in b)));
      assert.deepEqual(
        (sent[1].messages as Array<{ role: string }>).map((m) => m.role),
        ['user', 'assistant', 'tool'],
        'the whole conversation, sent again without the thread',
      );
    }
  });
}

test('Anthropic SDK: a thread the provider no longer holds comes back with its error_code, on which the SDK replays it', async () => {
  stack.fake.reset();
  const err = await stack.anthropic.beta.messages
    .create({
      model: 'anthropic:claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
      thread: { type: 'continue', previous_message_id: 'msg_01Gone' },
      betas: ['message-threads-2026-08-12'],
    } as Anthropic.Beta.MessageCreateParamsNonStreaming)
    .then(
      () => assert.fail('a continue of an unknown thread is refused'),
      (e: unknown) => e,
    );
  assert.ok(err instanceof APIError);
  assert.equal(err.status, 400);
  assert.equal(err.errorCode, 'thread_not_found');
  const body = err.error as { error: { code: string; details: Record<string, unknown> } };
  assert.equal(body.error.code, 'upstream_invalid_request');
  assert.equal(body.error.details.upstream_status, 404);
});

test('Anthropic SDK: a continued thread reserves the whole context on a capped key, since the provider bills what it holds', async () => {
  stack.fake.reset();
  const { token } = await stack.issue(['--daily-cap-usd', '0.05']);
  const headers = {
    'x-api-key': token,
    'anthropic-version': CLIENT_VERSION,
    'content-type': 'application/json',
  };
  const request = (thread?: Record<string, unknown>) =>
    fetch(`${stack.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { ...headers, 'anthropic-beta': 'message-threads-2026-08-12' },
      body: JSON.stringify({
        model: 'anthropic:claude-sonnet-4-5',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi' }],
        ...(thread ? { thread } : {}),
      }),
    });
  const created = await request({ type: 'create' });
  assert.equal(created.status, 200, await created.clone().text());
  const { id } = (await created.json()) as { id: string };
  const continued = await request({ type: 'continue', previous_message_id: id });
  assert.equal(continued.status, 429);
  const refusal = (await continued.json()) as { error: { code: string } };
  assert.equal(refusal.error.code, 'quota_exceeded');
});

// Extended thinking with a redacted block first: the answer hands both blocks over whole (a Claude model's
// as sent; OpenRouter's reasoning.encrypted / reasoning.text details as redacted_thinking / thinking), and
// the tool loop's replay reaches the provider with both, unchanged and in order, as the API requires.
for (const model of ['anthropic:claude-sonnet-4-5', 'openrouter:anthropic/claude-sonnet-4.5']) {
  for (const stream of [false, true]) {
    test(`Anthropic SDK → ${model}, ${stream ? 'streaming' : 'non-streaming'}: redacted and signed thinking come back whole and replay unchanged`, async () => {
      stack.fake.reset();
      const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: {} } }];
      const ask = {
        role: 'user' as const,
        content: 'weather? [[fake:redacted_thinking;thinking=hmm;tool_call]]',
      };
      const params = {
        model,
        max_tokens: 4096,
        thinking: { type: 'enabled' as const, budget_tokens: 2048 },
        tools,
        messages: [ask],
      };
      const first = stream
        ? await stack.anthropic.messages.stream(params).finalMessage()
        : await stack.anthropic.messages.create(params);
      const [redacted, thinking, call] = first.content;
      assert.deepEqual(
        first.content.map((b) => b.type),
        ['redacted_thinking', 'thinking', 'tool_use'],
      );
      assert.equal(redacted.type === 'redacted_thinking' && redacted.data, REDACTED_DATA);
      assert.ok(thinking.type === 'thinking' && thinking.thinking === 'hmm' && thinking.signature !== '');
      assert.ok(call.type === 'tool_use');
      stack.fake.reset();
      const second = await stack.anthropic.messages.create({
        ...params,
        messages: [
          ask,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'sunny' }] },
        ],
      });
      assert.equal(second.stop_reason, 'end_turn');
      const replayed = (stack.fake.requests[0].body as { messages: Array<Record<string, unknown>> })
        .messages[1];
      if (model.startsWith('anthropic:'))
        assert.deepEqual((replayed.content as Array<Record<string, unknown>>).slice(0, 2), [
          { type: 'redacted_thinking', data: REDACTED_DATA },
          { type: 'thinking', thinking: 'hmm', signature: thinking.signature },
        ]);
      else
        assert.deepEqual(replayed.reasoning_details, [
          { type: 'reasoning.encrypted', data: REDACTED_DATA },
          { type: 'reasoning.text', text: 'hmm', signature: thinking.signature },
        ]);
    });
  }
}

// A conversation moved between model families: an OpenRouter Gemini model's reasoning carries Google's seal
// (OpenRouter labels it google-gemini-v1), which Claude refuses for the whole request (400 "Invalid `signature`
// in `thinking` block"). Continued on Claude, directly or on OpenRouter, it is left out; continued on Gemini,
// it goes back with its seal and format as OpenRouter wrote them.
test('Anthropic SDK: a conversation answered by an OpenRouter Gemini model with reasoning continues on Claude, which never gets the Gemini seal', async () => {
  stack.fake.reset();
  const ask = { role: 'user' as const, content: 'plan it [[fake:thinking=weigh the options]]' };
  const params = { max_tokens: 4096, thinking: { type: 'enabled' as const, budget_tokens: 2048 } };
  // streamed: the signature arrives as a signature_delta
  const gemini = await stack.anthropic.messages
    .stream({ model: 'openrouter:google/gemini-2.5-flash', ...params, messages: [ask] })
    .finalMessage();
  const thought = gemini.content.find((b) => b.type === 'thinking');
  assert.ok(thought?.type === 'thinking' && thought.thinking === 'weigh the options');
  const history = (model: string) =>
    stack.anthropic.messages.create({
      model,
      ...params,
      messages: [ask, { role: 'assistant', content: gemini.content }, { role: 'user', content: 'go on' }],
    });
  stack.fake.reset();
  await history('openrouter:google/gemini-2.5-flash');
  const replayed = (stack.fake.requests[0].body as { messages: Array<Record<string, unknown>> }).messages[1];
  const [detail] = replayed.reasoning_details as Array<{ signature: string }>;
  assert.deepEqual(replayed.reasoning_details, [
    {
      type: 'reasoning.text',
      text: 'weigh the options',
      signature: detail.signature,
      format: 'google-gemini-v1',
    },
  ]);
  assert.ok(detail.signature.startsWith('CiQB'), detail.signature);
  for (const model of ['anthropic:claude-sonnet-4-5', 'openrouter:anthropic/claude-sonnet-4.5']) {
    stack.fake.reset();
    const next = await history(model);
    assert.equal(next.stop_reason, 'end_turn');
    const sent = JSON.stringify(stack.fake.requests[0].body);
    assert.ok(!sent.includes(detail.signature), `${model} got the Gemini seal: ${sent}`);
  }
  // a count of that conversation for Claude counts what the call sends: the marked Gemini seal, which the
  // API could never take, is left out of it too
  stack.fake.reset();
  const marked = thought.signature;
  assert.ok(marked.startsWith('svc-reasoning:google-gemini-v1:'), marked);
  const count = await stack.anthropic.messages.countTokens({
    model: 'anthropic:claude-sonnet-4-5',
    thinking: params.thinking,
    messages: [ask, { role: 'assistant', content: gemini.content }, { role: 'user', content: 'go on' }],
  });
  assert.ok(count.input_tokens > 0);
  const counted = JSON.stringify(stack.fake.requests[0].body);
  assert.equal(stack.fake.requests[0].path, '/v1/messages/count_tokens');
  assert.ok(!counted.includes(detail.signature), `the count got the Gemini seal: ${counted}`);
});

// The same move in a tool loop: the Gemini model called a tool, and its result goes to Claude with thinking
// on. Its reasoning left out, the tool turn has no thinking, which Claude refuses with thinking on (400
// "Expected `thinking` or `redacted_thinking`, but found `tool_use`", through OpenRouter too): that call goes
// without thinking, on Anthropic's API and on OpenRouter's Claude alike.
test('Anthropic SDK: a tool call an OpenRouter Gemini model made with reasoning, answered on Claude with thinking on, goes without thinking', async () => {
  stack.fake.reset();
  const tools: Anthropic.Tool[] = [
    {
      name: 'get_weather',
      description: 'Weather for a city',
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ];
  const ask = { role: 'user' as const, content: 'weather in Oslo? [[fake:thinking=look it up;tool_call]]' };
  const params = { max_tokens: 4096, thinking: { type: 'enabled' as const, budget_tokens: 2048 }, tools };
  const gemini = await stack.anthropic.messages.create({
    model: 'openrouter:google/gemini-2.5-flash',
    ...params,
    messages: [ask],
  });
  const call = gemini.content.find((b) => b.type === 'tool_use');
  assert.ok(call?.type === 'tool_use' && gemini.content[0].type === 'thinking');
  for (const model of ['anthropic:claude-sonnet-4-5', 'openrouter:anthropic/claude-sonnet-4.5']) {
    stack.fake.reset();
    const next: Anthropic.Message = await stack.anthropic.messages.create({
      model,
      ...params,
      messages: [
        ask,
        { role: 'assistant', content: gemini.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'sunny' }] },
      ],
    });
    assert.equal(next.type, 'message');
    const sent = stack.fake.requests[0].body as Record<string, unknown>;
    assert.equal(sent.thinking, undefined, `${model} got thinking on: ${JSON.stringify(sent)}`);
    assert.equal(sent.reasoning, undefined, `${model} got reasoning on: ${JSON.stringify(sent)}`);
  }
});

// Prompt caching as Claude Code asks for it: a breakpoint on the system prompt and one on the last block,
// which moves on each turn. The provider writes the prefix, the next turn reads it (the fake bills as the API
// does); the trace stamps each class and prices it: claude-sonnet-4-5 at 3 / 15, reads 0.30, writes 3.75.
test('Anthropic SDK → a Claude model, a conversation with moving cache_control breakpoints: cached tokens billed exactly', async () => {
  stack.fake.reset();
  const cached = { type: 'ephemeral' as const };
  const system = [{ type: 'text' as const, text: 'You are terse. '.repeat(400), cache_control: cached }];
  const history: Anthropic.MessageParam[] = [];
  const usages: Anthropic.Usage[] = [];
  for (const ask of ['first question', 'second question', 'third question']) {
    const turn = {
      role: 'user' as const,
      content: [{ type: 'text' as const, text: ask, cache_control: cached }],
    };
    const { data, response } = await stack.anthropic.messages
      .create({ model: 'anthropic:claude-sonnet-4-5', max_tokens: 256, system, messages: [...history, turn] })
      .withResponse();
    usages.push(data.usage);
    const done = readEvents(stack.files.db, 'llm.call_completed').find(
      (e) => e.turn_id === response.headers.get('svc-request-id'),
    )!.payload;
    const u = data.usage;
    const nanoUsd =
      3000 * u.input_tokens +
      15000 * u.output_tokens +
      300 * (u.cache_read_input_tokens ?? 0) +
      3750 * (u.cache_creation_input_tokens ?? 0);
    assert.deepEqual(
      [done.input_tokens, done.cached_input_tokens, done.cache_creation_input_tokens, Number(done.cost_usd)],
      [u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens, nanoUsd / 1e9],
    );
    history.push({ role: 'user', content: ask }, { role: 'assistant', content: data.content });
  }
  const [first, second, third] = usages;
  assert.equal(first.cache_read_input_tokens, 0);
  assert.ok((first.cache_creation_input_tokens ?? 0) > 1024, 'the whole prompt is written');
  // each turn reads what the one before wrote (a string or one text block caches alike) and writes the rest
  assert.equal(second.cache_read_input_tokens, first.cache_creation_input_tokens);
  assert.equal(
    third.cache_read_input_tokens,
    (second.cache_read_input_tokens ?? 0) + (second.cache_creation_input_tokens ?? 0),
  );
  assert.ok((third.cache_creation_input_tokens ?? 0) > 0);
});

// A top-level cache_control (automatic caching) puts the breakpoint on the last cacheable block itself: the
// provider writes the whole prompt, and the next turn reads it; the gateway forwards the field and bills both.
test('Anthropic SDK → a Claude model, top-level cache_control: the next turn reads what the last wrote, billed exactly', async () => {
  stack.fake.reset();
  const system = 'You are terse. '.repeat(400);
  const history: Anthropic.MessageParam[] = [];
  const usages: Anthropic.Usage[] = [];
  for (const ask of ['first question', 'second question']) {
    const params = {
      model: 'anthropic:claude-sonnet-4-5',
      max_tokens: 256,
      system,
      cache_control: { type: 'ephemeral' },
      messages: [...history, { role: 'user', content: ask }],
    } as Anthropic.MessageCreateParamsNonStreaming;
    const { data, response } = await stack.anthropic.messages.create(params).withResponse();
    usages.push(data.usage);
    const done = readEvents(stack.files.db, 'llm.call_completed').filter(
      (e) => e.turn_id === response.headers.get('svc-request-id'),
    );
    const u = data.usage;
    const nanoUsd =
      3000 * u.input_tokens +
      15000 * u.output_tokens +
      300 * (u.cache_read_input_tokens ?? 0) +
      3750 * (u.cache_creation_input_tokens ?? 0);
    assert.deepEqual(
      done.map((e) => [
        e.payload.cached_input_tokens,
        e.payload.cache_creation_input_tokens,
        Number(e.payload.cost_usd),
      ]),
      [[u.cache_read_input_tokens, u.cache_creation_input_tokens, nanoUsd / 1e9]],
      'one trace record, priced by class',
    );
    history.push({ role: 'user', content: ask }, { role: 'assistant', content: data.content });
  }
  assert.deepEqual(
    stack.fake.requests.map((r) => (r.body as Record<string, unknown>).cache_control),
    [{ type: 'ephemeral' }, { type: 'ephemeral' }],
  );
  const [first, second] = usages;
  assert.equal(first.cache_read_input_tokens, 0);
  assert.ok((first.cache_creation_input_tokens ?? 0) > 1024, 'the whole prompt is written');
  assert.equal(first.input_tokens, 0, 'the breakpoint is on the last block');
  assert.equal(second.cache_read_input_tokens, first.cache_creation_input_tokens);
  assert.ok((second.cache_creation_input_tokens ?? 0) > 0, 'the new turns are written');
  // more than four breakpoints (one in a tool result) is the API's 400, passed on as sent
  const marked = { type: 'text' as const, text: 'x', cache_control: { type: 'ephemeral' as const } };
  const result = { type: 'tool_result' as const, tool_use_id: 't1', content: [marked] };
  await assert.rejects(
    stack.anthropic.messages.create({
      model: 'anthropic:claude-sonnet-4-5',
      max_tokens: 16,
      system: [marked, marked],
      messages: [
        { role: 'user', content: [marked] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
        { role: 'user', content: [result, marked] },
      ],
    }),
    (err: { status?: number; message?: string }) =>
      err.status === 400 &&
      /A maximum of 4 blocks with cache_control may be provided\. Found 5\./.test(err.message ?? ''),
  );
});

// Anthropic's structured output (output_config.format) is always constrained to the schema; OpenAI's
// json_schema is only with strict: true, which its strict mode accepts only for a schema whose objects
// require every property and are closed (as for strict tools).
for (const p of PROVIDERS.filter((x) => x.wire === 'openai')) {
  test(`Anthropic SDK messages.parse() → ${p.model}: the schema is asked strictly where OpenAI's strict mode takes it`, async () => {
    const closed = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    const open = { type: 'object', properties: { city: { type: 'string' }, note: { type: 'string' } } };
    for (const [schema, strict] of [
      [closed, true],
      [open, false],
    ] as const) {
      stack.fake.reset();
      stack.fake.script([{ text: '{"city":"Oslo"}', usage: USAGE }]);
      const parsed = await stack.anthropic.messages.parse({
        model: p.model,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Which city?' }],
        output_config: { format: { type: 'json_schema', schema } },
      });
      assert.deepEqual(parsed.parsed_output, { city: 'Oslo' });
      const [got] = stack.fake.requests;
      assert.deepEqual((got.body as Record<string, unknown>).response_format, {
        type: 'json_schema',
        json_schema: { name: 'response', schema, strict },
      });
    }
  });
}

// the stream helper's text events and a forced tool choice, on each wire; each call one trace record
for (const p of PROVIDERS.filter((x) => x.provider !== 'openrouter')) {
  test(`Anthropic SDK helpers → ${p.model}: stream on('text') and finalMessage, tool_choice any`, async () => {
    stack.fake.reset();
    const before = readEvents(stack.files.db, 'llm.call_completed').length;
    const stream = stack.anthropic.messages.stream({
      model: p.model,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi [[fake:text=streamed reply]]' }],
    });
    let text = '';
    stream.on('text', (delta) => {
      text += delta;
    });
    const message = await stream.finalMessage();
    assert.deepEqual(
      [text, message.stop_reason, message.usage.output_tokens],
      ['streamed reply', 'end_turn', 2],
    );
    const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: {} } }];
    const forced = { model: p.model, max_tokens: 64, tools, tool_choice: { type: 'any' as const } };
    for (const stream of [false, true]) {
      const params = { ...forced, messages: [{ role: 'user' as const, content: 'weather' }] };
      const answer = stream
        ? await stack.anthropic.messages.stream(params).finalMessage()
        : await stack.anthropic.messages.create(params);
      assert.deepEqual(
        answer.content.map((b) => b.type),
        ['tool_use'],
      );
    }
    const calls = readEvents(stack.files.db, 'llm.call_completed').slice(before);
    assert.deepEqual(
      calls.map((e) => [e.payload.inbound_shape, e.payload.model, e.payload.stop_reason]),
      [
        ['anthropic', p.model, 'end_turn'],
        ['anthropic', p.model, 'tool_use'],
        ['anthropic', p.model, 'tool_use'],
      ],
    );
  });
}

// the model stops where its text reaches a stop sequence; Claude names it, OpenAI's finish_reason stop does not
test('stop sequences: the Anthropic SDK on Claude and on gpt-4.1, the OpenAI SDK on Claude, streamed and not', async () => {
  const content = 'count [[fake:text=1 2 ### 3 4]]';
  const ask = (model: string) => ({
    model,
    max_tokens: 64,
    stop_sequences: ['###'],
    messages: [{ role: 'user' as const, content }],
  });
  for (const [model, stop, sequence] of [
    ['anthropic:claude-sonnet-4-5', 'stop_sequence', '###'],
    ['openai:gpt-4.1', 'end_turn', null],
  ] as const) {
    stack.fake.reset();
    const whole = await stack.anthropic.messages.create(ask(model));
    const streamed = await stack.anthropic.messages.stream(ask(model)).finalMessage();
    for (const m of [whole, streamed])
      assert.deepEqual(
        [m.content, m.stop_reason, m.stop_sequence],
        [[{ type: 'text', text: '1 2 ' }], stop, sequence],
        model,
      );
    const sent = stack.fake.requests[0].body as Record<string, unknown>;
    assert.deepEqual(model.startsWith('openai:') ? sent.stop : sent.stop_sequences, ['###']);
  }
  const chat = {
    model: 'anthropic:claude-sonnet-4-5',
    stop: ['###'],
    messages: [{ role: 'user' as const, content }],
  };
  const whole = await stack.openai.chat.completions.create(chat);
  const streamed = await stack.openai.chat.completions.stream(chat).finalChatCompletion();
  for (const c of [whole, streamed])
    assert.deepEqual([c.choices[0].message.content, c.choices[0].finish_reason], ['1 2 ', 'stop']);
});

test('Anthropic SDK → a GPT reasoning model with temperature 0: left out (the model takes only 1) and named in svc-dropped-params', async () => {
  const p = PROVIDERS.find((x) => x.model === 'openai:gpt-5-mini')!;
  stack.fake.reset();
  stack.fake.script([{ text: 'ok', usage: USAGE }]);
  // SDK 1.x's types leave temperature out (the 2026-10-21 version refuses it); the wire still takes it
  const params = {
    model: p.model,
    max_tokens: 64,
    temperature: 0,
    messages: [{ role: 'user', content: 'hi' }],
  };
  const { response } = await stack.anthropic.messages
    .create(params as unknown as Anthropic.MessageCreateParamsNonStreaming)
    .withResponse();
  assert.equal(response.headers.get('svc-dropped-params'), 'temperature');
  const [got] = stack.fake.requests;
  assert.equal((got.body as Record<string, unknown>).temperature, undefined);
});

for (const p of PROVIDERS.filter((x) => x.wire === 'openai')) {
  test(`Anthropic SDK documents → ${p.model}: each document's context reaches the model, and citations asked for are named as left out`, async () => {
    stack.fake.reset();
    const pdf = Buffer.from('%PDF-1.4\n').toString('base64');
    const { response } = await stack.anthropic.messages
      .create({
        model: p.model,
        max_tokens: 64,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'compare them' },
              {
                type: 'document',
                title: 'q3.pdf',
                context: 'The Q3 report, unaudited',
                citations: { enabled: true },
                source: { type: 'base64', media_type: 'application/pdf', data: pdf },
              },
              {
                type: 'document',
                title: 'notes',
                context: 'Notes from the board meeting',
                source: { type: 'text', media_type: 'text/plain', data: 'Revenue is up.' },
              },
            ],
          },
        ],
      })
      .withResponse();
    const sent = stack.fake.requests[0]!.body as { messages: Array<{ content: unknown }> };
    assert.deepEqual(sent.messages[0]!.content, [
      { type: 'text', text: 'compare them' },
      { type: 'text', text: 'The Q3 report, unaudited' },
      { type: 'file', file: { filename: 'q3.pdf', file_data: `data:application/pdf;base64,${pdf}` } },
      { type: 'text', text: 'notes\nNotes from the board meeting\nRevenue is up.' },
    ]);
    // an OpenAI model cites no document: what was asked for is not done, and the answer says so
    assert.equal(response.headers.get('svc-dropped-params'), 'messages.0.content.1.citations');
  });
}

// wire-formats §1.2: the 2026-10-21 version removed temperature, top_p and top_k, which a Claude model then
// refuses even at their defaults; same wire, the gateway forwards the body and the provider's 400 comes back
test("Anthropic SDK 1.x (2026-10-21) with temperature → a Claude model: forwarded, and the provider's 400 reaches the client", async () => {
  stack.fake.reset();
  const params = {
    model: 'anthropic:claude-sonnet-4-5',
    max_tokens: 64,
    temperature: 1,
    messages: [{ role: 'user', content: 'hi' }],
  };
  const err = await stack.anthropic.messages
    .create(params as unknown as Anthropic.MessageCreateParamsNonStreaming)
    .then(
      () => assert.fail('the 2026-10-21 version refuses temperature'),
      (e: unknown) => e,
    );
  assert.ok(err instanceof APIError);
  assert.equal(err.status, 400);
  assert.match(err.message, /temperature: Extra inputs are not permitted/);
  const [got] = stack.fake.requests;
  assert.equal(stack.fake.requests.length, 1, 'one upstream call, not retried');
  assert.equal(got.headers['anthropic-version'], CLIENT_VERSION);
  assert.equal((got.body as Record<string, unknown>).temperature, 1);
});

// wire-formats §1.2: role "system" inside messages is taken from Claude Opus 4.8 on. Same wire to the model
// asked, it goes as sent (the provider judges it); a body written for a newer model and routed to an older
// one (claude-haiku-5, a name of no built-in model, to claude-haiku-4-5) gets each such message folded into the
// user turn beside it.
test('Anthropic SDK, a mid-conversation system message for a newer Claude model routed to claude-haiku-4-5: folded into the user turn', async () => {
  stack.fake.reset();
  const messages = [
    { role: 'user', content: 'hi' },
    { role: 'system', content: 'Answer in French.' },
    { role: 'assistant', content: 'Bonjour' },
    { role: 'user', content: [{ type: 'text', text: 'again' }] },
  ];
  const asked = { max_tokens: 64, messages } as unknown as Anthropic.MessageCreateParamsNonStreaming;
  const { data, response } = await stack.anthropic.messages
    .create({ ...asked, model: 'claude-haiku-5' })
    .withResponse();
  assert.equal(data.stop_reason, 'end_turn');
  assert.equal(response.headers.get('svc-routed-model'), 'anthropic:claude-haiku-4-5');
  assert.deepEqual((stack.fake.requests[0].body as Record<string, unknown>).messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'text', text: 'Answer in French.' },
      ],
    },
    { role: 'assistant', content: 'Bonjour' },
    { role: 'user', content: [{ type: 'text', text: 'again' }] },
  ]);
  // the model asked by name gets the body as sent, and refuses the role as the API does
  const err = await stack.anthropic.messages.create({ ...asked, model: 'anthropic:claude-sonnet-4-5' }).then(
    () => assert.fail('claude-sonnet-4-5 takes no system messages'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof APIError);
  assert.equal(err.status, 400);
  assert.match(err.message, /messages\.1\.role/);
});

// Claude Opus 5.5 refuses forced tool use and thinking turned off (its "What's new": each a 400). A body written
// for Claude Opus 5, which the opus family rule serves with Opus 5.5, is fitted: tool_choice auto, no thinking
// field (the model thinks adaptively), both named. Asked of Opus 5.5 by name it goes as sent and is refused.
test('Anthropic SDK, a body for claude-opus-5 served by Claude Opus 5.5: no forced tool use, no thinking off', async () => {
  stack.fake.reset();
  const asked = {
    max_tokens: 64,
    messages: [{ role: 'user' as const, content: 'weather?' }],
    tools: [{ name: 'get_weather', input_schema: { type: 'object' as const } }],
    tool_choice: { type: 'any' as const },
    thinking: { type: 'disabled' as const },
  };
  const { response } = await stack.anthropic.messages
    .create({ ...asked, model: 'claude-opus-5' })
    .withResponse();
  assert.equal(response.headers.get('svc-routed-model'), 'anthropic:claude-opus-5-5');
  assert.equal(response.headers.get('svc-dropped-params'), 'thinking, tool_choice');
  const sent = stack.fake.requests[0].body as Record<string, unknown>;
  assert.deepEqual(
    [sent.model, sent.tool_choice, sent.thinking],
    ['claude-opus-5-5', { type: 'auto' }, undefined],
  );
  for (const [field, message] of [
    ['tool_choice', /"tool_choice\.type\.any" is not supported for this model/],
    ['thinking', /"thinking\.type\.disabled" is not supported for this model/],
  ] as const) {
    const body = {
      ...asked,
      model: 'claude-opus-5-5',
      ...(field === 'thinking' ? { tool_choice: { type: 'auto' as const } } : {}),
    };
    const err = await stack.anthropic.messages.create(body).then(
      () => assert.fail(`Opus 5.5 refuses the ${field}`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof APIError);
    assert.equal(err.status, 400, field);
    assert.match(String((err.error as { error?: { message?: string } }).error?.message), message);
  }
});

// Claude Sonnet 5.5 refuses thinking turned off and a thinking budget ("What's new in Claude Sonnet 5.5": each a
// 400; between_tools is its lowest setting). A body written for Claude 3.7 Sonnet, which the sonnet family rule
// serves with Sonnet 5.5, is fitted: turned off becomes between_tools, a budget adaptive thinking.
test('Anthropic SDK, a body for claude-3-7-sonnet served by Claude Sonnet 5.5: thinking off is between_tools, a budget adaptive', async () => {
  stack.fake.reset();
  const base = {
    model: 'claude-3-7-sonnet-latest',
    max_tokens: 4000,
    messages: [{ role: 'user' as const, content: 'hi' }],
  };
  const off = await stack.anthropic.messages
    .create({ ...base, thinking: { type: 'disabled' } })
    .withResponse();
  assert.equal(off.response.headers.get('svc-routed-model'), 'anthropic:claude-sonnet-5-5');
  const budget = await stack.anthropic.messages.create({
    ...base,
    thinking: { type: 'enabled', budget_tokens: 2048 },
  });
  assert.equal(budget.type, 'message');
  assert.deepEqual(
    stack.fake.requests.map((r) => (r.body as { thinking?: unknown }).thinking),
    [{ type: 'between_tools' }, { type: 'adaptive' }],
  );
});

/** One request through the gateway; returns the tool call it answered with, if any. */
async function exchange(p: MatrixProvider, stream: boolean, turn: TurnSpec): Promise<ToolCall | undefined> {
  scriptFake(stack, turn);
  const body = { model: p.model, max_tokens: 256, ...turn.anthropic };
  const { message, turnId } = await send(body, stream);

  assert.equal(message.model, p.model, 'model echoes the requested name');
  assert.equal(message.type, 'message');
  assert.match(message.id, /^msg_/);
  assert.equal(message.role, 'assistant');
  assert.equal(message.stop_reason, turn.expect.stop);
  assert.equal(message.stop_sequence, null);
  assert.deepEqual(
    pick(message.usage, [
      'input_tokens',
      'cache_read_input_tokens',
      'cache_creation_input_tokens',
      'output_tokens',
    ]),
    {
      input_tokens: USAGE.input,
      cache_read_input_tokens: USAGE.cacheRead,
      cache_creation_input_tokens: USAGE.cacheWrite,
      output_tokens: USAGE.output,
    },
  );
  let call: ToolCall | undefined;
  if ('text' in turn.expect) {
    assert.deepEqual(
      message.content.map((b) => pick(b, ['type', 'text'])),
      [{ type: 'text', text: turn.expect.text }],
    );
  } else {
    assert.equal(message.content.length, 1, JSON.stringify(message.content));
    const block = message.content[0];
    assert.equal(block.type, 'tool_use');
    call = { id: block.id, name: block.name, input: block.input as Record<string, unknown> };
    assert.match(call.id, /^[a-zA-Z0-9_-]+$/);
    assert.deepEqual({ name: call.name, input: call.input }, turn.expect.tool);
  }

  checkUpstream(
    stack,
    p,
    upstreamBody(p, body, turn, stream),
    p.wire === 'anthropic' ? CLIENT_VERSION : DEFAULT_ANTHROPIC_VERSION,
  );
  checkTrace(stack.files.db, turnId, {
    p,
    shape: 'anthropic',
    requestedModel: p.model,
    keyId: stack.keyId,
    stopReason: turn.expect.stop,
    stream,
  });
  return call;
}

async function send(
  body: Record<string, unknown>,
  stream: boolean,
): Promise<{ message: Anthropic.Message; turnId: string | null }> {
  const params = body as unknown as Anthropic.MessageCreateParamsNonStreaming;
  if (!stream) {
    const { data, response } = await stack.anthropic.messages.create(params).withResponse();
    // the id the SDK hands the caller is the trace's turn id
    assert.equal(
      (data as { _request_id?: string | null })._request_id,
      response.headers.get('svc-request-id'),
    );
    return { message: data, turnId: response.headers.get('svc-request-id') };
  }
  const helper = stack.anthropic.messages.stream(params);
  const { response } = await helper.withResponse();
  assert.equal(response.headers.get('request-id'), response.headers.get('svc-request-id'));
  return { message: await helper.finalMessage(), turnId: response.headers.get('svc-request-id') };
}

/** Same wire: the client's body with only `model` replaced. Cross wire: the Chat Completions form (§5.1). */
function upstreamBody(
  p: MatrixProvider,
  body: Record<string, unknown>,
  turn: TurnSpec,
  stream: boolean,
): Record<string, unknown> {
  if (p.wire === 'anthropic') return { ...body, model: p.upstreamModel, ...(stream ? { stream: true } : {}) };
  // OpenAI takes max_completion_tokens (reasoning models reject max_tokens); OpenRouter documents max_tokens
  const maxKey = p.provider === 'openrouter' ? 'max_tokens' : 'max_completion_tokens';
  return {
    model: p.upstreamModel,
    ...turn.chat,
    [maxKey]: 256,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

function pick(o: object, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, (o as Record<string, unknown>)[k]]));
}

// Anthropic's 1M-token window (anthropic-beta context-1m-2025-08-07, Claude Sonnet 4 / 4.5): a prompt over
// 200,000 tokens is routed to the model with the beta and the header reaches the provider as sent (the
// long-context rates, when a models.yaml states them, are unit-tested). Without the beta the same prompt fits
// no window (the provider itself refuses it with a 400).
test('Anthropic SDK with the context-1m beta: a 225k-token prompt is routed and forwarded with its header', async () => {
  stack.fake.reset();
  const prompt = `${'x'.repeat(900_000)} [[fake:usage=in:1000,cache_read:150000,cache_write:60000,out:10]]`;
  const betas = ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'];
  const { data, response } = await stack.anthropic.beta.messages
    .create({
      model: 'anthropic:claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: prompt }],
      betas,
    })
    .withResponse();
  assert.equal(data.usage.cache_read_input_tokens, 150_000);
  const turnId = response.headers.get('svc-request-id');
  const route = readEvents(stack.files.db, 'route.decided').find((e) => e.turn_id === turnId);
  assert.equal(route?.payload.chosen_model, 'anthropic:claude-sonnet-4-5');
  const done = readEvents(stack.files.db, 'llm.call_completed').find((e) => e.turn_id === turnId);
  // the built-in table states no long-context rates (README: Models and prices), so the standard ones:
  // 1000 × 3 + 150000 × 0.30 + 60000 × 3.75 + 10 × 15 = 273150 µ$
  assert.equal(done?.payload.cost_usd, '0.273150');
  assert.equal(stack.fake.requests.length, 1);
  assert.equal(stack.fake.requests[0].headers['anthropic-beta'], betas.join(','));

  // the same prompt without the beta: no model's window takes it
  const refused = await stack.anthropic.messages
    .create({
      model: 'anthropic:claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: prompt }],
    })
    .then(
      () => assert.fail('a 225k-token prompt without the beta is refused'),
      (e: unknown) => e,
    );
  assert.ok(refused instanceof APIError);
  assert.equal(refused.status, 503);
  assert.match(JSON.stringify(refused.error), /context_too_small/);
  assert.equal(stack.fake.requests.length, 1, 'the gateway never sent the prompt without the beta');
  // the provider says so too, as Anthropic does, when asked directly
  const direct = await fetch(`${stack.fake.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': 'k', 'anthropic-version': CLIENT_VERSION, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: prompt }],
    }),
  });
  assert.equal(direct.status, 400);
  assert.match(
    ((await direct.json()) as { error: { message: string } }).error.message,
    /^prompt is too long: \d+ tokens > 200000 maximum$/,
  );
});

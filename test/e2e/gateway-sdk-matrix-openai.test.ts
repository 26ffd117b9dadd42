/**
 * The OpenAI SDK through the gateway to each provider, streaming and not, for plain text, a tool call
 * answered in a second turn, and a base64 PNG: the SDK sees the right completion, the provider receives
 * exactly the expected body (same wire: the client's body with only `model` replaced), and the trace store
 * holds the turn's four events with the right attribution and cost.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type OpenAI from 'openai';
import { zodFunction, zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { z } from 'zod';
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

// The version an Anthropic upstream gets when the client did not speak Anthropic (wire-formats §1.2).
const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';
const FINISH = { end_turn: 'stop', tool_use: 'tool_calls' } as const;
const STREAM_FIELDS = { stream: true, stream_options: { include_usage: true } };

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
      test(`OpenAI SDK → ${p.model}, ${mode}, ${kind}: answer, upstream body and trace are right`, async () => {
        let call: ToolCall | undefined;
        for (const next of conversation(kind)) call = await exchange(p, stream, next(call));
      });
    }
  }
}

for (const p of PROVIDERS) {
  test(`OpenAI SDK → ${p.model}, streaming without include_usage: the upstream is still asked, the client gets no usage chunk`, async () => {
    const [first] = conversation('text');
    const turn = first();
    assert.ok('text' in turn.expect);
    scriptFake(stack, turn);
    const body = { model: p.model, max_completion_tokens: 256, ...turn.chat, stream: true };
    const { completion, turnId, chunks } = await send(body);
    assert.equal(completion.choices[0].message.content, turn.expect.text);
    assert.equal(completion.usage ?? null, null);
    // as the API answers a client that did not ask: no chunk has a `usage` key at all (not even null)
    assert.deepEqual(
      chunks.filter((c) => 'usage' in c),
      [],
    );
    const upstream =
      p.wire === 'openai'
        ? { ...body, model: p.upstreamModel, ...STREAM_FIELDS }
        : { model: p.upstreamModel, max_tokens: 256, ...turn.anthropic, stream: true };
    checkUpstream(stack, p, upstream, DEFAULT_ANTHROPIC_VERSION);
    checkTrace(stack.files.db, turnId, traceOf(p, turn, true));
  });
}

test('OpenAI SDK → a Claude model without max_completion_tokens: Claude is asked for its whole output limit (wire-formats §5.1, §6 #22)', async () => {
  const p = PROVIDERS.find((x) => x.wire === 'anthropic')!;
  const [first] = conversation('text');
  const turn = first();
  scriptFake(stack, turn);
  await send({ model: p.model, ...turn.chat });
  // claude-sonnet-4-5: max_output_tokens 64,000 in the built-in registry
  checkUpstream(
    stack,
    p,
    { model: p.upstreamModel, max_tokens: 64_000, ...turn.anthropic },
    DEFAULT_ANTHROPIC_VERSION,
  );
});

for (const p of PROVIDERS.filter((x) => x.wire === 'openai')) {
  test(`OpenAI SDK → ${p.model}, n: 2 streamed: the stream helper gets both choices, the trace the provider's usage`, async () => {
    const [first] = conversation('text');
    const turn = first();
    assert.ok('text' in turn.expect);
    scriptFake(stack, turn);
    const { completion, turnId } = await send({
      model: p.model,
      max_completion_tokens: 256,
      ...turn.chat,
      n: 2,
      ...STREAM_FIELDS,
    });
    assert.deepEqual(
      completion.choices.map((c) => [c.index, c.finish_reason, c.message.content]),
      [
        [0, 'stop', turn.expect.text],
        [1, 'stop', turn.expect.text],
      ],
    );
    assert.equal(completion.usage?.completion_tokens, USAGE.output);
    checkTrace(stack.files.db, turnId, traceOf(p, turn, true));
  });
}

test('OpenAI SDK → a Claude model with seed and frequency_penalty: the answer names them in svc-dropped-params', async () => {
  const p = PROVIDERS.find((x) => x.wire === 'anthropic')!;
  const [first] = conversation('text');
  const turn = first();
  scriptFake(stack, turn);
  const params = { model: p.model, ...turn.chat, seed: 7, frequency_penalty: 0.5 };
  const { response } = await stack.openai.chat.completions
    .create(params as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
    .withResponse();
  assert.equal(response.headers.get('svc-dropped-params'), 'seed, frequency_penalty');
  const [got] = stack.fake.requests;
  assert.equal((got.body as Record<string, unknown>).seed, undefined);
});

// A conversation moved between model families: an OpenRouter Gemini model's reasoning carries Google's seal,
// which Claude refuses for the whole request (400 "Invalid `signature` in `thinking` block"). Replayed as the
// client got it (Chat Completions reasoning_details, Responses reasoning items with encrypted_content) to
// Claude, directly or on OpenRouter, it is left out and the call is answered.
const CLAUDES = ['anthropic:claude-sonnet-4-5', 'openrouter:anthropic/claude-sonnet-4.5'];
test('OpenAI SDK: a conversation answered by an OpenRouter Gemini model with reasoning continues on Claude, which never gets the Gemini seal (Chat Completions and Responses)', async () => {
  stack.fake.reset();
  const ask = { role: 'user' as const, content: 'plan it [[fake:thinking]]' };
  const gemini = await stack.openai.chat.completions.create({
    model: 'openrouter:google/gemini-2.5-flash',
    messages: [ask],
  });
  const answer = gemini.choices[0].message as OpenAI.ChatCompletionMessage & {
    reasoning_details?: Array<{ signature?: string; format?: string }>;
  };
  const seal = answer.reasoning_details?.[0]?.signature ?? '';
  assert.equal(answer.reasoning_details?.[0]?.format, 'google-gemini-v1');
  assert.ok(seal.startsWith('CiQB'), seal);
  // streamed: the reasoning item's encrypted_content arrives with its output_item.done
  const responded = await stack.openai.responses
    .stream({
      model: 'openrouter:google/gemini-2.5-flash',
      input: [ask],
      store: false,
      include: ['reasoning.encrypted_content'],
    })
    .finalResponse();
  for (const model of CLAUDES) {
    stack.fake.reset();
    const chat = await stack.openai.chat.completions.create({
      model,
      messages: [
        ask,
        answer as OpenAI.ChatCompletionAssistantMessageParam,
        { role: 'user', content: 'go on' },
      ],
    });
    assert.equal(chat.choices[0].finish_reason, 'stop');
    const response = await stack.openai.responses.create({
      model,
      input: [
        ask,
        ...(responded.output as OpenAI.Responses.ResponseInputItem[]),
        { role: 'user', content: 'go on' },
      ],
      store: false,
    });
    assert.equal(response.status, 'completed');
    for (const { body } of stack.fake.requests)
      assert.ok(
        !JSON.stringify(body).includes(seal),
        `${model} got the Gemini seal: ${JSON.stringify(body)}`,
      );
  }
});

// The same move in a tool loop: the Gemini model called a tool, and its result goes to Claude with reasoning
// asked for. Its reasoning left out, the tool turn has no thinking, which Claude refuses with thinking on (400
// "Expected `thinking` or `redacted_thinking`, but found `tool_use`", through OpenRouter too): that call goes
// without reasoning (Chat Completions forwarded to OpenRouter, Responses translated).
test('OpenAI SDK: a tool call an OpenRouter Gemini model made with reasoning, answered on Claude with reasoning_effort, goes without reasoning (Chat Completions and Responses)', async () => {
  stack.fake.reset();
  const ask = { role: 'user' as const, content: 'weather in Oslo? [[fake:thinking;tool_call]]' };
  const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const gemini = await stack.openai.chat.completions.create({
    model: 'openrouter:google/gemini-2.5-flash',
    messages: [ask],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters } }],
    reasoning_effort: 'low',
  });
  const answer = gemini.choices[0].message;
  const [call] = answer.tool_calls ?? [];
  assert.ok(call && 'reasoning_details' in answer, JSON.stringify(answer));
  const responded = await stack.openai.responses.create({
    model: 'openrouter:google/gemini-2.5-flash',
    input: [ask],
    tools: [{ type: 'function', name: 'get_weather', parameters, strict: false }],
    reasoning: { effort: 'low' },
    store: false,
    include: ['reasoning.encrypted_content'],
  });
  const responsesCall = responded.output.find((item) => item.type === 'function_call');
  assert.ok(responsesCall?.type === 'function_call' && responded.output[0].type === 'reasoning');
  for (const model of CLAUDES) {
    stack.fake.reset();
    const chat = await stack.openai.chat.completions.create({
      model,
      messages: [
        ask,
        answer as OpenAI.ChatCompletionAssistantMessageParam,
        { role: 'tool', tool_call_id: call.id, content: 'sunny' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters } }],
      reasoning_effort: 'low',
    });
    assert.ok(chat.choices[0].message, model);
    const response: OpenAI.Responses.Response = await stack.openai.responses.create({
      model,
      input: [
        ask,
        ...(responded.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: responsesCall.call_id, output: 'sunny' },
      ],
      tools: [{ type: 'function', name: 'get_weather', parameters, strict: false }],
      reasoning: { effort: 'low' },
      store: false,
    });
    assert.equal(response.status, 'completed');
    for (const { body } of stack.fake.requests) {
      const sent = body as Record<string, unknown>;
      for (const name of ['thinking', 'reasoning', 'reasoning_effort'])
        assert.equal(sent[name], undefined, `${model} got ${name}: ${JSON.stringify(sent)}`);
    }
  }
});

// A Claude answer's web citations, streamed (Anthropic's citations_delta): Chat Completions sends them as one
// chunk's delta.annotations, which the SDK's stream helper sets on message.annotations; the Responses API as
// response.output_text.annotation.added events and on the done part and item. Both as the answer unstreamed has them.
test('OpenAI SDK → a Claude model: a streamed answer carries its web citations as the unstreamed one does (Chat Completions and Responses)', async () => {
  const model = 'anthropic:claude-sonnet-4-5';
  const input = 'capital of France? [[fake:text=Let me check.;cite]]';
  const messages = [{ role: 'user' as const, content: input }];
  // the cited block " Paris is the capital of France." follows "Let me check.": code points 13 to 45
  const cited = { url: 'https://example.com/paris', title: 'Paris - Example' };
  const expected = [{ type: 'url_citation', url_citation: { start_index: 13, end_index: 45, ...cited } }];
  const once = await stack.openai.chat.completions.create({ model, messages });
  assert.deepEqual(once.choices[0].message.annotations, expected);
  const streamed = await stack.openai.chat.completions.stream({ model, messages }).finalChatCompletion();
  assert.equal(streamed.choices[0].message.content, once.choices[0].message.content);
  assert.deepEqual(streamed.choices[0].message.annotations, expected);

  const annotationsOf = (output: OpenAI.Responses.ResponseOutputItem[]) =>
    output.flatMap((item) =>
      item.type === 'message'
        ? item.content.flatMap((c) => (c.type === 'output_text' ? c.annotations : []))
        : [],
    );
  const unstreamed = annotationsOf((await stack.openai.responses.create({ model, input })).output);
  assert.deepEqual(unstreamed, [{ type: 'url_citation', start_index: 0, end_index: 32, ...cited }]);
  const stream = stack.openai.responses.stream({ model, input });
  const added: unknown[] = [];
  const done: OpenAI.Responses.ResponseOutputItem[] = [];
  stream.on('response.output_text.annotation.added', (e) => added.push(e.annotation));
  stream.on('response.output_item.done', (e) => done.push(e.item));
  const final = await stream.finalResponse();
  assert.deepEqual(added, unstreamed);
  assert.deepEqual(annotationsOf(done), unstreamed);
  assert.deepEqual(annotationsOf(final.output), unstreamed);
});

// the fake answers a json_schema format with a value of the schema, as the API does (no scripted text)
const CITY = z.object({ city: z.string(), population: z.number(), note: z.string().nullable() });
const PARSED = { city: 'city-value', population: 1, note: 'note-value' };
for (const p of PROVIDERS) {
  test(`OpenAI SDK → ${p.model}: chat.completions.parse and responses.parse with a zod schema get the parsed object`, async () => {
    const chat = { model: p.model, messages: [{ role: 'user' as const, content: 'Which city?' }] };
    stack.fake.reset();
    stack.fake.script([{ usage: USAGE }]);
    const parsed = await stack.openai.chat.completions
      .parse({ ...chat, response_format: zodResponseFormat(CITY, 'city') })
      .withResponse();
    assert.deepEqual(parsed.data.choices[0].message.parsed, PARSED);
    const trace = { p, requestedModel: p.model, keyId: stack.keyId, stopReason: 'end_turn', stream: false };
    checkTrace(stack.files.db, parsed.response.headers.get('svc-request-id'), { ...trace, shape: 'openai' });
    stack.fake.reset();
    stack.fake.script([{ usage: USAGE }]);
    const response = await stack.openai.responses
      .parse({ model: p.model, input: 'Which city?', text: { format: zodTextFormat(CITY, 'city') } })
      .withResponse();
    assert.deepEqual(response.data.output_parsed, PARSED);
    const turnId = response.response.headers.get('svc-request-id');
    checkTrace(stack.files.db, turnId, { ...trace, shape: 'openai_responses' as 'openai' });
  });
}

// OpenAI's model declining is the message's `refusal` (no content, finish_reason stop): parse() hands it over as
// such, and an Anthropic client of that model gets a refusal stop with the text, whole and streamed
test('OpenAI SDK and Anthropic SDK → an OpenAI model that refuses: parse() gets message.refusal, the Anthropic client stop_reason refusal', async () => {
  const model = 'openai:gpt-5-mini';
  const content = 'Which city? [[fake:text=I cannot help with that;stop=refusal]]';
  const refused = await stack.openai.chat.completions.parse({
    model,
    messages: [{ role: 'user', content }],
    response_format: zodResponseFormat(CITY, 'city'),
  });
  const { message, finish_reason } = refused.choices[0];
  assert.deepEqual(
    [finish_reason, message.refusal, message.content, message.parsed],
    ['stop', 'I cannot help with that', null, null],
  );
  const ask = { model, max_tokens: 256, messages: [{ role: 'user' as const, content }] };
  const whole = await stack.anthropic.messages.create(ask);
  const streamed = await stack.anthropic.messages.stream(ask).finalMessage();
  for (const m of [whole, streamed]) {
    assert.equal(m.stop_reason, 'refusal');
    assert.deepEqual(m.content, [{ type: 'text', text: 'I cannot help with that' }]);
  }
  assert.deepEqual(
    readEvents(stack.files.db, 'llm.call_completed')
      .slice(-3)
      .map((e) => e.payload.stop_reason),
    ['refusal', 'refusal', 'refusal'],
  );
});

// Claude's structured outputs refuse numeric bounds, lengths and minItems above 1 (400 "For 'integer' type,
// property 'minimum' is not supported"), which zod's .int() and .email() write; the gateway sends them in the
// schema's description, as the Anthropic SDK's own transform does, and the client checks the answer
const BOUNDED = z.object({ year: z.number().int(), email: z.string().email(), tags: z.array(z.string()) });
test('OpenAI SDK → a Claude model: parse with zod bounds (.int(), .email()) and a strict zodFunction tool get parsed values', async () => {
  const p = PROVIDERS.find((x) => x.wire === 'anthropic')!;
  const ask = { model: p.model, messages: [{ role: 'user' as const, content: 'Which year?' }] };
  const want = { year: 1, email: 'value@example.com', tags: [] };
  stack.fake.reset();
  stack.fake.script([{ usage: USAGE }]);
  const parsed = await stack.openai.chat.completions
    .parse({ ...ask, response_format: zodResponseFormat(BOUNDED, 'out') })
    .withResponse();
  assert.deepEqual(parsed.data.choices[0].message.parsed, want);
  const sent = stack.fake.requests[0].body as { output_config: { format: { schema: Record<string, any> } } };
  const { year, email } = sent.output_config.format.schema.properties;
  assert.deepEqual(year, {
    type: 'integer',
    description: '{minimum: -9007199254740991, maximum: 9007199254740991}',
  });
  assert.equal(email.format, 'email');
  const trace = { p, requestedModel: p.model, keyId: stack.keyId, stopReason: 'end_turn', stream: false };
  checkTrace(stack.files.db, parsed.response.headers.get('svc-request-id'), { ...trace, shape: 'openai' });
  const text = zodTextFormat(BOUNDED, 'out');
  const response = await stack.openai.responses.parse({
    model: p.model,
    input: 'Which year?',
    text: { format: text },
  });
  assert.deepEqual(response.output_parsed, want);
  const tool = zodFunction({ name: 'log_year', parameters: BOUNDED });
  const called = await stack.openai.chat.completions.parse({
    ...ask,
    tools: [tool],
    tool_choice: 'required',
  });
  const [call] = called.choices[0].message.tool_calls ?? [];
  assert.ok(call?.type === 'function');
  assert.deepEqual(call.function.parsed_arguments, want);
  const [sentTool] = (stack.fake.requests.at(-1)!.body as { tools: Array<Record<string, any>> }).tools;
  assert.deepEqual([sentTool.strict, sentTool.input_schema.properties.year], [true, year]);
});

// the SDK helpers that drive more than one call or read the stream themselves, on each wire; every call is
// one trace record with the client's inbound shape
for (const p of PROVIDERS.filter((x) => x.provider !== 'openrouter')) {
  test(`OpenAI SDK helpers → ${p.model}: stream events, runTools, responses.stream and previous_response_id`, async () => {
    stack.fake.reset();
    const before = readEvents(stack.files.db, 'llm.call_completed').length;
    const messages = [{ role: 'user' as const, content: 'hi [[fake:text=streamed reply]]' }];
    const chat = stack.openai.chat.completions.stream({ model: p.model, messages });
    let deltas = '';
    chat.on('content.delta', ({ delta }) => {
      deltas += delta;
    });
    assert.equal((await chat.finalChatCompletion()).choices[0].message.content, 'streamed reply');
    assert.equal(deltas, 'streamed reply');
    const weather = zodFunction({
      name: 'get_weather',
      parameters: z.object({ city: z.string() }),
      function: ({ city }) => `Sunny in ${city}`,
    });
    const ask = [{ role: 'user' as const, content: 'weather? [[fake:tool_call]]' }];
    const loop = { model: p.model, messages: ask, tools: [weather] };
    const done = 'Tool result received: Sunny in city-value';
    assert.equal(await stack.openai.chat.completions.runTools(loop).finalContent(), done);
    const streamed = stack.openai.chat.completions.runTools({ ...loop, stream: true });
    assert.equal(await streamed.finalContent(), done);
    const first = await stack.openai.responses
      .stream({ model: p.model, input: 'I am Ada [[fake:text=Hi Ada]]' })
      .finalResponse();
    assert.equal(first.output_text, 'Hi Ada');
    await stack.openai.responses.create({
      model: p.model,
      input: 'who am I?',
      previous_response_id: first.id,
    });
    // the follow-up reaches the model with the turn it continues (OpenAI holds it; Claude gets it spelled out)
    assert.match(JSON.stringify(stack.fake.requests.at(-1)!.body), p.wire === 'openai' ? /resp_/ : /Hi Ada/);
    const calls = readEvents(stack.files.db, 'llm.call_completed').slice(before);
    assert.deepEqual(
      calls.map((e) => [e.payload.inbound_shape, e.payload.model, e.payload.stop_reason]),
      [
        ['openai', p.model, 'end_turn'],
        ...[1, 2].flatMap(() => [
          ['openai', p.model, 'tool_use'],
          ['openai', p.model, 'end_turn'],
        ]),
        ['openai_responses', p.model, 'end_turn'],
        ['openai_responses', p.model, 'end_turn'],
      ],
    );
    assert.ok(calls.every((e) => Number(e.payload.cost_usd) > 0));
  });
}

/** One request through the gateway; returns the tool call it answered with, if any. */
async function exchange(p: MatrixProvider, stream: boolean, turn: TurnSpec): Promise<ToolCall | undefined> {
  scriptFake(stack, turn);
  const body = { model: p.model, max_completion_tokens: 256, ...turn.chat, ...(stream ? STREAM_FIELDS : {}) };
  const { completion, turnId } = await send(body);

  assert.equal(completion.model, p.model, 'model echoes the requested name');
  assert.equal(completion.object, 'chat.completion');
  assert.equal(completion.choices.length, 1);
  const [choice] = completion.choices;
  assert.equal(choice.finish_reason, FINISH[turn.expect.stop]);
  assert.equal(choice.message.role, 'assistant');
  const prompt = USAGE.input + USAGE.cacheRead + USAGE.cacheWrite; // all input classes (§6 #9)
  assert.deepEqual(
    {
      prompt_tokens: completion.usage?.prompt_tokens,
      completion_tokens: completion.usage?.completion_tokens,
      total_tokens: completion.usage?.total_tokens,
      cached_tokens: completion.usage?.prompt_tokens_details?.cached_tokens,
    },
    {
      prompt_tokens: prompt,
      completion_tokens: USAGE.output,
      total_tokens: prompt + USAGE.output,
      cached_tokens: USAGE.cacheRead,
    },
  );
  let call: ToolCall | undefined;
  if ('text' in turn.expect) {
    assert.equal(choice.message.content, turn.expect.text);
    assert.equal(choice.message.tool_calls?.length ?? 0, 0);
  } else {
    // OpenRouter's stream opens with content "" whatever follows, forwarded as sent, which the SDK's stream
    // helper keeps (openai 7); OpenAI's, and the gateway's translation, open a tool call with content null
    const none = stream && p.provider === 'openrouter' ? '' : null;
    assert.equal(choice.message.content, none, 'no text next to the tool call (§5.2)');
    const calls = choice.message.tool_calls ?? [];
    assert.equal(calls.length, 1, JSON.stringify(calls));
    const [tc] = calls;
    assert.equal(tc.type, 'function');
    if (tc.type !== 'function') return;
    call = { id: tc.id, name: tc.function.name, input: JSON.parse(tc.function.arguments) };
    assert.ok(call.id.length > 0);
    assert.deepEqual({ name: call.name, input: call.input }, turn.expect.tool);
  }

  checkUpstream(stack, p, upstreamBody(p, body, turn, stream), DEFAULT_ANTHROPIC_VERSION);
  checkTrace(stack.files.db, turnId, traceOf(p, turn, stream));
  return call;
}

/** Non-streaming create, or a stream accumulated by the SDK's ChatCompletionStream helper. */
/** One call; streamed, also the chunks as they arrived. */
async function send(body: Record<string, unknown>): Promise<{
  completion: OpenAI.ChatCompletion;
  turnId: string | null;
  chunks: OpenAI.ChatCompletionChunk[];
}> {
  if (body.stream !== true) {
    const params = body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const { data, response } = await stack.openai.chat.completions.create(params).withResponse();
    return { completion: data, turnId: response.headers.get('svc-request-id'), chunks: [] };
  }
  const params = body as unknown as OpenAI.ChatCompletionCreateParamsStreaming;
  const { data, response } = await stack.openai.chat.completions.create(params).withResponse();
  const [read, helped] = data.tee();
  const helper = ChatCompletionStream.fromReadableStream(helped.toReadableStream());
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  const [completion] = await Promise.all([
    helper.finalChatCompletion(),
    (async () => {
      for await (const chunk of read) chunks.push(chunk);
    })(),
  ]);
  return { completion, turnId: response.headers.get('svc-request-id'), chunks };
}

/** Same wire: the client's body with only `model` replaced. Cross wire: the Anthropic form (§5.1). */
function upstreamBody(
  p: MatrixProvider,
  body: Record<string, unknown>,
  turn: TurnSpec,
  stream: boolean,
): Record<string, unknown> {
  if (p.wire === 'openai') return { ...body, model: p.upstreamModel };
  return { model: p.upstreamModel, max_tokens: 256, ...turn.anthropic, ...(stream ? { stream: true } : {}) };
}

function traceOf(p: MatrixProvider, turn: TurnSpec, stream: boolean) {
  return {
    p,
    shape: 'openai' as const,
    requestedModel: p.model,
    keyId: stack.keyId,
    stopReason: turn.expect.stop,
    stream,
  };
}

/**
 * One named regression test per translation pitfall of wire-formats §6 (numbers in test names).
 * Each goes through the real shape and adapter modules end to end.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createAnthropicAdapter,
  createOpenAIAdapter,
  createOpenRouterAdapter,
} from '#src/adapters/registry.ts';
import type { CanonicalRequest } from '#src/canonical/request.ts';
import type { CanonicalStreamEvent } from '#src/canonical/stream.ts';
import { droppedParams } from '#src/gateway/dropped-params.ts';
import { decodeAnthropicRequest } from '#src/gateway/shapes/anthropic/decode.ts';
import { encodeAnthropicStream } from '#src/gateway/shapes/anthropic/encode-stream.ts';
import { decodeOpenAIRequest } from '#src/gateway/shapes/openai/decode.ts';
import { encodeOpenAIResponse } from '#src/gateway/shapes/openai/encode.ts';
import { encodeOpenAIStream } from '#src/gateway/shapes/openai/encode-stream.ts';
import { decodeResponsesRequest } from '#src/gateway/shapes/responses/decode.ts';
import { encodeResponsesResponse } from '#src/gateway/shapes/responses/encode.ts';
import { SvcError } from '#src/lib/errors.ts';
import { decodeSse } from '#src/lib/sse-decode.ts';
import {
  ANTHROPIC_TOOL_STREAM,
  chunks,
  collect,
  OPENAI_TOOL_STREAM,
  parseSseText,
  utf8,
} from '../../helpers/sse-fixtures.ts';

const anthropic = createAnthropicAdapter({ baseUrl: 'https://a.test', apiKey: 'k' });
const openai = createOpenAIAdapter({ baseUrl: 'https://o.test/v1', apiKey: 'k' });
const openrouter = createOpenRouterAdapter({ baseUrl: 'https://r.test/api/v1', apiKey: 'k' });

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]).toString('base64');

function toAnthropic(body: Record<string, unknown>, model = 'claude-x'): any {
  return JSON.parse(anthropic.encodeRequest(decodeOpenAIRequest({ model: 'm', ...body }), model).body);
}
function toOpenAI(body: Record<string, unknown>, adapter = openai): any {
  return JSON.parse(
    adapter.encodeRequest(decodeAnthropicRequest({ model: 'm', max_tokens: 50, ...body }), 'gpt-x').body,
  );
}
async function canonical(adapter = anthropic, sse = ANTHROPIC_TOOL_STREAM): Promise<CanonicalStreamEvent[]> {
  return collect(adapter.decodeStream(decodeSse(chunks([utf8(sse)]))));
}
async function openaiChunks(events: CanonicalStreamEvent[], include_usage = false): Promise<any[]> {
  const text = (
    await collect(encodeOpenAIStream(chunks2(events), { model: 'alias', include_usage, created: 1 }))
  ).join('');
  return parseSseText(text).map((f) => (f.data === '[DONE]' ? '[DONE]' : JSON.parse(f.data)));
}
async function anthropicFrames(
  events: CanonicalStreamEvent[],
): Promise<Array<{ event?: string; data: any }>> {
  const text = (await collect(encodeAnthropicStream(chunks2(events), { model: 'alias' }))).join('');
  return parseSseText(text).map((f) => ({ event: f.event, data: JSON.parse(f.data) }));
}
async function* chunks2<T>(list: T[]): AsyncGenerator<T> {
  yield* list;
}
function openaiSse(deltas: unknown[], finish = 'tool_calls'): string {
  const c = (delta: unknown, fr: string | null) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'g', choices: [{ index: 0, delta, finish_reason: fr }] })}\n\n`;
  return `${deltas.map((d) => c(d, null)).join('')}${c({}, finish)}data: [DONE]\n\n`;
}

/** A chat.completion with one choice holding `message`, as the OpenAI API answers without streaming. */
function chatCompletion(message: Record<string, unknown>, finish_reason: string): Record<string, unknown> {
  return {
    id: 'c1',
    object: 'chat.completion',
    created: 1,
    model: 'g',
    choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

test('#1 OpenAI tool_calls indices count tool calls (0,1), not Anthropic block indices shifted by thinking/text', async () => {
  const out = await openaiChunks(await canonical());
  const starts = out.flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? []).filter((t: any) => t.id);
  assert.deepEqual(
    starts.map((t: any) => [t.index, t.id]),
    [
      [0, 'toolu_01X'],
      [1, 'toolu_02Y'],
    ],
  );
});

test('#2 streamed tool arguments from an OpenAI upstream reach the Anthropic client as input_json_delta', async () => {
  const frames = await anthropicFrames(await canonical(openai, OPENAI_TOOL_STREAM));
  const start = frames.find((f) => f.data.content_block?.type === 'tool_use')!;
  const json = frames
    .filter((f) => f.data.index === start.data.index && f.data.delta?.type === 'input_json_delta')
    .map((f) => f.data.delta.partial_json)
    .join('');
  assert.deepEqual(JSON.parse(json), { city: 'Oslo' });
});

test('#3 a chunk carrying both text and tool_calls loses neither', async () => {
  const sse = openaiSse([
    {
      role: 'assistant',
      content: 'Let me check.',
      tool_calls: [
        { index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
      ],
    },
  ]);
  const done = (await canonical(openai, sse)).at(-1) as any;
  assert.deepEqual(
    done.final_content.map((b: any) => b.type),
    ['text', 'tool_use'],
  );
  assert.deepEqual(done.final_content[1].input, { a: 1 });
});

test('#4 continuation tool-call fragments omit id, type and name instead of sending null', async () => {
  const out = await openaiChunks(await canonical());
  const frags = out.flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? []).filter((t: any) => !t.id);
  assert.ok(frags.length > 0);
  for (const f of frags) assert.deepEqual(Object.keys(f).sort(), ['function', 'index']);
  for (const f of frags) assert.deepEqual(Object.keys(f.function), ['arguments']);
});

test('#5 the first OpenAI chunk carries role assistant, with content null unless the answer opens with text', async () => {
  const text = await openaiChunks(await canonical(openai, OPENAI_TOOL_STREAM));
  assert.deepEqual(text[0].choices[0].delta, { role: 'assistant', content: '' });
  const thinking = await openaiChunks(await canonical());
  assert.deepEqual(thinking[0].choices[0].delta, { role: 'assistant', content: null });
  // an answer that is only a tool call opens as OpenAI's does: one chunk with role, content null and the call
  // (the OpenAI SDK 7 stream helper keeps a content "" it was sent: the message would not read null)
  const lines = ANTHROPIC_TOOL_STREAM.split('\n');
  const toolOnly = [
    ...lines.slice(0, 3),
    ...lines.slice(lines.findIndex((l) => l.includes('"index":2')) - 1),
  ];
  const tool = await openaiChunks(await canonical(anthropic, toolOnly.join('\n')));
  assert.deepEqual(tool[0].choices[0].delta, {
    role: 'assistant',
    content: null,
    tool_calls: [
      { index: 0, id: 'toolu_01X', type: 'function', function: { name: 'get_weather', arguments: '' } },
    ],
  });
  assert.ok(!tool.some((c) => c !== '[DONE]' && c.choices[0]?.delta?.content === ''));
  // nothing in the answer: the role still goes out, before the finish
  const empty = [
    ...lines.slice(0, 3),
    ...lines.slice(lines.findIndex((l) => l.includes('message_delta')) - 1),
  ];
  const none = await openaiChunks(await canonical(anthropic, empty.join('\n')));
  assert.deepEqual(
    none.slice(0, 2).map((c) => [c.choices[0].delta, c.choices[0].finish_reason]),
    [
      [{ role: 'assistant', content: '' }, null],
      [{}, 'stop'],
    ],
  );
});

test('#6 Anthropic block indices are contiguous, one block open at a time, each started block stopped once', async () => {
  for (const events of [await canonical(openai, OPENAI_TOOL_STREAM), await canonical()]) {
    const frames = await anthropicFrames(events);
    assert.equal(frames[0].event, 'message_start');
    let open = -1;
    let next = 0;
    for (const f of frames) {
      if (f.event === 'content_block_start') {
        assert.equal(open, -1);
        assert.equal(f.data.index, next++);
        open = f.data.index;
      } else if (f.event === 'content_block_delta') assert.equal(f.data.index, open);
      else if (f.event === 'content_block_stop') {
        assert.equal(f.data.index, open);
        open = -1;
      }
    }
    assert.equal(open, -1);
    assert.deepEqual(
      frames.slice(-2).map((f) => f.event),
      ['message_delta', 'message_stop'],
    );
  }
});

test('#7 tool calls force tool_use / tool_calls even when the upstream said stop or end_turn', async () => {
  const sse = openaiSse(
    [
      {
        role: 'assistant',
        tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
    ],
    'stop',
  );
  const events = await canonical(openai, sse);
  assert.equal((events.at(-1) as any).stop_reason, 'tool_use');
  const wrong = ANTHROPIC_TOOL_STREAM.replace('"stop_reason":"tool_use"', '"stop_reason":"end_turn"');
  const out = await openaiChunks(await canonical(anthropic, wrong));
  assert.equal(out.find((c) => c.choices?.[0]?.finish_reason)?.choices[0].finish_reason, 'tool_calls');
  const frames = await anthropicFrames(events);
  assert.equal(frames.find((f) => f.event === 'message_delta')!.data.delta.stop_reason, 'tool_use');
});

test('#7 a tool call cut off by the token limit stays max_tokens / length / incomplete, never a finished tool turn', async () => {
  const cut = ANTHROPIC_TOOL_STREAM.replace('"stop_reason":"tool_use"', '"stop_reason":"max_tokens"');
  const events = await canonical(anthropic, cut);
  assert.equal((events.at(-1) as any).stop_reason, 'max_tokens');
  const out = await openaiChunks(events);
  assert.equal(out.find((c) => c.choices?.[0]?.finish_reason)?.choices[0].finish_reason, 'length');
  const frames = await anthropicFrames(events);
  assert.equal(frames.find((f) => f.event === 'message_delta')!.data.delta.stop_reason, 'max_tokens');

  const oaiCut = await canonical(
    openai,
    openaiSse(
      [
        {
          role: 'assistant',
          tool_calls: [
            { index: 0, id: 'c', type: 'function', function: { name: 'f', arguments: '{"a": "b' } },
          ],
        },
      ],
      'length',
    ),
  );
  assert.equal((oaiCut.at(-1) as any).stop_reason, 'max_tokens');

  const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} };
  const usage = { input_tokens: 1, output_tokens: 1 };
  const message = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    stop_sequence: null,
    usage,
  };
  const nonStream = anthropic.decodeResponse({ ...message, content: [toolUse], stop_reason: 'max_tokens' });
  assert.equal(nonStream.stop_reason, 'max_tokens');
  assert.equal(
    (encodeOpenAIResponse(nonStream, { model: 'alias' }) as any).choices[0].finish_reason,
    'length',
  );
  const responses = encodeResponsesResponse(nonStream, { model: 'alias', request: {} }) as any;
  assert.deepEqual(
    [responses.status, responses.incomplete_details],
    ['incomplete', { reason: 'max_output_tokens' }],
  );
  // a plain end with a tool call is still a tool turn (#7 above)
  assert.equal(
    anthropic.decodeResponse({ ...message, content: [toolUse], stop_reason: 'end_turn' }).stop_reason,
    'tool_use',
  );
  const oai = openai.decodeResponse(
    chatCompletion(
      { tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a' } }] },
      'length',
    ),
  );
  assert.equal(oai.stop_reason, 'max_tokens');
});

test('#1 tool calls from OpenAI-compatible servers: a new id at a reused index (Ollama), interleaved fragments and missing ids each become whole calls', async () => {
  const call = (
    index: number | undefined,
    id: string | undefined,
    name: string | undefined,
    args: string,
  ) => ({
    ...(index === undefined ? {} : { index }),
    ...(id === undefined ? {} : { id, type: 'function' }),
    function: { ...(name === undefined ? {} : { name }), arguments: args },
  });
  const finalCalls = async (deltas: unknown[]) => {
    const events = await canonical(openai, openaiSse(deltas));
    const done = events.at(-1) as any;
    assert.equal(done.stop_reason, 'tool_use');
    // the Anthropic client receives exactly the calls the trace records, each input whole
    const frames = await anthropicFrames(events);
    const streamed = new Map<number, { name: string; json: string }>();
    for (const f of frames) {
      if (f.event === 'content_block_start' && f.data.content_block.type === 'tool_use')
        streamed.set(f.data.index, { name: f.data.content_block.name, json: '' });
      if (f.event === 'content_block_delta' && f.data.delta.type === 'input_json_delta')
        streamed.get(f.data.index)!.json += f.data.delta.partial_json;
    }
    const fromStream = [...streamed.values()].map((c) => [c.name, JSON.parse(c.json)]);
    const traced = done.final_content.filter((b: any) => b.type === 'tool_use');
    assert.deepEqual(
      fromStream,
      traced.map((b: any) => [b.name, b.input]),
    );
    return traced;
  };
  // Ollama numbers every call 0
  const ollama = await finalCalls([
    { role: 'assistant', tool_calls: [call(0, 'call_a', 'get_weather', '{"city":"Oslo"}')] },
    { tool_calls: [call(0, 'call_b', 'get_time', '{"tz":"UTC"}')] },
  ]);
  assert.deepEqual(
    ollama.map((b: any) => [b.id, b.input]),
    [
      ['call_a', { city: 'Oslo' }],
      ['call_b', { tz: 'UTC' }],
    ],
  );
  // vLLM repeats the id on every fragment of one call
  const vllm = await finalCalls([
    { role: 'assistant', tool_calls: [call(0, 'call_v', 'f', '{"a":')] },
    { tool_calls: [call(0, 'call_v', undefined, '1}')] },
  ]);
  assert.deepEqual(
    vllm.map((b: any) => [b.id, b.input]),
    [['call_v', { a: 1 }]],
  );
  // fragments of two calls interleaved
  const interleaved = await finalCalls([
    { role: 'assistant', tool_calls: [call(0, 'c0', 'get_weather', '')] },
    { tool_calls: [call(1, 'c1', 'get_time', '')] },
    { tool_calls: [call(0, undefined, undefined, '{"city":"Oslo"}')] },
    { tool_calls: [call(1, undefined, undefined, '{"tz":"UTC"}')] },
  ]);
  assert.deepEqual(
    interleaved.map((b: any) => b.input),
    [{ city: 'Oslo' }, { tz: 'UTC' }],
  );
  // no id at all, and entries without an index
  const anonymous = await finalCalls([
    { role: 'assistant', tool_calls: [call(undefined, undefined, 'get_weather', '{"city":')] },
    { tool_calls: [call(undefined, undefined, undefined, '"Oslo"}')] },
  ]);
  assert.equal(anonymous.length, 1);
  assert.match(anonymous[0].id, /^call_[0-9a-f]{24}$/);
  assert.deepEqual(anonymous[0].input, { city: 'Oslo' });
  // the deprecated function_call delta
  const legacy = await finalCalls([
    { role: 'assistant', function_call: { name: 'f', arguments: '{"x":2}' } },
  ]);
  assert.deepEqual(
    legacy.map((b: any) => [b.name, b.input]),
    [['f', { x: 2 }]],
  );
  // non-streaming: a call without an id gets one, function_call is a call
  const res = openai.decodeResponse(
    chatCompletion(
      {
        tool_calls: [
          { type: 'function', function: { name: 'f', arguments: '{}' } },
          { type: 'function', function: { name: 'g', arguments: '{}' } },
        ],
      },
      'tool_calls',
    ),
  );
  const ids = res.content.map((b: any) => b.id);
  assert.equal(new Set(ids).size, 2);
  assert.ok(ids.every((id: string) => /^call_[0-9a-f]{24}$/.test(id)));
});

test('#11 a stream that ends without any usage (a server ignoring include_usage) says so instead of reporting 0 input', async () => {
  const events = await canonical(openai, openaiSse([{ role: 'assistant', content: 'hi' }], 'stop'));
  const done = events.at(-1) as any;
  assert.equal(done.usage.missing, true);
  const frames = await anthropicFrames(events);
  // message_start's estimate stands: message_delta states no input count
  assert.deepEqual(frames.find((f) => f.event === 'message_delta')!.data.usage, { output_tokens: 0 });
  // a stream with its usage chunk is not flagged
  const reported = await canonical(openai, OPENAI_TOOL_STREAM);
  assert.equal((reported.at(-1) as any).usage.missing, undefined);
});

test('#24 an OpenRouter error carried on the choice keeps its class and message', async () => {
  const chunk = {
    id: 'gen-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'g',
    choices: [
      {
        index: 0,
        delta: {},
        finish_reason: 'error',
        error: { code: 429, message: 'Rate limit exceeded upstream' },
      },
    ],
  };
  await assert.rejects(
    canonical(openrouter, `data: ${JSON.stringify(chunk)}\n\n`),
    (err: any) => err.code === 'upstream_rate_limited' && /Rate limit exceeded upstream/.test(err.message),
  );
});

test('#8 Anthropic stop reasons are mapped to finish_reason values, refusal to content_filter', () => {
  const base = {
    id: 'msg_1',
    model: 'x',
    content: [{ type: 'text' as const, text: 'no' }],
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cache_creation_input_tokens: 0 },
  };
  const finish = (stop_reason: any) =>
    (encodeOpenAIResponse({ ...base, stop_reason }, { model: 'a' }) as any).choices[0].finish_reason;
  assert.deepEqual(
    ['end_turn', 'stop_sequence', 'max_tokens', 'refusal', 'pause_turn', 'model_context_window_exceeded'].map(
      finish,
    ),
    ['stop', 'stop', 'length', 'content_filter', 'stop', 'length'],
  );
  const refused = openai.decodeResponse(chatCompletion({ refusal: 'No.' }, 'stop'));
  assert.equal(refused.stop_reason, 'refusal');
});

test('#9 prompt_tokens counts uncached input plus cache reads and writes; total_tokens is consistent', async () => {
  const out = await openaiChunks(await canonical(), true);
  const usage = out.find((c) => c.usage)?.usage;
  assert.equal(usage.prompt_tokens, 40 + 1200 + 7);
  assert.equal(usage.prompt_tokens_details.cached_tokens, 1200);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  // and back: OpenAI prompt_tokens includes cached ones (DECISIONS §3)
  assert.equal((await canonical(openai, OPENAI_TOOL_STREAM)).at(-1)!.type, 'message.complete');
  const u = ((await canonical(openai, OPENAI_TOOL_STREAM)).at(-1) as any).usage;
  assert.equal(u.input_tokens, 2100 - 2048);
});

test('#10 streaming usage merges message_start and message_delta (input counts only in message_delta)', async () => {
  const late = ANTHROPIC_TOOL_STREAM.replace(
    '"usage":{"input_tokens":40,"cache_creation_input_tokens":7,"cache_read_input_tokens":1200,"output_tokens":1}',
    '"usage":{"output_tokens":1}',
  ).replace(
    '"usage":{"output_tokens":31}',
    '"usage":{"input_tokens":40,"cache_read_input_tokens":1200,"output_tokens":31}',
  );
  const u = ((await canonical(anthropic, late)).at(-1) as any).usage;
  assert.deepEqual([u.input_tokens, u.cached_input_tokens, u.output_tokens], [40, 1200, 31]);
});

test('#11 usage chunk: always requested upstream, emitted last before [DONE] with choices [] only when asked', async () => {
  const req = decodeOpenAIRequest({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] });
  assert.deepEqual(JSON.parse(openai.encodeRequest(req, 'g').body).stream_options, { include_usage: true });
  const body = '{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}';
  const fast = JSON.parse(
    openai.encodePassthrough({ bodyText: body, body: JSON.parse(body), upstreamModel: 'g', stream: true })
      .body,
  );
  assert.deepEqual(fast.stream_options, { include_usage: true });
  const withUsage = await openaiChunks(await canonical(), true);
  assert.equal(withUsage.at(-1), '[DONE]');
  assert.deepEqual(withUsage.at(-2).choices, []);
  assert.ok(withUsage.at(-2).usage);
  assert.ok(withUsage.slice(0, -2).every((c) => c.usage === null));
  const without = await openaiChunks(await canonical(), false);
  assert.ok(without.every((c) => c === '[DONE]' || (c.usage === undefined && c.choices.length === 1)));
  const tap = openai.tapStream(chunks([utf8(OPENAI_TOOL_STREAM)]), { includeUsageChunk: false });
  const text = Buffer.concat(await collect(tap)).toString();
  assert.ok(!text.includes('"choices":[]'));
  assert.equal(tap.usage().cached_input_tokens, 2048);
  // OpenRouter's usage rides on a last chunk that still carries an empty-delta choice (wire-formats §3)
  const routerLast =
    '"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage"';
  const router = openrouter.tapStream(
    chunks([utf8(OPENAI_TOOL_STREAM.replace('"choices":[],"usage"', routerLast))]),
    { includeUsageChunk: false },
  );
  const routed = parseSseText(Buffer.concat(await collect(router)).toString());
  assert.ok(routed.every((f) => f.data === '[DONE]' || JSON.parse(f.data).usage == null));
  assert.equal(router.usage().cached_input_tokens, 2048);
});

test('#12 empty assistant text next to tool_calls never reaches Anthropic as an empty text block', () => {
  const body = toAnthropic({
    messages: [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      {
        role: 'user',
        content: [
          { type: 'text', text: '' },
          { type: 'text', text: 'go' },
        ],
      },
    ],
  });
  const texts = body.messages.flatMap((m: any) => m.content).filter((b: any) => b.type === 'text');
  assert.ok(texts.every((b: any) => b.text !== ''));
});

test('#13 empty tool arguments ("") parse as {} in responses, streams and requests', async () => {
  const res = openai.decodeResponse(
    chatCompletion(
      { tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }] },
      'tool_calls',
    ),
  );
  assert.deepEqual((res.content[0] as any).input, {});
  const sse = openaiSse([
    {
      role: 'assistant',
      tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }],
    },
  ]);
  assert.deepEqual(((await canonical(openai, sse)).at(-1) as any).final_content[0].input, {});
  const body = toAnthropic({
    messages: [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }],
      },
    ],
  });
  assert.deepEqual(body.messages[0].content[0].input, {});
  const out = await openaiChunks(await canonical(openai, sse));
  assert.equal(
    out
      .flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? [])
      .map((t: any) => t.function.arguments)
      .join(''),
    '{}',
  );
});

test('#14 foreign tool-call ids are sanitised identically in tool_use and tool_result', () => {
  const body = toAnthropic({
    messages: [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'functions.Bash:0', type: 'function', function: { name: 'Bash', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'functions.Bash:0', content: 'ok' },
    ],
  });
  const use = body.messages[1].content[0].id;
  assert.match(use, /^[a-zA-Z0-9_-]+$/);
  assert.equal(body.messages[2].content[0].tool_use_id, use);
});

test('#15 every tool_result yields a tool message, also empty and image-only ones', () => {
  const body = toOpenAI({
    messages: [
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'a', name: 'f', input: {} },
          { type: 'tool_use', id: 'b', name: 'g', input: {} },
          { type: 'tool_use', id: 'c', name: 'h', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a' },
          {
            type: 'tool_result',
            tool_use_id: 'b',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }],
          },
          { type: 'tool_result', tool_use_id: 'c', content: 'x', is_error: true },
        ],
      },
    ],
  });
  const tools = body.messages.filter((m: any) => m.role === 'tool');
  assert.deepEqual(
    tools.map((m: any) => m.tool_call_id),
    ['a', 'b', 'c'],
  );
  assert.equal(tools[2].content, 'Error: x');
  const user = body.messages.at(-1);
  assert.equal(user.role, 'user');
  assert.equal(user.content[0].image_url.url, `data:image/png;base64,${PNG}`);
});

test('#16 mixed user content puts tool messages right after the assistant turn, user text after them', () => {
  const body = toOpenAI({
    messages: [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'also this' },
          { type: 'tool_result', tool_use_id: 'a', content: 'r' },
        ],
      },
    ],
  });
  assert.deepEqual(
    body.messages.map((m: any) => m.role),
    ['assistant', 'tool', 'user'],
  );
});

test('#17 tool_use/tool_result history reaches the OpenAI path as tool_calls and tool messages, not stripped', () => {
  const body = toOpenAI({
    messages: [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'calling' },
          { type: 'tool_use', id: 'a', name: 'f', input: { q: 1 } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'r' }] }],
      },
    ],
  });
  assert.deepEqual(body.messages[1], {
    role: 'assistant',
    content: 'calling',
    tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{"q":1}' } }],
  });
  assert.deepEqual(body.messages[2], { role: 'tool', tool_call_id: 'a', content: 'r' });
  // a block with no OpenAI form is a clear 400 (a base64 PDF now has one: the file part, tested below)
  assert.throws(
    () =>
      toOpenAI({
        messages: [
          {
            role: 'user',
            content: [{ type: 'document', source: { type: 'file', file_id: 'file_1' } }],
          },
        ],
      }),
    SvcError,
  );
});

test('#18 thinking blocks (also signature-only) are replayed unchanged and in order with tool turns', () => {
  const history = [
    { role: 'user', content: 'x' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: '', signature: 'sigOnly' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'tool_use', id: 'a', name: 'f', input: {} },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'r' }] },
  ];
  const req = decodeAnthropicRequest({
    model: 'm',
    max_tokens: 5000,
    messages: history,
    thinking: { type: 'enabled', budget_tokens: 2000 },
  });
  const body = JSON.parse(anthropic.encodeRequest(req, 'c').body);
  assert.deepEqual(body.messages[1].content.slice(0, 2), history[1].content.slice(0, 2));
  // via an OpenAI client replaying OpenRouter-style reasoning_details
  const viaOpenAI = toAnthropic({
    messages: [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: null,
        reasoning_details: [{ type: 'reasoning.text', text: 't', signature: 's' }],
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'a', content: 'r' },
    ],
  });
  assert.deepEqual(viaOpenAI.messages[1].content[0], { type: 'thinking', thinking: 't', signature: 's' });
  // to a Claude model on OpenRouter, which keeps Anthropic signatures valid through reasoning_details
  const toClaude = openrouter.encodeRequest(
    decodeAnthropicRequest({ model: 'm', max_tokens: 50, messages: history }),
    'anthropic/claude-x',
  );
  const router = JSON.parse(toClaude.body);
  assert.deepEqual(router.messages[1].reasoning_details[0], {
    type: 'reasoning.text',
    text: '',
    signature: 'sigOnly',
  });
});

test('#19 images: https URLs stay URLs, data URLs are typed by their bytes, sources become data URLs', () => {
  const body = toAnthropic({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'https://x.test/a.png' } },
          { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${PNG}`, detail: 'high' } },
        ],
      },
    ],
  });
  assert.deepEqual(body.messages[0].content[0], {
    type: 'image',
    source: { type: 'url', url: 'https://x.test/a.png' },
  });
  assert.deepEqual(body.messages[0].content[1].source, {
    type: 'base64',
    media_type: 'image/png',
    data: PNG,
  });
  assert.throws(
    () =>
      toAnthropic({
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }],
          },
        ],
      }),
    /not JPEG, PNG, GIF or WebP/,
  );
  const back = toOpenAI({
    messages: [
      { role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x.test/b.gif' } }] },
    ],
  });
  assert.deepEqual(back.messages[0].content[0], {
    type: 'image_url',
    image_url: { url: 'https://x.test/b.gif' },
  });
});

test('#20 developer and system messages: leading ones become system, later ones fold into user text for Anthropic', () => {
  const body = toAnthropic({
    messages: [
      { role: 'developer', content: 'Rule 1' },
      { role: 'system', content: [{ type: 'text', text: 'Rule 2' }] },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'system', content: 'Now be terse' },
      { role: 'user', content: 'more' },
    ],
  });
  assert.deepEqual(body.system, [
    { type: 'text', text: 'Rule 1' },
    { type: 'text', text: 'Rule 2' },
  ]);
  assert.deepEqual(
    body.messages.map((m: any) => m.role),
    ['user', 'assistant', 'user'],
  );
  assert.deepEqual(
    body.messages[2].content.map((b: any) => b.text),
    ['Now be terse', 'more'],
  );
  const back = toOpenAI({ system: 'S', messages: [{ role: 'user', content: 'hi' }] });
  assert.deepEqual(back.messages[0], { role: 'system', content: 'S' });
});

test('#21 parallel_tool_calls alone rides on auto, and none stays none', () => {
  const tools = [
    { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } },
  ];
  const messages = [{ role: 'user', content: 'x' }];
  assert.deepEqual(toAnthropic({ messages, tools, parallel_tool_calls: false }).tool_choice, {
    type: 'auto',
    disable_parallel_tool_use: true,
  });
  assert.deepEqual(toAnthropic({ messages, tools, tool_choice: 'none' }).tool_choice, { type: 'none' });
  assert.deepEqual(toAnthropic({ messages, tools, tool_choice: 'required' }).tool_choice, { type: 'any' });
  assert.equal(toAnthropic({ messages, tools }).tool_choice, undefined);
  const back = toOpenAI({
    messages,
    tools: [{ name: 'f', input_schema: { type: 'object' } }],
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  });
  assert.deepEqual([back.tool_choice, back.parallel_tool_calls], ['auto', false]);
});

test('#22 an OpenAI request without max_tokens gets the configured default, not a low one', () => {
  assert.equal(toAnthropic({ messages: [{ role: 'user', content: 'x' }] }).max_tokens, 8192);
  const custom = createAnthropicAdapter({ baseUrl: 'https://a.test', apiKey: 'k', defaultMaxTokens: 64000 });
  assert.equal(
    JSON.parse(
      custom.encodeRequest(
        decodeOpenAIRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
        'c',
      ).body,
    ).max_tokens,
    64000,
  );
  assert.equal(
    toAnthropic({ max_completion_tokens: 77, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .max_tokens,
    77,
  );
});

test('sampling Claude accepts: no temperature/top_k beside thinking, temperature wins over top_p, json_object asked in words', () => {
  const user = [{ role: 'user', content: 'x' }];
  // a model that takes sampling (those after Opus 4.6 take only the defaults: cross-shape-round-trips)
  const model = 'claude-sonnet-4-5';
  const plain = toAnthropic({ messages: user, temperature: 0.2, top_p: 0.9 }, model);
  assert.deepEqual([plain.temperature, plain.top_p], [0.2, undefined]);
  assert.equal(toAnthropic({ messages: user, top_p: 0.9 }, model).top_p, 0.9);
  const thinking = toAnthropic(
    { messages: user, temperature: 0.2, top_p: 0.9, reasoning: { max_tokens: 2000 }, max_tokens: 4000 },
    model,
  );
  assert.equal(thinking.thinking.type, 'enabled');
  assert.deepEqual([thinking.temperature, thinking.top_p, thinking.top_k], [undefined, undefined, undefined]);
  const json = toAnthropic({ messages: user, response_format: { type: 'json_object' } });
  assert.match(JSON.stringify(json.system), /single valid JSON object/);
});

test('#18 a tool loop whose history lost its thinking block goes without thinking, never into the 400', () => {
  const loop = [
    { role: 'user', content: 'weather?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
  ];
  const tools = [
    { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } },
  ];
  const lost = toAnthropic({ messages: loop, tools, reasoning_effort: 'high', max_tokens: 4000 });
  assert.equal(lost.thinking, undefined);
  // with the thinking block replayed (OpenRouter-style reasoning_details with its signature) it stays on
  const kept = structuredClone(loop) as any[];
  kept[1].reasoning_details = [
    { type: 'reasoning.text', text: 'hm', signature: 'sig', format: 'anthropic-claude-v1' },
  ];
  assert.equal(
    toAnthropic({ messages: kept, tools, reasoning_effort: 'high', max_tokens: 4000 }).thinking?.type,
    'adaptive',
  );
});

test('#18 OpenAI sealed reasoning replayed to Claude is left out, and the tool loop goes without thinking', () => {
  // a Codex conversation served by an OpenAI model, then routed to Claude: its reasoning item carries
  // OpenAI's encrypted_content, which Claude would refuse as a thinking signature
  const sealed = `gAAAAABo${'x'.repeat(40)}`;
  const input: Record<string, unknown>[] = [
    { role: 'user', content: 'weather?' },
    { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: sealed },
    { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
  ];
  const tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }];
  const toClaude = () =>
    JSON.parse(
      anthropic.encodeRequest(
        decodeResponsesRequest({
          model: 'm',
          input,
          tools,
          reasoning: { effort: 'high' },
          max_output_tokens: 4000,
        }),
        'claude-sonnet-4-5',
      ).body,
    );
  const body = toClaude();
  assert.deepEqual(
    body.messages[1].content.map((b: { type: string }) => b.type),
    ['tool_use'],
  );
  assert.ok(!JSON.stringify(body).includes(sealed));
  assert.equal(body.thinking, undefined);
  // a Claude signature on the same item is replayed, and thinking stays on
  input[1] = { ...input[1], encrypted_content: 'EqQBCkgIARABGAIiQL' };
  const claude = toClaude();
  assert.deepEqual(claude.messages[1].content[0], {
    type: 'thinking',
    thinking: '',
    signature: 'EqQBCkgIARABGAIiQL',
  });
  assert.equal(claude.thinking?.type, 'enabled');
});

test('#18 reasoning another model family wrote (OpenRouter format) goes back to that family only', () => {
  // a conversation an OpenRouter Gemini model answered, replayed as a Chat Completions client got it
  const gemini = [
    { type: 'reasoning.text', text: 'g', signature: 'CiQBg', format: 'google-gemini-v1', index: 0 },
    { type: 'reasoning.encrypted', data: 'CiQBe', format: 'google-gemini-v1', index: 1 },
  ];
  const messages = [
    { role: 'user', content: 'weather?' },
    {
      role: 'assistant',
      content: null,
      reasoning_details: gemini,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
  ];
  const tools = [
    { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } },
  ];
  const req = decodeOpenAIRequest({
    model: 'm',
    messages,
    tools,
    reasoning_effort: 'high',
    max_tokens: 4000,
  });
  // Claude refuses a signature it did not issue: left out, and the tool loop goes without thinking
  const claude = JSON.parse(anthropic.encodeRequest(req, 'claude-sonnet-4-5').body);
  assert.deepEqual(
    claude.messages[1].content.map((b: { type: string }) => b.type),
    ['tool_use'],
  );
  assert.equal(claude.thinking, undefined);
  const via = (model: string) =>
    JSON.parse(openrouter.encodeRequest(req, model).body).messages[1].reasoning_details;
  assert.equal(via('anthropic/claude-sonnet-4.5'), undefined);
  assert.equal(via('openai/gpt-5'), undefined);
  assert.deepEqual(via('google/gemini-2.5-flash'), [
    { type: 'reasoning.text', text: 'g', signature: 'CiQBg', format: 'google-gemini-v1' },
    { type: 'reasoning.encrypted', data: 'CiQBe', format: 'google-gemini-v1' },
  ]);
  // a Claude signature (no format) goes to Claude, not to Gemini
  const signed = decodeOpenAIRequest({
    model: 'm',
    messages: [
      messages[0],
      { ...messages[1], reasoning_details: [{ type: 'reasoning.text', text: 'c', signature: 'EqQBc' }] },
      messages[2],
    ],
  });
  assert.equal(
    JSON.parse(anthropic.encodeRequest(signed, 'claude-sonnet-4-5').body).messages[1].content[0].signature,
    'EqQBc',
  );
  assert.equal(
    JSON.parse(openrouter.encodeRequest(signed, 'google/gemini-2.5-flash').body).messages[1]
      .reasoning_details,
    undefined,
  );
});

test('reasoning_effort reaches Claude in the form the model takes: a budget before 4.6, adaptive with effort after', () => {
  const ask = (model: string, extra: Record<string, unknown> = {}) =>
    JSON.parse(
      anthropic.encodeRequest(
        decodeOpenAIRequest({
          model: 'm',
          messages: [{ role: 'user', content: 'x' }],
          reasoning_effort: 'high',
          max_completion_tokens: 30000,
          ...extra,
        }),
        model,
      ).body,
    );
  const sonnet45 = ask('claude-sonnet-4-5');
  assert.deepEqual(
    [sonnet45.thinking, sonnet45.output_config],
    [{ type: 'enabled', budget_tokens: 16384 }, undefined],
  );
  assert.deepEqual(ask('claude-opus-4-5').output_config, { effort: 'high' });
  assert.equal(ask('claude-opus-4-5').thinking.type, 'enabled');
  const newer = ask('claude-sonnet-4-6');
  assert.deepEqual([newer.thinking, newer.output_config], [{ type: 'adaptive' }, { effort: 'high' }]);
  assert.equal(ask('claude-sonnet-5').thinking.type, 'adaptive');
  assert.equal(ask('claude-sonnet-4-20250514').thinking.type, 'enabled');
  assert.equal(ask('claude-3-7-sonnet-latest').thinking.type, 'enabled');
  // Claude 3 and 3.5 models have no extended thinking (a 400): the effort is left out, and named
  assert.equal(ask('claude-3-5-haiku-20241022').thinking, undefined);
  assert.equal(ask('claude-3-haiku-20240307').thinking, undefined);
  const effort = { model: 'm', messages: [], reasoning_effort: 'high' };
  assert.deepEqual(droppedParams(effort, 'openai', 'anthropic', 'claude-3-5-haiku-20241022'), [
    'reasoning_effort',
  ]);
  assert.deepEqual(droppedParams(effort, 'openai', 'anthropic', 'claude-haiku-4-5'), []);
  assert.deepEqual(
    droppedParams({ reasoning: { effort: 'low' } }, 'openai_responses', 'anthropic', 'claude-3-5-haiku'),
    ['reasoning.effort'],
  );
  // a small max_tokens keeps the budget under it, leaving a quarter (1,024 at least) for the answer
  assert.equal(ask('claude-haiku-4-5', { max_completion_tokens: 4000 }).thinking.budget_tokens, 2976);
  assert.equal(ask('claude-haiku-4-5', { max_completion_tokens: 2000 }).thinking, undefined);
});

test('OpenAI models: reasoning_effort and default-only sampling for reasoning models, strict only where it holds', () => {
  const ask = (body: Record<string, unknown>, model: string) =>
    JSON.parse(
      openai.encodeRequest(decodeAnthropicRequest({ model: 'm', max_tokens: 50, ...body }), model).body,
    );
  const claudeCode = {
    messages: [{ role: 'user', content: 'x' }],
    temperature: 0,
    thinking: { type: 'adaptive' },
    output_config: { effort: 'high' },
  };
  const gpt5 = ask(claudeCode, 'gpt-5');
  assert.deepEqual([gpt5.reasoning_effort, gpt5.temperature], ['high', undefined]);
  const gpt41 = ask(claudeCode, 'gpt-4.1');
  assert.deepEqual([gpt41.reasoning_effort, gpt41.temperature], [undefined, 0]);
  // gpt-oss (served by vLLM, Groq, Ollama…) takes reasoning_effort and keeps the client's sampling
  const oss = ask(claudeCode, 'gpt-oss-120b');
  assert.deepEqual([oss.reasoning_effort, oss.temperature], ['high', 0]);
  const tool = (schema: Record<string, unknown>) =>
    ask(
      {
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ name: 't', input_schema: schema, strict: true }],
      },
      'gpt-5',
    ).tools[0].function.strict;
  assert.equal(
    tool({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
      additionalProperties: false,
    }),
    true,
  );
  assert.equal(
    tool({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }),
    false,
  );
  assert.equal(
    tool({
      type: 'object',
      properties: { a: { type: 'object', properties: { b: { type: 'string' } } } },
      required: ['a'],
      additionalProperties: false,
    }),
    false,
  );
});

test('OpenAI models get only what each takes: gpt-5-chat-latest no reasoning_effort, efforts fitted, no stop on reasoning models', () => {
  const ask = (body: Record<string, unknown>, model: string) =>
    JSON.parse(
      openai.encodeRequest(
        decodeAnthropicRequest({
          model: 'm',
          max_tokens: 50,
          messages: [{ role: 'user', content: 'x' }],
          ...body,
        }),
        model,
      ).body,
    );
  const claudeCode = { temperature: 0, thinking: { type: 'adaptive' }, output_config: { effort: 'high' } };
  // ChatGPT's GPT-5 snapshot is no reasoning model: reasoning_effort is a 400 there, sampling is taken
  const chat = ask({ ...claudeCode, stop_sequences: ['END'] }, 'gpt-5-chat-latest');
  assert.deepEqual([chat.reasoning_effort, chat.temperature, chat.stop], [undefined, 0, ['END']]);
  // an effort the model refuses becomes the nearest it takes
  const effort = (value: string, model: string) =>
    ask({ thinking: { type: 'adaptive' }, output_config: { effort: value } }, model).reasoning_effort;
  assert.equal(effort('max', 'gpt-5'), 'high');
  assert.equal(effort('xhigh', 'gpt-5.1'), 'high');
  assert.equal(effort('xhigh', 'gpt-5.2'), 'xhigh');
  assert.equal(effort('max', 'o3'), 'high');
  assert.equal(effort('low', 'gpt-5-pro'), 'high');
  assert.equal(effort('high', 'gpt-5.1-chat-latest'), 'medium');
  // thinking off on a model with one effort: nothing to send
  assert.equal(ask({ thinking: { type: 'disabled' } }, 'gpt-5.1-chat-latest').reasoning_effort, undefined);
  // OpenAI's reasoning models refuse stop: a 400 naming the field, never an answer that runs past it
  assert.throws(
    () => ask({ stop_sequences: ['END'] }, 'gpt-5-mini'),
    (err: unknown) => err instanceof SvcError && err.status === 400 && /^stop_sequences: /.test(err.message),
  );
  assert.deepEqual(ask({ stop_sequences: ['END'] }, 'gpt-4.1').stop, ['END']);
  assert.deepEqual(ask({ stop_sequences: ['END'] }, 'gpt-oss-120b').stop, ['END']);
});

test("Claude models refuse an empty or whitespace-only stop sequence: a 400 naming the client's field, never sent", () => {
  const messages = [{ role: 'user', content: 'x' }];
  for (const stop of [['\n'], ['END', ' \t'], ['']])
    assert.throws(
      () => toAnthropic({ messages, stop }, 'claude-sonnet-4-5'),
      (err: unknown) =>
        err instanceof SvcError && err.status === 400 && /^stop: .*whitespace/.test(err.message),
      JSON.stringify(stop),
    );
  assert.deepEqual(toAnthropic({ messages, stop: ['END', '\nEND'] }, 'claude-sonnet-4-5').stop_sequences, [
    'END',
    '\nEND',
  ]);
});

test("a document's context reaches an OpenAI model, and citations asked for in a tool result are named as left out", () => {
  const cited = {
    type: 'document',
    title: 'report',
    context: 'the Q3 report',
    citations: { enabled: true },
    source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' },
  };
  const body = {
    max_tokens: 64,
    messages: [
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'r.pdf' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [cited] }] },
    ],
  };
  const sent = toOpenAI(body);
  const tool = sent.messages.find((m: any) => m.role === 'tool');
  assert.equal(tool.content, 'the Q3 report\n[document attached in the next user message]');
  for (const adapter of ['openai', 'openrouter'] as const)
    assert.deepEqual(droppedParams(body, 'anthropic', adapter, 'gpt-5-mini'), [
      'messages.2.content.0.content.0.citations',
    ]);
  // Claude cites: nothing is left out there, and citations turned off ask for nothing
  assert.deepEqual(droppedParams(body, 'anthropic', 'anthropic', 'claude-haiku-4-5'), []);
  const off = { ...cited, citations: { enabled: false } };
  assert.deepEqual(
    droppedParams({ messages: [{ role: 'user', content: [off] }] }, 'anthropic', 'openai'),
    [],
  );
});

test('documents reach OpenAI models: a PDF as a file part (also from a tool result), text documents and search results as text', () => {
  const pdf = {
    type: 'document',
    title: 'report',
    source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' },
  };
  const loop = toOpenAI({
    messages: [
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'r.pdf' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [pdf] }] },
    ],
  });
  const tool = loop.messages.find((m: any) => m.role === 'tool');
  assert.equal(tool.content, '[document attached in the next user message]');
  const next = loop.messages.at(-1);
  assert.deepEqual(next.content, [
    { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } },
  ]);
  const inline = toOpenAI({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
          {
            type: 'search_result',
            source: 'https://x.test',
            title: 'Hit',
            content: [{ type: 'text', text: 'found' }],
          },
          { type: 'text', text: 'summarise' },
        ],
      },
    ],
  });
  assert.match(
    JSON.stringify(inline.messages[0].content),
    /plain words.*Hit\\nhttps:\/\/x.test\\nfound.*summarise/,
  );
  assert.throws(
    () =>
      toOpenAI({
        messages: [
          {
            role: 'user',
            content: [{ type: 'document', source: { type: 'url', url: 'https://x.test/a.pdf' } }],
          },
        ],
      }),
    (err: any) => err.code === 'invalid_request' && /document \(source url\)/.test(err.message),
  );
  // and back: an OpenAI file part with a PDF is an Anthropic document
  const back = toAnthropic({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'file', file: { filename: 'r.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } },
          { type: 'text', text: 'summarise' },
        ],
      },
    ],
  });
  assert.deepEqual(back.messages[0].content[0], {
    type: 'document',
    source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' },
    title: 'r.pdf',
  });
});

test('logprobs asked of a Claude model are a 400 naming them, not an answer without them', () => {
  const user = [{ role: 'user', content: 'x' }];
  assert.throws(
    () => toAnthropic({ messages: user, logprobs: true }),
    (err: any) => err.details.param === 'logprobs',
  );
  assert.throws(
    () => toAnthropic({ messages: user, top_logprobs: 2 }),
    (err: any) => err.details.param === 'top_logprobs',
  );
  assert.equal(toAnthropic({ messages: user, logprobs: false }).model, 'claude-x');
});

test('cache breakpoints on tool results and assistant text reach OpenRouter as content parts (Claude Code caches its tool loop there)', () => {
  const cc = { type: 'ephemeral' };
  const body = {
    messages: [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'checking', cache_control: cc },
          { type: 'tool_use', id: 't1', name: 'f', input: {} },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 't1', content: 'done', cache_control: cc }],
      },
    ],
  };
  const routed = toOpenAI(body, openrouter);
  assert.deepEqual(routed.messages.find((m: any) => m.role === 'tool').content, [
    { type: 'text', text: 'done', cache_control: cc },
  ]);
  assert.deepEqual(routed.messages.find((m: any) => m.role === 'assistant').content, [
    { type: 'text', text: 'checking', cache_control: cc },
  ]);
  // OpenAI itself caches on its own: plain strings there
  const direct = toOpenAI(body);
  assert.equal(direct.messages.find((m: any) => m.role === 'tool').content, 'done');
  assert.equal(direct.messages.find((m: any) => m.role === 'assistant').content, 'checking');
});

test('#23 SSE keep-alive comments are never re-emitted as data, in the tap frame mode either', async () => {
  const text = Buffer.concat(
    await collect(openrouter.tapStream(chunks([utf8(OPENAI_TOOL_STREAM)]), { model: 'alias' })),
  ).toString();
  assert.ok(!text.includes('OPENROUTER PROCESSING'));
  for (const f of parseSseText(text)) if (f.data !== '[DONE]') JSON.parse(f.data);
});

test('#24 a mid-stream upstream error ends the client stream with an error frame, never a fake end_turn', async () => {
  const cut = ANTHROPIC_TOOL_STREAM.slice(0, ANTHROPIC_TOOL_STREAM.indexOf('event: content_block_stop'));
  const sse = `${cut}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`;
  const events = anthropic.decodeStream(decodeSse(chunks([utf8(sse)])));
  const frames = parseSseText((await collect(encodeOpenAIStream(events, { model: 'a' }))).join(''));
  const last = JSON.parse(frames.at(-1)!.data);
  assert.equal(last.error.code, 'upstream_overloaded');
  assert.ok(!frames.some((f) => f.data === '[DONE]' || f.data.includes('"finish_reason":"stop"')));
});

test('#25 tool shapes without an equivalent are a clear 400, not silently dropped', () => {
  const messages = [{ role: 'user', content: 'x' }];
  assert.throws(
    () => toAnthropic({ messages, tools: [{ type: 'custom', custom: { name: 'c' } }] }),
    (e: unknown) => e instanceof SvcError && e.code === 'invalid_request',
  );
  assert.throws(
    () =>
      toAnthropic({
        messages,
        tools: [{ type: 'function', function: { name: 'f', parameters: { anyOf: [{ type: 'object' }] } } }],
      }),
    (e: unknown) => e instanceof SvcError && e.code === 'invalid_request' && e.message.includes('anyOf'),
  );
  assert.throws(
    () => toOpenAI({ messages, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }),
    SvcError,
  );
});

test('Anthropic SDK 1.x request (anthropic-version 2026-10-21) reaches an Anthropic upstream with its version and no sampling params', () => {
  const req: CanonicalRequest = decodeAnthropicRequest(
    { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
    { 'anthropic-version': '2026-10-21' },
  );
  const call = anthropic.encodeRequest({ ...req, temperature: 0.5 }, 'c');
  assert.equal(call.headers['anthropic-version'], '2026-10-21');
  assert.equal(JSON.parse(call.body).temperature, undefined);
  const old = decodeAnthropicRequest(
    { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
    {},
  );
  assert.equal(JSON.parse(anthropic.encodeRequest({ ...old, temperature: 1.7 }, 'c').body).temperature, 1);
});

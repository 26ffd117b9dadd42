/**
 * Cross-shape translation end to end: an OpenAI request to an Anthropic upstream body (exact JSON), upstream
 * streams of one wire re-encoded for clients of the other and read back by the official SDKs' stream
 * helpers, tool_choice and reasoning forms, stop reasons and cache-aware usage in both directions.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { decodeFinishReason } from '#src/adapters/openai/response.ts';
import {
  createAnthropicAdapter,
  createOpenAIAdapter,
  createOpenRouterAdapter,
} from '#src/adapters/registry.ts';
import type { CanonicalResponse } from '#src/canonical/response.ts';
import { droppedParams } from '#src/gateway/dropped-params.ts';
import { decodeAnthropicRequest } from '#src/gateway/shapes/anthropic/decode.ts';
import { encodeAnthropicResponse } from '#src/gateway/shapes/anthropic/encode.ts';
import { encodeAnthropicStream } from '#src/gateway/shapes/anthropic/encode-stream.ts';
import { decodeOpenAIRequest } from '#src/gateway/shapes/openai/decode.ts';
import { encodeOpenAIResponse } from '#src/gateway/shapes/openai/encode.ts';
import { encodeOpenAIStream } from '#src/gateway/shapes/openai/encode-stream.ts';
import { decodeResponsesRequest } from '#src/gateway/shapes/responses/decode.ts';
import { decodeSse } from '#src/lib/sse-decode.ts';
import { ANTHROPIC_TOOL_STREAM, chunks, OPENAI_TOOL_STREAM, utf8 } from '../../helpers/sse-fixtures.ts';

const anthropic = createAnthropicAdapter({ baseUrl: 'https://a.test', apiKey: 'k' });
const openai = createOpenAIAdapter({ baseUrl: 'https://o.test/v1', apiKey: 'k' });
const openrouter = createOpenRouterAdapter({ baseUrl: 'https://r.test/api/v1', apiKey: 'k' });
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]).toString('base64');

function sseResponse(gen: AsyncIterable<string>): Response {
  const enc = new TextEncoder();
  const body = ReadableStream.from(
    (async function* () {
      for await (const s of gen) yield enc.encode(s);
    })(),
  );
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

test('OpenAI request → canonical → Anthropic upstream body, exactly', () => {
  const req = decodeOpenAIRequest({
    model: 'fast',
    messages: [
      { role: 'developer', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: 'https://x.test/m.jpg', detail: 'low' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '5°C' },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '12:00' }] },
      { role: 'user', content: 'Thanks, and tomorrow?' },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
      { type: 'function', function: { name: 'get_time' } },
    ],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    parallel_tool_calls: false,
    max_completion_tokens: 1000,
    temperature: 0.3,
    stop: 'END',
    user: 'u-1',
    seed: 7,
    stream: true,
    stream_options: { include_usage: true },
  });
  const call = anthropic.encodeRequest(req, 'claude-sonnet-4-5');
  assert.equal(call.url, 'https://a.test/v1/messages');
  assert.deepEqual(call.headers, {
    'content-type': 'application/json',
    'x-api-key': 'k',
    'anthropic-version': '2023-06-01',
  });
  assert.deepEqual(JSON.parse(call.body), {
    model: 'claude-sonnet-4-5',
    max_tokens: 1000,
    system: 'Be brief.',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'image', source: { type: 'url', url: 'https://x.test/m.jpg' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } },
          { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '5°C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '12:00' }] },
          { type: 'text', text: 'Thanks, and tomorrow?' },
        ],
      },
    ],
    tools: [
      {
        name: 'get_weather',
        description: 'Weather',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ],
    tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    temperature: 0.3,
    stop_sequences: ['END'],
    metadata: { user_id: 'u-1' },
    stream: true,
  });
});

test('Anthropic upstream SSE → canonical → OpenAI SSE read back by the OpenAI SDK stream helper', async () => {
  const client = new OpenAI({
    apiKey: 'x',
    baseURL: 'http://gw.test/v1',
    fetch: async () =>
      sseResponse(
        encodeOpenAIStream(anthropic.decodeStream(decodeSse(chunks([utf8(ANTHROPIC_TOOL_STREAM)]))), {
          model: 'alias',
          include_usage: true,
        }),
      ),
  });
  const stream = client.chat.completions.stream({
    model: 'alias',
    messages: [{ role: 'user', content: 'x' }],
    stream_options: { include_usage: true },
  });
  const done = await stream.finalChatCompletion();
  const choice = done.choices[0];
  assert.equal(done.model, 'alias');
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.content, 'Checking é ');
  assert.deepEqual(
    choice.message.tool_calls?.map(
      (t) => t.type === 'function' && [t.id, t.function.name, JSON.parse(t.function.arguments)],
    ),
    [
      ['toolu_01X', 'get_weather', { city: 'Oslo' }],
      ['toolu_02Y', 'get_time', {}],
    ],
  );
  assert.equal(done.usage?.prompt_tokens, 1247);
  assert.equal(done.usage?.prompt_tokens_details?.cached_tokens, 1200);
});

test('OpenAI upstream SSE → canonical → Anthropic SSE read back by the Anthropic SDK stream helper', async () => {
  const client = new Anthropic({
    apiKey: 'x',
    baseURL: 'http://gw.test',
    fetch: async () =>
      sseResponse(
        encodeAnthropicStream(openai.decodeStream(decodeSse(chunks([utf8(OPENAI_TOOL_STREAM)]))), {
          model: 'alias',
        }),
      ),
  });
  const msg = await client.messages
    .stream({ model: 'alias', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] })
    .finalMessage();
  assert.equal(msg.model, 'alias');
  assert.equal(msg.stop_reason, 'tool_use');
  assert.deepEqual(
    msg.content.map((b) =>
      b.type === 'text' ? ['text', b.text] : b.type === 'tool_use' ? [b.name, b.input] : [b.type],
    ),
    [
      ['text', 'Checking é ☃'],
      ['get_weather', { city: 'Oslo' }],
      ['get_time', {}],
    ],
  );
  assert.equal(msg.usage.input_tokens, 52);
  assert.equal(msg.usage.cache_read_input_tokens, 2048);
  assert.equal(msg.usage.output_tokens, 40);
});

test('Anthropic upstream thinking reaches an Anthropic client through the full translation with its signature', async () => {
  const client = new Anthropic({
    apiKey: 'x',
    baseURL: 'http://gw.test',
    fetch: async () =>
      sseResponse(
        encodeAnthropicStream(anthropic.decodeStream(decodeSse(chunks([utf8(ANTHROPIC_TOOL_STREAM)]))), {
          model: 'alias',
        }),
      ),
  });
  const msg = await client.messages
    .stream({ model: 'alias', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] })
    .finalMessage();
  assert.deepEqual(msg.content[0], { type: 'thinking', thinking: 'The user wants ☃', signature: 'EqQB' });
  assert.equal(msg.usage.cache_creation_input_tokens, 7);
});

test('every tool_choice form translates both ways', () => {
  const tools = [{ type: 'function', function: { name: 'f' } }];
  const o2a = (tool_choice: unknown) =>
    JSON.parse(
      anthropic.encodeRequest(
        decodeOpenAIRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools, tool_choice }),
        'c',
      ).body,
    ).tool_choice;
  assert.deepEqual(o2a('auto'), { type: 'auto' });
  assert.deepEqual(o2a('none'), { type: 'none' });
  assert.deepEqual(o2a('required'), { type: 'any' });
  assert.deepEqual(o2a({ type: 'function', function: { name: 'f' } }), { type: 'tool', name: 'f' });
  assert.deepEqual(
    o2a({
      type: 'allowed_tools',
      allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'f' } }] },
    }),
    { type: 'any' },
  );
  const a2o = (tool_choice: unknown) => {
    const body = JSON.parse(
      openai.encodeRequest(
        decodeAnthropicRequest({
          model: 'm',
          max_tokens: 9,
          messages: [{ role: 'user', content: 'x' }],
          tools: [{ name: 'f', input_schema: { type: 'object' } }],
          tool_choice,
        }),
        'g',
      ).body,
    );
    return [body.tool_choice, body.parallel_tool_calls];
  };
  assert.deepEqual(a2o({ type: 'auto' }), ['auto', undefined]);
  assert.deepEqual(a2o({ type: 'none' }), ['none', undefined]);
  assert.deepEqual(a2o({ type: 'any', disable_parallel_tool_use: true }), ['required', false]);
  assert.deepEqual(a2o({ type: 'tool', name: 'f' }), [
    { type: 'function', function: { name: 'f' } },
    undefined,
  ]);
});

test('reasoning effort and thinking budgets translate between the three wires', () => {
  const fromOpenAI = JSON.parse(
    anthropic.encodeRequest(
      decodeOpenAIRequest({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        reasoning_effort: 'high',
        max_completion_tokens: 4000,
      }),
      'c',
    ).body,
  );
  assert.deepEqual(
    [fromOpenAI.thinking, fromOpenAI.output_config],
    [{ type: 'adaptive' }, { effort: 'high' }],
  );
  const thinking = decodeAnthropicRequest({
    model: 'm',
    max_tokens: 20000,
    messages: [{ role: 'user', content: 'x' }],
    thinking: { type: 'enabled', budget_tokens: 8000 },
  });
  assert.equal(JSON.parse(openai.encodeRequest(thinking, 'gpt-5').body).reasoning_effort, 'medium');
  // a chat model that is not a reasoning model refuses reasoning_effort: it is not sent
  assert.equal(JSON.parse(openai.encodeRequest(thinking, 'gpt-4.1').body).reasoning_effort, undefined);
  const router = JSON.parse(openrouter.encodeRequest(thinking, 'anthropic/claude').body);
  assert.deepEqual(
    [router.reasoning, router.max_tokens, router.max_completion_tokens],
    [{ max_tokens: 8000 }, 20000, undefined],
  );
  const forced = decodeOpenAIRequest({
    model: 'm',
    messages: [{ role: 'user', content: 'x' }],
    reasoning: { max_tokens: 3000 },
    max_tokens: 2000,
  });
  assert.equal(JSON.parse(anthropic.encodeRequest(forced, 'c').body).thinking.budget_tokens, 1999);
});

test('stop_reason ↔ finish_reason in both directions', () => {
  const res = (finish_reason: string) =>
    openai.decodeResponse({
      id: 'c',
      model: 'g',
      choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    }).stop_reason;
  // tool_calls / function_call with no call in the message is a plain end: there is nothing to run
  assert.deepEqual(['stop', 'length', 'content_filter', 'tool_calls', 'function_call', 'weird'].map(res), [
    'end_turn',
    'max_tokens',
    'refusal',
    'end_turn',
    'end_turn',
    'end_turn',
  ]);
  assert.deepEqual(['tool_calls', 'function_call'].map(decodeFinishReason), ['tool_use', 'tool_use']);
  const anth = (stop_reason: string) =>
    anthropic.decodeResponse({
      id: 'm',
      model: 'c',
      content: [{ type: 'text', text: 'x' }],
      stop_reason,
      usage: { input_tokens: 1, output_tokens: 1 },
    }).stop_reason;
  assert.deepEqual(['end_turn', 'stop_sequence', 'max_tokens', 'refusal', 'new_reason'].map(anth), [
    'end_turn',
    'stop_sequence',
    'max_tokens',
    'refusal',
    'end_turn',
  ]);
});

test('non-streaming usage with cache reads and writes survives both directions', () => {
  const fromAnthropic = anthropic.decodeResponse({
    id: 'msg_1',
    model: 'c',
    content: [{ type: 'text', text: 'hi' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: 12,
      cache_creation_input_tokens: 300,
      cache_read_input_tokens: 2048,
      output_tokens: 57,
    },
  });
  const o = encodeOpenAIResponse(fromAnthropic, { model: 'alias', created: 1 }) as any;
  assert.deepEqual(o.usage, {
    prompt_tokens: 2360,
    completion_tokens: 57,
    total_tokens: 2417,
    prompt_tokens_details: { cached_tokens: 2048, cache_write_tokens: 300 },
    completion_tokens_details: { reasoning_tokens: 0 },
  });
  assert.equal(o.id, 'chatcmpl-msg_1');
  const fromRouter: CanonicalResponse = openrouter.decodeResponse({
    id: 'gen-1',
    model: 'anthropic/claude',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'hi',
          reasoning: 'r',
          reasoning_details: [{ type: 'reasoning.text', text: 'r', signature: 's' }],
        },
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: 2360,
      completion_tokens: 57,
      total_tokens: 2417,
      prompt_tokens_details: { cached_tokens: 2048, cache_write_tokens: 300 },
      completion_tokens_details: { reasoning_tokens: 9 },
      cost: 0.0123,
    },
  });
  assert.deepEqual(fromRouter.usage, {
    input_tokens: 12,
    output_tokens: 57,
    cached_input_tokens: 2048,
    cache_creation_input_tokens: 300,
    reasoning_tokens: 9,
    upstream_cost: '0.0123',
  });
  // a small cost stays a decimal string, never 1.2e-7
  const tiny = openrouter.decodeResponse({
    id: 'gen-2',
    model: 'r',
    choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, cost: 1.2e-7 },
  });
  assert.equal(tiny.usage.upstream_cost, '0.00000012');
  const a = encodeAnthropicResponse(fromRouter, { model: 'alias' }) as any;
  assert.deepEqual(a.usage, {
    input_tokens: 12,
    cache_creation_input_tokens: 300,
    cache_read_input_tokens: 2048,
    output_tokens: 57,
    output_tokens_details: { thinking_tokens: 9 },
    cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 0 },
    service_tier: 'standard',
  });
  assert.deepEqual(a.content, [
    { type: 'thinking', thinking: 'r', signature: 's' },
    { type: 'text', text: 'hi' },
  ]);
  assert.equal(a.id, 'msg_gen-1');
});

test('Anthropic request → OpenAI: more than 4 stop sequences, MCP servers or a container are a 400 naming them, not dropped', () => {
  const base = { model: 'x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
  const refusal = (body: Record<string, unknown>, flavor: 'openai' | 'openrouter' = 'openai') => {
    try {
      (flavor === 'openai' ? openai : openrouter).encodeRequest(decodeAnthropicRequest(body), 'gpt-4o');
      return null;
    } catch (err) {
      return (err as { code?: string; details?: { param?: string } }).details?.param ?? String(err);
    }
  };
  assert.equal(refusal({ ...base, stop_sequences: ['a', 'b', 'c', 'd'] }), null);
  assert.equal(refusal({ ...base, stop_sequences: ['a', 'b', 'c', 'd', 'e'] }), 'stop_sequences');
  assert.equal(refusal({ ...base, stop_sequences: ['a', 'b', 'c', 'd', 'e'] }, 'openrouter'), null);
  assert.equal(
    refusal({ ...base, mcp_servers: [{ type: 'url', url: 'https://mcp.test/sse', name: 'm' }] }),
    'mcp_servers',
  );
  assert.equal(refusal({ ...base, container: 'container_1' }), 'container');
  assert.equal(refusal({ ...base, service_tier: 'auto' }), null);
});

test("OpenAI request → Claude: audio output and the deprecated functions are a 400 naming them; web_search_options is Claude's web search tool; seed and penalties are listed as dropped", () => {
  const base = { model: 'x', messages: [{ role: 'user', content: 'hi' }] };
  const param = (body: Record<string, unknown>) => {
    try {
      anthropic.encodeRequest(decodeOpenAIRequest(body), 'claude-sonnet-4-5');
      return null;
    } catch (err) {
      return (err as { details?: { param?: string } }).details?.param ?? String(err);
    }
  };
  assert.equal(param(base), null);
  assert.equal(
    param({ ...base, modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'mp3' } }),
    'audio',
  );
  assert.equal(param({ ...base, modalities: ['text', 'audio'] }), 'modalities');
  assert.equal(param({ ...base, modalities: ['text'] }), null);
  assert.equal(param({ ...base, web_search_options: {} }), null);
  const search = {
    ...base,
    web_search_options: {
      search_context_size: 'low',
      user_location: { type: 'approximate', approximate: { country: 'FR', city: 'Paris', region: null } },
    },
  };
  const sent = JSON.parse(anthropic.encodeRequest(decodeOpenAIRequest(search), 'claude-sonnet-4-5').body);
  assert.deepEqual(sent.tools, [
    {
      type: 'web_search_20250305',
      name: 'web_search',
      user_location: { type: 'approximate', country: 'FR', city: 'Paris' },
    },
  ]);
  assert.deepEqual(droppedParams(search, 'openai', 'anthropic'), ['web_search_options.search_context_size']);
  // the deprecated function-calling form: sent without it, the model would answer as if it had no tools
  const fn = { name: 'f', parameters: { type: 'object', properties: {} } };
  assert.equal(param({ ...base, functions: [fn] }), 'functions');
  assert.equal(param({ ...base, functions: [fn], function_call: 'auto' }), 'functions');
  assert.equal(param({ ...base, function_call: { name: 'f' } }), 'function_call');
  const knobs = {
    ...base,
    seed: 7,
    frequency_penalty: 0.5,
    presence_penalty: 0,
    logit_bias: { 50256: -100 },
    temperature: 0.2,
  };
  assert.equal(param(knobs), null);
  assert.deepEqual(droppedParams(knobs, 'openai', 'anthropic'), [
    'seed',
    'frequency_penalty',
    'presence_penalty',
    'logit_bias',
  ]);
  assert.deepEqual(droppedParams(knobs, 'openai', 'openrouter'), []);
});

test('every translation names the knobs it leaves out: verbosity to Claude, top_k and service_tier to OpenAI, service_tier, text.verbosity and truncation auto off the Responses API', () => {
  // gpt-5's verbosity has no Claude form: it was left out without a word
  const chat = { model: 'x', messages: [{ role: 'user', content: 'hi' }], verbosity: 'low', store: true };
  assert.deepEqual(droppedParams(chat, 'openai', 'anthropic'), ['verbosity']);
  // an Anthropic client's top_k and serving options reached an OpenAI model as nothing, and nothing said so
  const messages = {
    model: 'x',
    max_tokens: 9,
    messages: [{ role: 'user', content: 'hi' }],
    top_k: 5,
    service_tier: 'auto',
    inference_geo: 'us',
    speed: 'fast',
    temperature: 0.5,
  };
  assert.equal(
    JSON.parse(openai.encodeRequest(decodeAnthropicRequest(messages), 'gpt-4.1').body).top_k,
    undefined,
  );
  assert.deepEqual(droppedParams(messages, 'anthropic', 'openai'), [
    'top_k',
    'service_tier',
    'inference_geo',
    'speed',
  ]);
  // OpenRouter takes top_k
  assert.equal(JSON.parse(openrouter.encodeRequest(decodeAnthropicRequest(messages), 'x/y').body).top_k, 5);
  assert.deepEqual(droppedParams(messages, 'anthropic', 'openrouter'), [
    'service_tier',
    'inference_geo',
    'speed',
  ]);
  // Claude Code's server-side context editing: its tool-result clearing does not happen on another wire (named);
  // the edit it sends on every request, keeping every thinking block, changes nothing (not named)
  const keepThinking = { type: 'clear_thinking_20251015', keep: 'all' };
  const clearing = { type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 30 } };
  const edited = (edits: unknown[]) => ({ ...messages, top_k: undefined, context_management: { edits } });
  assert.deepEqual(droppedParams(edited([keepThinking]), 'anthropic', 'openai').at(-1), 'speed');
  assert.deepEqual(
    droppedParams(edited([keepThinking, clearing]), 'anthropic', 'openai').at(-1),
    'context_management',
  );
  assert.ok(droppedParams(edited([clearing]), 'anthropic', 'openrouter').includes('context_management'));
  // the Responses API on OpenRouter (translated to Chat Completions) drops service_tier as on a Claude model
  const responses = {
    model: 'x',
    input: 'hi',
    service_tier: 'flex',
    text: { verbosity: 'low' },
    metadata: {},
  };
  assert.deepEqual(droppedParams(responses, 'openai_responses', 'openrouter'), [
    'service_tier',
    'text.verbosity',
  ]);
  assert.deepEqual(droppedParams(responses, 'openai_responses', 'anthropic'), [
    'service_tier',
    'text.verbosity',
  ]);
  assert.deepEqual(
    droppedParams({ model: 'x', input: 'hi', text: { verbosity: null } }, 'openai_responses', 'anthropic'),
    [],
  );
  // truncation "auto" (OpenAI drops earlier items rather than overflow the window) has no form on another
  // wire, whose call is sent whole and overflows: it went without a word; "disabled" is what every call does
  for (const adapter of ['anthropic', 'openrouter'] as const) {
    assert.deepEqual(
      droppedParams({ model: 'x', input: 'hi', truncation: 'auto' }, 'openai_responses', adapter),
      ['truncation'],
    );
    assert.deepEqual(
      droppedParams({ model: 'x', input: 'hi', truncation: 'disabled' }, 'openai_responses', adapter),
      [],
    );
    // a field newer than this gateway was left out without a word; Codex's everyday fields stay unnamed
    const codex = {
      model: 'x',
      input: 'hi',
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
      client_metadata: { a: 'b' },
      stream_options: { include_obfuscation: false },
      max_tool_calls: 3,
      metadata: {},
      safety_identifier: 'u',
    };
    assert.deepEqual(droppedParams(codex, 'openai_responses', adapter), []);
    assert.deepEqual(
      droppedParams(
        { ...codex, context_management: { mode: 'auto' }, later: null },
        'openai_responses',
        adapter,
      ),
      ['context_management'],
    );
  }
});

test('sampling and thinking the routed model refuses are named in svc-dropped-params: OpenAI models, Claude after Opus 4.6', () => {
  const messages = {
    model: 'x',
    max_tokens: 9,
    messages: [{ role: 'user', content: 'hi' }],
    temperature: 0.2,
  };
  // gpt-5 takes temperature only at 1: it was left out without a word
  assert.equal(
    JSON.parse(openai.encodeRequest(decodeAnthropicRequest(messages), 'gpt-5').body).temperature,
    undefined,
  );
  assert.deepEqual(droppedParams(messages, 'anthropic', 'openai', 'gpt-5'), ['temperature']);
  assert.deepEqual(droppedParams({ ...messages, temperature: 1 }, 'anthropic', 'openai', 'gpt-5'), []);
  // models that take it: nothing named
  for (const model of ['gpt-4.1', 'gpt-5-chat-latest', 'gpt-oss-120b'])
    assert.deepEqual(droppedParams(messages, 'anthropic', 'openai', model), [], model);
  const chat = {
    model: 'x',
    messages: [{ role: 'user', content: 'hi' }],
    temperature: 0.2,
    top_p: 0.5,
    top_k: 5,
  };
  assert.deepEqual(droppedParams(chat, 'openai', 'anthropic', 'claude-opus-4-7'), [
    'temperature',
    'top_p',
    'top_k',
  ]);
  assert.deepEqual(
    droppedParams({ ...chat, temperature: 1.4, top_p: 0.99 }, 'openai', 'anthropic', 'claude-sonnet-5'),
    ['top_k'],
  );
  assert.deepEqual(droppedParams(chat, 'openai', 'anthropic', 'claude-sonnet-4-5'), []);
  const responses = { model: 'x', input: 'hi', top_p: 0.5 };
  assert.deepEqual(droppedParams(responses, 'openai_responses', 'anthropic', 'claude-opus-4-7'), ['top_p']);
  // thinking to an OpenAI model that does not reason: reasoning_effort is not sent (a 400 there)
  const claudeCode = {
    ...messages,
    temperature: 1,
    thinking: { type: 'adaptive' },
    output_config: { effort: 'high' },
  };
  assert.deepEqual(droppedParams(claudeCode, 'anthropic', 'openai', 'gpt-4.1'), [
    'thinking',
    'output_config.effort',
  ]);
  assert.deepEqual(droppedParams(claudeCode, 'anthropic', 'openai', 'gpt-5-chat-latest'), [
    'thinking',
    'output_config.effort',
  ]);
  assert.deepEqual(droppedParams(claudeCode, 'anthropic', 'openai', 'gpt-5'), []);
  assert.deepEqual(
    droppedParams({ ...messages, thinking: { type: 'disabled' } }, 'anthropic', 'openai', 'gpt-4.1'),
    [],
  );
});

test('OpenAI request → Claude: a message left empty opens no turn, so the turns around it still alternate', () => {
  const body = (messages: unknown[]) =>
    JSON.parse(
      anthropic.encodeRequest(decodeOpenAIRequest({ model: 'x', messages }), 'claude-sonnet-4-5').body,
    ).messages as Array<{ role: string; content: unknown[] }>;
  // an empty assistant answer between two user turns: the two user turns reached Claude one after the other
  assert.deepEqual(
    body([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'again' },
    ]),
    [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'text', text: 'again' },
        ],
      },
    ],
  );
  // an empty user message between two answers, and LangChain's audio-only assistant entry
  const turns = body([
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'a' },
    { role: 'user', content: '' },
    { role: 'assistant', content: 'b' },
    { role: 'assistant', content: null, audio: { id: 'audio_1' } },
    { role: 'user', content: 'c' },
  ]);
  assert.deepEqual(
    turns.map((t) => t.role),
    ['user', 'assistant', 'user'],
  );
  assert.deepEqual(turns[1]!.content, [
    { type: 'text', text: 'a' },
    { type: 'text', text: 'b' },
  ]);
});

test('OpenAI request → a Claude model after Opus 4.6: only the sampling it takes is sent (temperature 1, top_p from 0.99, no top_k)', () => {
  const sampling = (model: string, knobs: Record<string, unknown>) => {
    const body = JSON.parse(
      anthropic.encodeRequest(
        decodeOpenAIRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }], ...knobs }),
        model,
      ).body,
    );
    return [body.temperature, body.top_p, body.top_k];
  };
  // those models refuse any other temperature, top_p or top_k with a 400 (the Messages API reference)
  for (const model of [
    'claude-opus-4-7',
    'claude-opus-4-8',
    'claude-sonnet-5',
    'claude-mythos-5',
    'claude-opus-5-5',
  ]) {
    assert.deepEqual(
      sampling(model, { temperature: 0.2, top_k: 5 }),
      [undefined, undefined, undefined],
      model,
    );
    assert.deepEqual(
      sampling(model, { temperature: 0.2, top_p: 0.5 }),
      [undefined, undefined, undefined],
      model,
    );
    assert.deepEqual(sampling(model, { temperature: 1.4 }), [1, undefined, undefined], model);
    assert.deepEqual(sampling(model, { top_p: 0.995 }), [undefined, 0.995, undefined], model);
  }
  // earlier models take them as before, and so does a compatible server's model that is no Claude model
  for (const model of [
    'my-local-model',
    'claude-opus-4-6',
    'claude-sonnet-4-6',
    'claude-sonnet-4-5-20250929',
    'claude-3-5-haiku-20241022',
  ])
    assert.deepEqual(sampling(model, { temperature: 0.2, top_k: 5 }), [0.2, undefined, 5], model);
});

test('Anthropic request → OpenAI or Claude: the deprecated top-level output_format asks for the JSON schema as output_config.format does', () => {
  const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
  const base = { model: 'x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
  for (const form of [
    { output_format: { type: 'json_schema', schema } },
    { output_config: { format: { type: 'json_schema', schema } } },
  ]) {
    const req = decodeAnthropicRequest({ ...base, ...form });
    for (const adapter of [openai, openrouter]) {
      const body = JSON.parse(String(adapter.encodeRequest(req, 'gpt-4o').body));
      // Anthropic's schema output is strict; this open object (no additionalProperties: false) is a schema
      // OpenAI's strict mode refuses, so it goes non-strict
      assert.deepEqual(body.response_format, {
        type: 'json_schema',
        json_schema: { name: 'response', schema, strict: false },
      });
    }
    // to Claude in the current form only: the API takes one of the two
    const claude = JSON.parse(String(anthropic.encodeRequest(req, 'claude-sonnet-4-5').body));
    assert.deepEqual(claude.output_config, { format: { type: 'json_schema', schema } });
    assert.equal('output_format' in claude, false);
  }
});

test('a conversation with no message that has content: system prompts alone become the user turn on Claude, nothing at all is a 400 naming the field', () => {
  const param = (run: () => unknown) => {
    try {
      run();
      return null;
    } catch (err) {
      return (err as { details?: { param?: string } }).details?.param ?? String(err);
    }
  };
  // OpenAI answers a system prompt alone (LangChain's invoke([new SystemMessage(…)])); Claude got messages: []
  const only = JSON.parse(
    anthropic.encodeRequest(
      decodeOpenAIRequest({
        model: 'x',
        messages: [{ role: 'system', content: 'Name three colours.' }],
        response_format: { type: 'json_object' },
      }),
      'claude-sonnet-4-5',
    ).body,
  );
  assert.deepEqual(only.messages, [
    { role: 'user', content: [{ type: 'text', text: 'Name three colours.' }] },
  ]);
  assert.match(JSON.stringify(only.system), /single valid JSON object/);
  assert.doesNotMatch(JSON.stringify(only.system), /three colours/);
  // nothing to send: refused before any upstream call, naming the inbound shape's field
  assert.equal(
    param(() =>
      anthropic.encodeRequest(decodeResponsesRequest({ model: 'x', input: '' }), 'claude-sonnet-4-5'),
    ),
    'input',
  );
  assert.equal(
    param(() => openrouter.encodeRequest(decodeResponsesRequest({ model: 'x', input: [] }), 'x/y')),
    'input',
  );
  const empty = {
    model: 'x',
    max_tokens: 9,
    messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }],
  };
  assert.equal(
    param(() => openai.encodeRequest(decodeAnthropicRequest(empty), 'gpt-4.1')),
    'messages',
  );
  // with a system prompt OpenAI has a message to answer
  assert.equal(
    param(() => openai.encodeRequest(decodeAnthropicRequest({ ...empty, system: 'Hi.' }), 'gpt-4.1')),
    null,
  );
});

test('a part or tool with no form on the other wire is refused naming where the client sent it, not only messages or tools', () => {
  const param = (run: () => unknown) => {
    try {
      run();
      return null;
    } catch (err) {
      return (err as { details?: { param?: string } }).details?.param ?? String(err);
    }
  };
  const toClaude = (body: Record<string, unknown>) =>
    param(() => anthropic.encodeRequest(decodeOpenAIRequest({ model: 'x', ...body }), 'claude-sonnet-4-5'));
  const toGpt = (body: Record<string, unknown>) =>
    param(() =>
      openai.encodeRequest(decodeAnthropicRequest({ model: 'x', max_tokens: 9, ...body }), 'gpt-4.1'),
    );
  const audio = { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } };
  // the leading system message is hoisted, yet the path is the client's own
  assert.equal(
    toClaude({
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: [{ type: 'text', text: 'hear this' }, audio] },
      ],
    }),
    'messages.1.content.1',
  );
  assert.equal(
    toClaude({
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        { type: 'function', function: { name: 'f' } },
        { type: 'custom', custom: { name: 'c' } },
      ],
    }),
    'tools.1',
  );
  const pdfByUrl = { type: 'document', source: { type: 'url', url: 'https://x.test/a.pdf' } };
  assert.equal(
    toGpt({
      messages: [
        {
          role: 'user',
          content: ['x', pdfByUrl].map((c) => (typeof c === 'string' ? { type: 'text', text: c } : c)),
        },
      ],
    }),
    'messages.0.content.1',
  );
  const imageById = { type: 'image', source: { type: 'file', file_id: 'file_1' } };
  assert.equal(
    toGpt({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [pdfByUrl] }] },
      ],
    }),
    'messages.2.content.0.content.0',
  );
  assert.equal(toGpt({ messages: [{ role: 'user', content: [imageById] }] }), 'messages.0.content.0');
  assert.equal(
    toGpt({
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    }),
    'tools.0',
  );
});

/** The 400's details.param and message when `run` is refused, else null. */
function refusal(run: () => unknown): { param: string; message: string } | null {
  try {
    run();
    return null;
  } catch (err) {
    const e = err as { message: string; details?: { param?: string } };
    return { param: e.details?.param ?? '', message: e.message };
  }
}

test('a last user message left empty is a 400 naming it on Claude, never an accidental prefill of the answer before it', () => {
  const toClaude = (messages: unknown[]) => () =>
    anthropic.encodeRequest(decodeOpenAIRequest({ model: 'x', messages }), 'claude-sonnet-4-5');
  // [user, assistant, user ""] reached Claude as [user, assistant]: Claude continued "a" instead of answering
  const refused = refusal(
    toClaude([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: '' },
    ]),
  );
  assert.equal(refused?.param, 'messages.3.content');
  assert.match(refused?.message ?? '', /^messages\.3\.content: the last message is empty/);
  // a Responses conversation likewise names its input item
  assert.equal(
    refusal(() =>
      anthropic.encodeRequest(
        decodeResponsesRequest({
          model: 'x',
          input: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: 'a' },
            { role: 'user', content: [{ type: 'input_text', text: '' }] },
          ],
        }),
        'claude-sonnet-4-5',
      ),
    )?.param,
    'input.2.content',
  );
  // an empty message that leaves a user turn last still merges away, and a client's own final assistant
  // message is the prefill it asked for
  assert.equal(
    refusal(
      toClaude([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
        { role: 'user', content: 'b' },
        { role: 'user', content: '' },
      ]),
    ),
    null,
  );
  assert.equal(
    refusal(
      toClaude([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ]),
    ),
    null,
  );
});

test('an Anthropic prefill is refused on an OpenAI model as Claude models without prefill refuse it; OpenRouter continues it', () => {
  const prefill = decodeAnthropicRequest({
    model: 'x',
    max_tokens: 9,
    messages: [
      { role: 'user', content: 'List three colours as JSON.' },
      { role: 'assistant', content: [{ type: 'text', text: '{"colours": [' }] },
    ],
  });
  // the model answered afresh and the client's '{"colours": [' + answer was no JSON
  const refused = refusal(() => openai.encodeRequest(prefill, 'gpt-4.1'));
  assert.deepEqual(refused, {
    param: 'messages.1',
    message:
      'messages.1: This model does not support assistant message prefill. The conversation must end with a user message.',
  });
  const routed = JSON.parse(openrouter.encodeRequest(prefill, 'openai/gpt-4.1').body);
  assert.deepEqual(routed.messages.at(-1), { role: 'assistant', content: '{"colours": [' });
  // an assistant turn of tool calls alone is no prefill, and svc serve's own conversations are not refused
  const calls = decodeAnthropicRequest({
    model: 'x',
    max_tokens: 9,
    messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
    ],
  });
  assert.equal(
    refusal(() => openai.encodeRequest(calls, 'gpt-4.1')),
    null,
  );
  assert.equal(
    refusal(() => openai.encodeRequest({ ...prefill, passthrough: undefined }, 'gpt-4.1')),
    null,
  );
});

test('OpenAI sealed reasoning is left out on OpenRouter as on Claude; a Claude signature is still replayed', () => {
  const sealed = `gAAAAABo${'x'.repeat(40)}`;
  const input = (encrypted_content: string) => [
    { role: 'user', content: 'weather?' },
    { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'hm' }], encrypted_content },
    { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
  ];
  const tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }];
  const routed = (encrypted: string) =>
    JSON.parse(
      openrouter.encodeRequest(
        decodeResponsesRequest({ model: 'x', input: input(encrypted), tools }),
        'anthropic/claude-sonnet-4.5',
      ).body,
    );
  // it went out as reasoning_details[].signature, which the provider refuses (the seal is OpenAI's account's)
  const body = routed(sealed);
  assert.equal(body.messages[1].reasoning_details, undefined);
  assert.ok(!JSON.stringify(body).includes(sealed));
  assert.equal(body.messages[1].tool_calls.length, 1);
  assert.deepEqual(routed('EqQBCkgIARABGAIiQL').messages[1].reasoning_details, [
    { type: 'reasoning.text', text: 'hm', signature: 'EqQBCkgIARABGAIiQL' },
  ]);
});

test('thinking turned off reaches an OpenAI reasoning model as the least effort that model takes', () => {
  const off = decodeAnthropicRequest({
    model: 'x',
    max_tokens: 9,
    messages: [{ role: 'user', content: 'hi' }],
    thinking: { type: 'disabled' },
  });
  const effort = (model: string) => JSON.parse(openai.encodeRequest(off, model).body).reasoning_effort;
  // it sent no reasoning_effort, so gpt-5 reasoned at its default (medium)
  assert.equal(effort('gpt-5'), 'minimal');
  assert.equal(effort('gpt-5-mini'), 'minimal');
  assert.equal(effort('gpt-5-nano-2025-08-07'), 'minimal');
  // gpt-5.1 and later turn reasoning off; the o-series, codex and gpt-oss go no lower than low
  assert.equal(effort('gpt-5.1'), 'none');
  assert.equal(effort('gpt-5.2-2025-12-11'), 'none');
  assert.equal(effort('o4-mini'), 'low');
  assert.equal(effort('gpt-5-codex'), 'low');
  assert.equal(effort('gpt-oss-120b'), 'low');
  // gpt-5-pro takes only high, and a chat model takes no effort at all
  assert.equal(effort('gpt-5-pro'), undefined);
  assert.equal(effort('gpt-4.1'), undefined);
  // OpenRouter has its own off switch
  assert.deepEqual(JSON.parse(openrouter.encodeRequest(off, 'openai/gpt-5').body).reasoning, {
    enabled: false,
  });
});

test('a JSON schema or a strict tool to a Claude model without structured outputs is asked in words, not refused upstream', () => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'string' } },
    required: ['a'],
    additionalProperties: false,
  };
  const req = decodeOpenAIRequest({
    model: 'x',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 'r', schema, strict: true } },
    tools: [{ type: 'function', function: { name: 'f', parameters: schema, strict: true } }],
  });
  const body = (model: string) => JSON.parse(anthropic.encodeRequest(req, model).body);
  // Sonnet 4 and Opus 4.1 refuse output_config.format and strict with a 400 (upstream_invalid_request)
  for (const model of ['claude-sonnet-4-20250514', 'claude-opus-4-1', 'claude-3-7-sonnet-20250219']) {
    const old = body(model);
    assert.equal(old.output_config, undefined, model);
    assert.equal('strict' in old.tools[0], false, model);
    assert.equal(old.system[0].text, 'Be brief.');
    assert.match(old.system[1].text, /single valid JSON object/);
    assert.ok(old.system[1].text.includes(JSON.stringify(schema)), model);
  }
  // Claude 4.5 and later (and a compatible server's model) get them as asked
  for (const model of ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-6', 'my-local-model']) {
    const current = body(model);
    assert.deepEqual(current.output_config, { format: { type: 'json_schema', schema } }, model);
    assert.equal(current.tools[0].strict, true, model);
    assert.equal(current.system, 'Be brief.', model);
  }
});

test('OpenAI prompt_cache_breakpoint → Claude: one-hour cache_control on the last four parts, a tool output and a system part among them; the earlier ones named', () => {
  const bp = { prompt_cache_breakpoint: { mode: 'explicit' } };
  const text = (t: string, mark = true) => ({ type: 'text', text: t, ...(mark ? bp : {}) });
  const body = {
    model: 'x',
    messages: [
      { role: 'system', content: [text('rules')] },
      { role: 'user', content: [text('a'), text('b'), text('c', false)] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: [text('out')] },
      {
        role: 'user',
        content: [text('d'), { type: 'text', text: 'e', cache_control: { type: 'ephemeral' }, ...bp }],
      },
    ],
  };
  const sent = JSON.parse(anthropic.encodeRequest(decodeOpenAIRequest(body), 'claude-sonnet-4-5').body);
  const hour = { type: 'ephemeral', ttl: '1h' };
  assert.equal(sent.system, 'rules');
  const marks = sent.messages.map(
    (m: { content: Array<{ cache_control?: unknown; content?: Array<{ cache_control?: unknown }> }> }) =>
      m.content.map((b) => b.cache_control ?? b.content?.[0]?.cache_control),
  );
  // OpenRouter's own cache_control on a part wins over its breakpoint and takes one of the API's four marks
  // (five is a 400), so three breakpoints are kept; the tool output and the user turn after it are one Claude
  // message
  assert.deepEqual(marks, [[undefined, hour, undefined], [undefined], [hour, hour, { type: 'ephemeral' }]]);
  assert.deepEqual(droppedParams(body, 'openai', 'anthropic'), [
    'messages.0.content.0.prompt_cache_breakpoint',
    'messages.1.content.0.prompt_cache_breakpoint',
  ]);
});

test("OpenAI prompt_cache_breakpoint after a client's own five-minute cache_control → Claude: at most four marks in all, none of an hour after one of five minutes", () => {
  const bp = { prompt_cache_breakpoint: { mode: 'explicit' } };
  const own = (ttl?: string) => ({ cache_control: { type: 'ephemeral', ...(ttl ? { ttl } : {}) } });
  const body = (system: Record<string, unknown>, user: Array<Record<string, unknown>>) => ({
    model: 'x',
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'rules', ...system }] },
      { role: 'user', content: user.map((extra, i) => ({ type: 'text', text: `t${i}`, ...extra })) },
    ],
  });
  const sent = (b: Record<string, unknown>) => {
    const out = JSON.parse(anthropic.encodeRequest(decodeOpenAIRequest(b), 'claude-sonnet-4-5').body);
    const marks = [
      ...out.system.map((s: { cache_control?: unknown }) => s.cache_control),
      ...out.messages[0].content.map((c: { cache_control?: unknown }) => c.cache_control),
    ];
    // the Messages API's rules: at most four marks, and a longer lifetime never after a shorter one
    assert.ok(marks.filter(Boolean).length <= 4, JSON.stringify(marks));
    const ttls: string[] = marks.filter(Boolean).map((m: { ttl?: string }) => m.ttl ?? '5m');
    assert.ok(!ttls.includes('5m') || !ttls.slice(ttls.indexOf('5m')).includes('1h'), JSON.stringify(marks));
    return marks;
  };
  const hour = { type: 'ephemeral', ttl: '1h' };
  const five = { type: 'ephemeral' };
  // a five-minute system prompt, then breakpoints: they keep their place as five-minute marks
  const short = body(own(), [bp, bp]);
  assert.deepEqual(sent(short), [five, five, five]);
  assert.deepEqual(droppedParams(short, 'openai', 'anthropic'), []);
  // a one-hour one first leaves the hour as asked
  assert.deepEqual(sent(body(own('1h'), [bp, bp])), [{ ...own('1h').cache_control }, hour, hour]);
  // two of the client's own and three breakpoints: the last two breakpoints go, the first is named
  const many = body(own('1h'), [bp, own('1h'), bp, bp]);
  assert.deepEqual(sent(many), [hour, undefined, hour, hour, hour]);
  assert.deepEqual(droppedParams(many, 'openai', 'anthropic'), [
    'messages.1.content.0.prompt_cache_breakpoint',
  ]);
});

test('OpenAI request → Claude Opus 5.5, Sonnet 5.5 or Fable 5.1: no forced tool use, and no thinking turned off or budgeted where it is always on', () => {
  const encode = (model: string, extra: Record<string, unknown>) =>
    JSON.parse(
      anthropic.encodeRequest(
        decodeOpenAIRequest({
          model: 'x',
          messages: [{ role: 'user', content: 'weather?' }],
          tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
          ...extra,
        }),
        model,
      ).body,
    );
  const named = { type: 'function', function: { name: 'get_weather' } };
  // those models answer tool_choice any or tool with a 400 ("What's new in Claude Opus 5.5"; Sonnet 5.5 alike)
  for (const model of [
    'claude-opus-5-5',
    'claude-sonnet-5-5',
    'claude-fable-5-1',
    'claude-opus-5-5-20260922',
  ]) {
    assert.deepEqual(encode(model, { tool_choice: 'required' }).tool_choice, { type: 'auto' }, model);
    assert.deepEqual(
      encode(model, { tool_choice: named, parallel_tool_calls: false }).tool_choice,
      { type: 'auto', disable_parallel_tool_use: true },
      model,
    );
  }
  // earlier models are forced as asked
  assert.deepEqual(encode('claude-opus-5', { tool_choice: 'required' }).tool_choice, { type: 'any' });
  assert.deepEqual(encode('claude-sonnet-4-5', { tool_choice: named }).tool_choice, {
    type: 'tool',
    name: 'get_weather',
  });
  // Opus 5.5 and Fable 5.1 always think: a budget becomes adaptive thinking, turned off is left out
  const thinking = (model: string, t: Record<string, unknown>) =>
    JSON.parse(
      anthropic.encodeRequest(
        {
          ...decodeOpenAIRequest({
            model: 'x',
            messages: [{ role: 'user', content: 'hi' }],
            max_tokens: 9000,
          }),
          thinking: t as never,
        },
        model,
      ).body,
    ).thinking;
  for (const model of ['claude-opus-5-5', 'claude-fable-5-1']) {
    assert.deepEqual(thinking(model, { type: 'enabled', budget_tokens: 4096 }), { type: 'adaptive' }, model);
    assert.equal(thinking(model, { type: 'disabled' }), undefined, model);
  }
  // Sonnet 5.5 refuses both too: turned off is between_tools (its lowest setting), a budget adaptive thinking
  assert.deepEqual(thinking('claude-sonnet-5-5', { type: 'disabled' }), { type: 'between_tools' });
  assert.deepEqual(thinking('claude-sonnet-5-5', { type: 'enabled', budget_tokens: 4096 }), {
    type: 'adaptive',
  });
  assert.deepEqual(thinking('claude-sonnet-4-5', { type: 'disabled' }), { type: 'disabled' });
  assert.deepEqual(thinking('claude-opus-5', { type: 'disabled' }), { type: 'disabled' });
  // svc-dropped-params names what those models did not get as asked
  const chat = { model: 'x', messages: [], tool_choice: 'required', reasoning_effort: 'none' };
  assert.deepEqual(droppedParams(chat, 'openai', 'anthropic', 'claude-opus-5-5'), [
    'tool_choice',
    'reasoning_effort',
  ]);
  assert.deepEqual(droppedParams(chat, 'openai', 'anthropic', 'claude-sonnet-5-5'), ['tool_choice']);
  assert.deepEqual(droppedParams(chat, 'openai', 'anthropic', 'claude-opus-5'), []);
  // OpenRouter's thinking turned off goes without it where the model always thinks, and on Sonnet 5.5 at an
  // effort that refuses between_tools (xhigh, max): the client is told
  const off = (model: string, extra: Record<string, unknown>) => {
    const body = { model: 'x', messages: [{ role: 'user', content: 'hi' }], ...extra };
    const sent = JSON.parse(anthropic.encodeRequest(decodeOpenAIRequest(body), model).body);
    return [sent.thinking, droppedParams(body, 'openai', 'anthropic', model)];
  };
  const enabledFalse = { reasoning: { enabled: false } };
  for (const effort of ['xhigh', 'max']) {
    assert.deepEqual(off('claude-sonnet-5-5', { ...enabledFalse, reasoning_effort: effort }), [
      undefined,
      ['reasoning.enabled'],
    ]);
    assert.deepEqual(off('claude-sonnet-5-5', { reasoning: { enabled: false, effort } }), [
      undefined,
      ['reasoning.enabled'],
    ]);
  }
  assert.deepEqual(off('claude-sonnet-5-5', { ...enabledFalse, reasoning_effort: 'high' }), [
    { type: 'between_tools' },
    [],
  ]);
  assert.deepEqual(off('claude-sonnet-5-5', enabledFalse), [{ type: 'between_tools' }, []]);
  assert.deepEqual(off('claude-opus-5-5', enabledFalse), [undefined, ['reasoning.enabled']]);
  assert.deepEqual(off('claude-opus-5', { ...enabledFalse, reasoning_effort: 'max' }), [
    { type: 'disabled' },
    [],
  ]);
  // Haiku 5.5 takes thinking disabled only at low, medium and high (xhigh and max: a 400): left out and named there
  for (const effort of ['xhigh', 'max'])
    assert.deepEqual(off('claude-haiku-5-5', { ...enabledFalse, reasoning_effort: effort }), [
      undefined,
      ['reasoning.enabled'],
    ]);
  assert.deepEqual(off('claude-haiku-5-5', { ...enabledFalse, reasoning_effort: 'high' }), [
    { type: 'disabled' },
    [],
  ]);
  assert.deepEqual(off('claude-haiku-4-5', { ...enabledFalse, reasoning_effort: 'max' }), [
    { type: 'disabled' },
    [],
  ]);
  const responses = {
    model: 'x',
    input: 'hi',
    tool_choice: { type: 'allowed_tools', mode: 'required', tools: [] },
    reasoning: { effort: 'none' },
  };
  assert.deepEqual(droppedParams(responses, 'openai_responses', 'anthropic', 'claude-fable-5-1'), [
    'tool_choice',
    'reasoning.effort',
  ]);
  assert.deepEqual(
    droppedParams({ ...responses, tool_choice: 'auto' }, 'openai_responses', 'anthropic', 'claude-fable-5-1'),
    ['reasoning.effort'],
  );
});

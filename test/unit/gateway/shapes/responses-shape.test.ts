import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyAnthropicStreamError } from '#src/adapters/anthropic/errors.ts';
import { classifyOpenAIStreamError } from '#src/adapters/openai/errors.ts';
import { decodeResponsesUsage } from '#src/adapters/openai/responses.ts';
import { classifyHttpFailure, toSvcError } from '#src/adapters/upstream-error.ts';
import { emptyUsage } from '#src/canonical/response.ts';
import { type CanonicalStreamEvent, StreamBuilder } from '#src/canonical/stream.ts';
import { decodeResponsesRequest } from '#src/gateway/shapes/responses/decode.ts';
import { encodeOutputItem } from '#src/gateway/shapes/responses/encode.ts';
import { callNameFields, droppedHostedTools } from '#src/gateway/shapes/responses/namespaces.ts';
import { findOpenAIOnlyPart } from '#src/gateway/shapes/responses/openai-only.ts';
import { responsesShape } from '#src/gateway/shapes/shapes.ts';
import { SvcError } from '#src/lib/errors.ts';
import { collect, items, parseSseText } from '../../../helpers/sse-fixtures.ts';
import { failAfter, runShapeContract, sampleEvents } from './shape-contract.ts';

const valid = { model: 'gpt-x', input: [{ role: 'user', content: 'hi' }] };

runShapeContract({
  shape: responsesShape,
  validBody: valid,
  invalid: [
    [{ ...valid, model: '' }, 'model'],
    [{ input: 'hi' }, 'model'],
    [{ ...valid, input: 5 }, 'input'],
    [{ ...valid, max_output_tokens: 1.5 }, 'max_output_tokens'],
    [{ ...valid, stream: 'yes' }, 'stream'],
    [{ ...valid, input: [{ role: 'robot', content: 'x' }] }, 'input.0.role'],
    [{ ...valid, input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input.0.call_id'],
  ],
  isTerminal: (f) => f.event === 'response.completed' || f.event === 'response.incomplete',
  isError: (f) => f.event === 'error',
  isFailedEnd: (f) => f.event === 'response.failed',
  errorType: (b) => (b.error as { type: string }).type,
  errorTypes: {
    invalid_request: 'invalid_request_error',
    invalid_token: 'authentication_error',
    model_not_allowed: 'permission_error',
    quota_exceeded: 'insufficient_quota',
    upstream_rate_limited: 'rate_limit_error',
    upstream_error: 'server_error',
    upstream_overloaded: 'server_error',
    upstream_timeout: 'server_error',
  },
});

const frames = async (events: AsyncIterable<CanonicalStreamEvent>) =>
  parseSseText((await collect(responsesShape.encodeStream(events, { model: 'm' }))).join('')).map((f) => ({
    event: f.event,
    data: JSON.parse(f.data),
  }));

test("responses: a stream failing on the provider account's spent credit reads insufficient_quota (Codex stops), a refused key server_error", async () => {
  const events = sampleEvents();
  const head = events.slice(0, events.findIndex((e) => e.type === 'text.delta') + 1);
  const failedCode = async (status: number, type: string) => {
    const err = toSvcError(classifyHttpFailure(status, () => undefined, 'refused', type));
    const out = await frames(failAfter(head, err));
    return [out.at(-2)!.data.code, out.at(-1)!.data.response.error.code];
  };
  assert.deepEqual(await failedCode(402, 'billing_error'), ['upstream_auth_failed', 'insufficient_quota']);
  assert.deepEqual(await failedCode(429, 'insufficient_quota'), [
    'upstream_auth_failed',
    'insufficient_quota',
  ]);
  assert.deepEqual(await failedCode(401, 'authentication_error'), ['upstream_auth_failed', 'server_error']);
  // as the streams read them: Anthropic's error event, OpenAI's in-stream error, OpenRouter's numeric code
  const streamFailedCode = async (err: Error) =>
    (await frames(failAfter(head, err))).at(-1)!.data.response.error.code;
  const inStream = [
    [
      classifyAnthropicStreamError('{"type":"error","error":{"type":"billing_error","message":"low"}}'),
      'insufficient_quota',
    ],
    [
      classifyOpenAIStreamError({ type: 'insufficient_quota', code: 'insufficient_quota' }),
      'insufficient_quota',
    ],
    [classifyOpenAIStreamError({ code: 402, message: 'Insufficient credits' }), 'insufficient_quota'],
    [classifyOpenAIStreamError({ code: 401, message: 'User not found.' }), 'server_error'],
    [
      classifyAnthropicStreamError('{"type":"error","error":{"type":"authentication_error"}}'),
      'server_error',
    ],
  ] as const;
  for (const [failure, code] of inStream)
    assert.equal(await streamFailedCode(toSvcError(failure)), code, JSON.stringify(failure));
});

test('responses: a stream that fails mid-way ends in error, then response.failed with the finished items (Codex reads it)', async () => {
  const events = sampleEvents();
  const textDelta = events.findIndex((e) => e.type === 'text.delta');
  const out = await frames(
    failAfter(events.slice(0, textDelta + 1), new SvcError('upstream_overloaded', { message: 'Overloaded' })),
  );
  const [error, failed] = out.slice(-2);
  assert.equal(error!.event, 'error');
  // top level (openai-node's ResponseErrorEvent, newer Codex) and nested (what the SDK throws on)
  assert.deepEqual([error!.data.code, error!.data.message], ['upstream_overloaded', 'Overloaded']);
  assert.equal(error!.data.error.code, 'upstream_overloaded');
  assert.equal(failed!.event, 'response.failed');
  const r = failed!.data.response;
  assert.deepEqual([r.status, r.error], ['failed', { code: 'server_is_overloaded', message: 'Overloaded' }]);
  // the reasoning item finished; the text item cut off is not in the output
  assert.deepEqual(
    r.output.map((i: any) => i.type),
    ['reasoning'],
  );
  assert.equal(r.created_at, out[0]!.data.response.created_at);
  assert.equal(r.id, out[0]!.data.response.id);
  const seq = out.map((f) => f.data.sequence_number);
  assert.deepEqual(
    seq,
    seq.map((_, i) => i),
  );
});

test('responses: every response object of one stream has the same created_at', async () => {
  async function* slow() {
    const events = sampleEvents();
    yield events[0]!;
    await new Promise((r) => setTimeout(r, 1100));
    yield* events.slice(1);
  }
  const out = await frames(slow());
  const stamps = out.filter((f) => f.data.response).map((f) => f.data.response.created_at);
  assert.equal(stamps.length, 3);
  assert.equal(new Set(stamps).size, 1);
});

test('responses: the item the token limit cut off is incomplete, streamed and in the final output', async () => {
  const b = new StreamBuilder();
  const events: CanonicalStreamEvent[] = [b.start('msg_2', 'claude-x')];
  const t = b.openText();
  events.push(b.text(t, 'Once upon a'));
  b.setStop('max_tokens');
  events.push(...b.finish());
  const out = await frames(items(events));
  const done = out.find((f) => f.event === 'response.output_item.done')!;
  assert.equal(done.data.item.status, 'incomplete');
  const end = out.at(-1)!;
  assert.equal(end.event, 'response.incomplete');
  assert.deepEqual(end.data.response.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(end.data.response.output[0].status, 'incomplete');
  // the same answer not streamed: the cut text item is incomplete too, the items before it completed
  const whole = responsesShape.encode(
    {
      id: 'msg_2',
      model: 'claude-x',
      content: [
        { type: 'thinking', thinking: 'plan', signature: 'sig' },
        { type: 'text', text: 'Once upon a' },
      ],
      stop_reason: 'max_tokens',
      stop_sequence: null,
      usage: emptyUsage(),
    },
    { model: 'm' },
  ) as { status: string; output: Array<{ type: string; status?: string }> };
  assert.equal(whole.status, 'incomplete');
  assert.deepEqual(
    whole.output.map((i) => [i.type, i.status]),
    [
      ['reasoning', undefined],
      ['message', 'incomplete'],
    ],
  );
});

test('responses: a call the token limit cut off is incomplete in its output_item.done and in the final output, with the text the model wrote', async () => {
  const b = new StreamBuilder();
  const events: CanonicalStreamEvent[] = [b.start('msg_3', 'claude-x')];
  const done = b.openToolUse('toolu_1', 'get_weather');
  events.push(done, b.toolInput(done.content_block_index, '{"city": "Oslo"}'));
  events.push(b.close(done.content_block_index)!);
  const cut = b.openToolUse('toolu_2', 'get_weather');
  events.push(cut, b.toolInput(cut.content_block_index, '{"city": "Ber'));
  // Anthropic ends the block (content_block_stop), then says max_tokens (message_delta)
  events.push(b.close(cut.content_block_index)!);
  b.setStop('max_tokens');
  events.push(...b.finish());
  const out = await frames(items(events));
  const itemsDone = out.filter((f) => f.event === 'response.output_item.done').map((f) => f.data.item);
  assert.deepEqual(
    itemsDone.map((i) => [i.status, i.arguments]),
    [
      ['completed', '{"city": "Oslo"}'],
      ['incomplete', '{"city": "Ber'],
    ],
  );
  const end = out.at(-1)!;
  assert.equal(end.event, 'response.incomplete');
  assert.deepEqual(
    end.data.response.output.map((i: any) => [i.status, i.arguments]),
    [
      ['completed', '{"city":"Oslo"}'],
      ['incomplete', '{"city": "Ber'],
    ],
  );
  // a stream that fails after a call ended still counts that call among the finished items
  const endOfFirst = events.findIndex((e) => e.type === 'tool.use_end');
  const cutShort = await frames(
    failAfter(
      events.slice(0, endOfFirst + 1),
      new SvcError('upstream_overloaded', { message: 'Overloaded' }),
    ),
  );
  assert.deepEqual(
    cutShort.slice(-3).map((f) => f.event),
    ['response.output_item.done', 'error', 'response.failed'],
  );
  assert.deepEqual(
    cutShort.at(-1)!.data.response.output.map((i: any) => [i.call_id, i.status]),
    [['toolu_1', 'completed']],
  );
  const seq = out.map((f) => f.data.sequence_number);
  assert.deepEqual(
    seq,
    seq.map((_, i) => i),
  );
});

test('responses: an empty text block is no message item, streamed or in the final output, so output indices agree', async () => {
  const b = new StreamBuilder();
  const events: CanonicalStreamEvent[] = [b.start('msg_4', 'claude-x')];
  b.openText(); // Anthropic: content_block_start text "", content_block_stop, no delta
  const call = b.openToolUse('toolu_1', 'get_weather');
  events.push(call, b.toolInput(call.content_block_index, '{}'), b.close(call.content_block_index)!);
  events.push(...b.finish());
  const out = await frames(items(events));
  const done = out.filter((f) => f.event === 'response.output_item.done');
  assert.deepEqual(
    done.map((f) => [f.data.output_index, f.data.item.type]),
    [[0, 'function_call']],
  );
  const end = out.at(-1)!;
  assert.equal(end.event, 'response.completed');
  assert.deepEqual(
    end.data.response.output.map((i: any) => i.id),
    done.map((f) => f.data.item.id),
  );
  const final = events.at(-1) as Extract<CanonicalStreamEvent, { type: 'message.complete' }>;
  const whole = responsesShape.encode(
    {
      id: 'msg_4',
      model: 'claude-x',
      content: final.final_content,
      stop_reason: final.stop_reason,
      stop_sequence: null,
      usage: emptyUsage(),
    },
    { model: 'm' },
  ) as { output: Array<{ type: string }> };
  assert.deepEqual(
    whole.output.map((i) => i.type),
    ['function_call'],
  );
});

test('responses: stored state, stored prompts, hosted tool_choice and file parts are refused by name for other models', () => {
  const base = { model: 'claude-x', input: [{ role: 'user', content: 'hi' }] };
  const param = (body: Record<string, unknown>) => findOpenAIOnlyPart(body)?.param ?? null;
  assert.equal(param(base), null);
  assert.equal(param({ ...base, conversation: 'conv_abc123' }), 'conversation');
  assert.equal(param({ ...base, conversation: { id: 'conv_abc123' } }), 'conversation');
  assert.equal(param({ ...base, prompt: { id: 'pmpt_1', variables: {} } }), 'prompt');
  assert.equal(param({ ...base, tool_choice: { type: 'web_search_preview' } }), 'tool_choice');
  assert.equal(param({ ...base, tool_choice: { type: 'function', name: 'f' } }), null);
  assert.equal(param({ ...base, tool_choice: 'required' }), null);
  const file = { type: 'input_file', file_id: 'file-1' };
  const text = { type: 'input_text', text: 'see' };
  assert.equal(param({ ...base, input: [{ role: 'user', content: [text, file] }] }), 'input.0.content.1');
  const byId = { type: 'input_image', file_id: 'file-2', detail: 'auto' };
  assert.equal(param({ ...base, input: [{ role: 'user', content: [byId] }] }), 'input.0.content.0');
  const url = { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' };
  assert.equal(param({ ...base, input: [{ role: 'user', content: [text, url] }] }), null);
  // a Chat Completions image part in a Responses message (LangChain's useResponsesApi sends its source_type
  // image blocks so): the advice names the Responses form, not the part's own type
  const chatPart = { type: 'image_url', image_url: { url: 'https://example.com/a.png' } };
  const chatImage = findOpenAIOnlyPart({ ...base, input: [{ role: 'user', content: [text, chatPart] }] });
  assert.equal(chatImage?.param, 'input.0.content.1');
  assert.match(chatImage!.instead, /an input_image whose image_url is an https or data URL/);
  const output = { type: 'function_call_output', call_id: 'c', output: [text, file] };
  assert.equal(param({ ...base, input: [output] }), 'input.0.output.1');
  // what another model cannot give is refused, never answered without it
  assert.equal(param({ ...base, background: true }), 'background');
  assert.equal(param({ ...base, background: false }), null);
  assert.equal(param({ ...base, top_logprobs: 3 }), 'top_logprobs');
  assert.equal(param({ ...base, top_logprobs: 0 }), null);
  assert.equal(param({ ...base, include: ['reasoning.encrypted_content'] }), null);
  assert.equal(
    param({ ...base, include: ['reasoning.encrypted_content', 'message.output_text.logprobs'] }),
    'include.1',
  );
});

test('responses: an allowed_tools choice narrows the function tools, and one naming no declared function is a 400 naming it', () => {
  const fn = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });
  const ns = { type: 'namespace', name: 'crm', tools: [fn('lookup')] };
  const choice = (tools: unknown[]) => ({ type: 'allowed_tools', mode: 'required', tools });
  const body = (tools: unknown[]) => ({
    model: 'claude-x',
    input: 'hi',
    tools: [fn('a'), fn('b'), ns],
    tool_choice: choice(tools),
  });
  const names = (tools: unknown[]) =>
    decodeResponsesRequest(body(tools)).tools?.map((t) => (t.type === 'function' ? t.name : t.type));
  assert.deepEqual(names([{ type: 'function', name: 'b' }]), ['b']);
  assert.deepEqual(names([{ type: 'function', name: 'lookup', namespace: 'crm' }]), ['crm__lookup']);
  assert.deepEqual(names([{ type: 'function', name: 'lookup' }]), ['crm__lookup']);
  // a required call over no tool at all was sent as no tools: the model answered without the call
  assert.throws(
    () => decodeResponsesRequest(body([{ type: 'function', name: 'nope' }])),
    (e: SvcError) => e.code === 'invalid_request' && e.details?.param === 'tool_choice.tools.0',
  );
});

test('responses: a namespace of functions is flattened and hosted web search left out for other models; other hosted tools are refused', () => {
  const fn = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });
  const ns = {
    type: 'namespace',
    name: 'crm',
    description: 'CRM tools',
    tools: [fn('lookup'), fn('update')],
  };
  const web = { type: 'web_search', external_web_access: false };
  const body = { model: 'claude-x', input: 'hi', tools: [fn('plain'), ns, web] };
  assert.equal(findOpenAIOnlyPart(body), null);
  const req = decodeResponsesRequest(body);
  assert.deepEqual(
    req.tools?.map((t) => (t.type === 'function' ? t.name : t.type)),
    ['plain', 'crm__lookup', 'crm__update'],
  );
  const custom = { type: 'custom', name: 'patch' };
  const mixed = { ...body, tools: [{ ...ns, tools: [fn('lookup'), custom] }] };
  assert.equal(findOpenAIOnlyPart(mixed)?.param, 'tools.0.tools.1');
  assert.equal(findOpenAIOnlyPart({ ...body, tools: [{ type: 'file_search' }] })?.param, 'tools.0');
  // a namespaced call in the history goes upstream under the flattened name
  const history = decodeResponsesRequest({
    ...body,
    input: [
      { type: 'function_call', call_id: 'c1', namespace: 'crm', name: 'lookup', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'found' },
    ],
  });
  assert.deepEqual(history.messages[0]?.content[0], {
    type: 'tool_use',
    id: 'c1',
    name: 'crm__lookup',
    input: {},
  });
  // and the answer's call of a flattened name goes back as the API writes it: name plus namespace
  assert.deepEqual(callNameFields('crm__lookup', body), { name: 'lookup', namespace: 'crm' });
  assert.deepEqual(callNameFields('plain', body), { name: 'plain' });
  assert.deepEqual(callNameFields('other__name', body), { name: 'other__name' });
  assert.deepEqual(droppedHostedTools(body), ['web_search']);
});

test('responses: a redacted thinking block survives the round trip as redacted_thinking, not as a forged thinking block', () => {
  const request = { include: ['reasoning.encrypted_content'] };
  const item = encodeOutputItem({ type: 'redacted_thinking', data: 'EmwKAhgB' }, 'b1', 0, request)!;
  assert.equal(item.type, 'reasoning');
  const replay = responsesShape.decode({ model: 'claude-x', input: [{ role: 'user', content: 'q' }, item] });
  assert.deepEqual(replay.messages[1]!.content, [{ type: 'redacted_thinking', data: 'EmwKAhgB' }]);
  // a thinking block's signature replays as thinking
  const thought = encodeOutputItem({ type: 'thinking', thinking: 'hm', signature: 'sig' }, 'b1', 1, request)!;
  const again = responsesShape.decode({
    model: 'claude-x',
    input: [{ role: 'user', content: 'q' }, thought],
  });
  assert.deepEqual(again.messages[1]!.content, [{ type: 'thinking', thinking: 'hm', signature: 'sig' }]);
});

test('responses: usage states cache writes as input_tokens_details.cache_write_tokens, and an upstream response is read back the same', () => {
  const usage = {
    input_tokens: 40,
    output_tokens: 12,
    cached_input_tokens: 1200,
    cache_creation_input_tokens: 100,
  };
  const body = responsesShape.encode(
    { id: 'msg_5', model: 'claude-x', content: [], stop_reason: 'end_turn', stop_sequence: null, usage },
    { model: 'm' },
  ) as { usage: Record<string, unknown> };
  // openai-node 6.49 ResponseUsage: both details are required; input_tokens counts every input class
  assert.deepEqual(body.usage, {
    input_tokens: 1340,
    input_tokens_details: { cached_tokens: 1200, cache_write_tokens: 100 },
    output_tokens: 12,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 1352,
  });
  assert.deepEqual(decodeResponsesUsage(body.usage), { ...usage, reasoning_tokens: 0 });
  // an older model's usage without the field: all of the uncached rest is plain input
  assert.deepEqual(
    decodeResponsesUsage({
      input_tokens: 1240,
      input_tokens_details: { cached_tokens: 1200 },
      output_tokens: 5,
    }),
    { input_tokens: 40, output_tokens: 5, cached_input_tokens: 1200, cache_creation_input_tokens: 0 },
  );
});

test('calls, outputs and text messages decode as their item schemas read them, and a malformed one is their 400', () => {
  const decoded = (input: unknown[]) => {
    try {
      return decodeResponsesRequest({ model: 'm', input }).messages;
    } catch (err) {
      assert.ok(err instanceof SvcError);
      return err.message;
    }
  };
  assert.deepEqual(
    decoded([
      {
        type: 'message',
        role: 'assistant',
        id: 'msg_1',
        content: [{ type: 'output_text', text: 'ok', annotations: [] }],
      },
      {
        type: 'function_call',
        call_id: 'c1',
        name: 'read',
        namespace: 'functions',
        arguments: '{"a":1}',
        id: 'fc_1',
      },
      { type: 'function_call_output', call_id: 'c1', output: 'a' },
      { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', namespace: null, input: '*** Begin' },
      { type: 'custom_tool_call_output', call_id: 'c2', output: 'done' },
    ]),
    [
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'ok' },
          { type: 'tool_use', id: 'c1', name: 'functions__read', input: { a: 1 } },
        ],
        at: 'input.1',
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'a' }], at: 'input.2' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'c2', name: 'apply_patch', input: { input: '*** Begin' } }],
        at: 'input.3',
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c2', content: 'done' }], at: 'input.4' },
    ],
  );
  for (const [item, message] of [
    [
      { role: 'bot', content: 'x' },
      'input.0.role: must be "user" or "assistant" or "system" or "developer", not "bot"',
    ],
    [{ role: 'user', content: 5 }, 'input.0.content: must be a string or an array, not 5'],
    [
      { role: 'user', content: [{ type: 'input_text', text: 5 }] },
      'input.0.content.0.text: must be a string, not 5',
    ],
    [{ role: 'user', content: [{ type: 'output_text' }] }, 'input.0.content.0.text: is required'],
    [{ role: 'user', content: 'x', id: 5 }, 'input.0.id: must be a string, not 5'],
    [
      { type: 'function_call', call_id: 1, name: 'x', arguments: '{}' },
      'input.0.call_id: must be a string, not 1',
    ],
    [
      { type: 'function_call', call_id: 'c', name: 'x', arguments: {} },
      'input.0.arguments: must be a string, not a JSON object',
    ],
    [
      { type: 'function_call', call_id: 'c', name: 'x', arguments: '{}', id: 5 },
      'input.0.id: must be a string, not 5',
    ],
    [
      { type: 'function_call', call_id: 'c', name: 'x', arguments: '{}', namespace: 5 },
      'input.0.namespace: must be a string, not 5',
    ],
    [
      { type: 'custom_tool_call', call_id: 'c', name: 'x', input: 5 },
      'input.0.input: must be a string, not 5',
    ],
    [{ type: 'function_call_output', output: 'x' }, 'input.0.call_id: is required'],
    [
      { type: 'custom_tool_call_output', call_id: 'c', output: null },
      'input.0.output: must be a string or an array, not null',
    ],
  ] as const)
    assert.equal(decoded([item]), message);
});

test('reasoning items decode as their schema reads them, and a malformed one is its 400', () => {
  const decoded = (item: unknown) => {
    try {
      return decodeResponsesRequest({ model: 'm', input: [item] }).messages[0].content;
    } catch (err) {
      assert.ok(err instanceof SvcError);
      return err.message;
    }
  };
  assert.deepEqual(decoded({ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA123' }), [
    { type: 'thinking', thinking: '', signature: 'gAAAA123' },
  ]);
  assert.deepEqual(
    decoded({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'thought' }, { type: 'summary_text' }],
      content: [{ type: 'reasoning_text', text: 'deep' }],
      encrypted_content: null,
    }),
    [{ type: 'thinking', thinking: 'thought\n\n\n\ndeep', signature: null }],
  );
  for (const [item, message] of [
    [{ type: 'reasoning', summary: null }, 'input.0.summary: must be an array, not null'],
    [{ type: 'reasoning', summary: [{ text: 'x' }] }, 'input.0.summary.0.type: is required'],
    [
      { type: 'reasoning', summary: [{ type: 's', text: 5 }] },
      'input.0.summary.0.text: must be a string, not 5',
    ],
    [{ type: 'reasoning', content: [{ type: 5 }] }, 'input.0.content.0.type: must be a string, not 5'],
    [{ type: 'reasoning', encrypted_content: 5 }, 'input.0.encrypted_content: must be a string, not 5'],
    [{ type: 'reasoning', id: 5 }, 'input.0.id: must be a string, not 5'],
  ] as const)
    assert.equal(decoded(item), message);
});

test("a malformed part of a call's output of parts is its 400 at input.N.output.M", () => {
  const decoded = (part: unknown) => {
    try {
      return decodeResponsesRequest({
        model: 'm',
        input: [{ type: 'function_call_output', call_id: 'c', output: [part] }],
      });
    } catch (err) {
      assert.ok(err instanceof SvcError);
      return err.message;
    }
  };
  // before: input.0.output.content.0 (the path of a message's parts), a field the item has not
  assert.equal(decoded({ type: 'input_text', text: 5 }), 'input.0.output.0.text: must be a string, not 5');
  assert.equal(
    decoded({ type: 'input_image', image_url: 'data:image/png;base64,AAAA' }),
    'input.0.output.0.image_url: image data is not JPEG, PNG, GIF or WebP',
  );
});

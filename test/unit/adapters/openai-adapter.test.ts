import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOpenAIAdapter, createOpenRouterAdapter } from '#src/adapters/registry.ts';
import { decodeOpenAIRequest } from '#src/gateway/shapes/openai/decode.ts';
import { decodeSse } from '#src/lib/sse-decode.ts';
import { chunks, collect, OPENAI_TOOL_STREAM, utf8 } from '../../helpers/sse-fixtures.ts';
import { type AdapterCase, runAdapterContract } from './adapter-contract.ts';

const response = {
  id: 'chatcmpl-9',
  object: 'chat.completion',
  created: 1763790000,
  model: 'gpt-x',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Checking',
        refusal: null,
        tool_calls: [
          {
            id: 'call_a1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    },
  ],
  usage: {
    prompt_tokens: 2100,
    completion_tokens: 18,
    total_tokens: 2118,
    prompt_tokens_details: { cached_tokens: 2048, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  },
};

const common: Omit<AdapterCase, 'name' | 'adapter' | 'url' | 'errorBody' | 'streamError'> = {
  apiKey: 'sk-1',
  authHeader: ['authorization', 'Bearer sk-1'],
  stream: OPENAI_TOOL_STREAM,
  streamUsage: {
    input_tokens: 52,
    output_tokens: 40,
    cached_input_tokens: 2048,
    cache_creation_input_tokens: 0,
    reasoning_tokens: 5,
  },
  response,
  responseUsage: {
    input_tokens: 52,
    output_tokens: 18,
    cached_input_tokens: 2048,
    cache_creation_input_tokens: 0,
    reasoning_tokens: 0,
  },
  passthroughBody:
    '{"model":"gpt","messages":[{"role":"user","content":"hi"}],"seed":3,"provider":{"order":["a"]}}',
};

runAdapterContract({
  ...common,
  name: 'openai',
  adapter: createOpenAIAdapter({ baseUrl: 'https://api.openai.test/v1', apiKey: 'sk-1' }),
  url: 'https://api.openai.test/v1/chat/completions',
  streamError: {
    frame:
      'data: {"error":{"message":"Rate limit","type":"requests","param":null,"code":"rate_limit_exceeded"}}\n\n',
    error_class: 'rate_limit',
  },
  errorBody: (message) =>
    JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } }),
});

runAdapterContract({
  ...common,
  name: 'openrouter',
  adapter: createOpenRouterAdapter(
    { baseUrl: 'https://openrouter.test/api/v1', apiKey: 'sk-1' },
    { title: 'svc' },
  ),
  url: 'https://openrouter.test/api/v1/chat/completions',
  streamError: {
    frame:
      'data: {"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"m","provider":"p","error":{"code":502,"message":"Provider down"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}\n\n',
    error_class: 'server_error',
  },
  errorBody: (message) => JSON.stringify({ error: { code: 500, message } }),
});

test('openai: a 429 insufficient_quota is a spend limit (authentication, never retried), a 429 rate_limit_exceeded a rate limit', () => {
  const adapter = createOpenAIAdapter({ baseUrl: 'https://api.openai.test/v1', apiKey: 'sk-1' });
  const header = () => undefined;
  const quota = adapter.classifyResponse(
    429,
    header,
    JSON.stringify({
      error: {
        message: 'You exceeded your current quota',
        type: 'insufficient_quota',
        param: null,
        code: 'insufficient_quota',
      },
    }),
  );
  assert.deepEqual(
    [quota.error_class, quota.code, quota.retryable, quota.status, quota.upstream_type],
    ['authentication', 'upstream_auth_failed', false, 429, 'insufficient_quota'],
  );
  assert.match(quota.message, /out of credit or over its spend limit \(HTTP 429, insufficient_quota\)/);
  const limited = adapter.classifyResponse(
    429,
    header,
    JSON.stringify({
      error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    }),
  );
  assert.deepEqual([limited.error_class, limited.retryable], ['rate_limit', true]);
});

test("openrouter: a 403 for input flagged by moderation is the client's 400 with its reasons, not the gateway's key", () => {
  const adapter = createOpenRouterAdapter({ baseUrl: 'https://openrouter.test/api/v1', apiKey: 'sk-1' });
  const header = () => undefined;
  const flagged = adapter.classifyResponse(
    403,
    header,
    JSON.stringify({
      error: {
        code: 403,
        message: 'Input flagged by moderation',
        metadata: {
          reasons: ['violence'],
          flagged_input: 'kill the…',
          provider_name: 'OpenAI',
          model_slug: 'x',
        },
      },
    }),
  );
  assert.deepEqual(
    [flagged.error_class, flagged.code, flagged.retryable, flagged.status],
    ['invalid_request', 'upstream_invalid_request', false, 403],
  );
  assert.equal(flagged.message, 'Input flagged by moderation (violence)');
  // a 403 without moderation metadata stays a refusal of the gateway's key
  const refused = adapter.classifyResponse(
    403,
    header,
    JSON.stringify({ error: { code: 403, message: 'no' } }),
  );
  assert.equal(refused.error_class, 'authentication');
});

test('openai: a 429 without retry-after waits for the exhausted limit to reset, as x-ratelimit-reset-* says', () => {
  const adapter = createOpenAIAdapter({ baseUrl: 'https://api.openai.test/v1', apiKey: 'sk-1' });
  const body = JSON.stringify({
    error: {
      message: 'Rate limit reached for tokens. Please try again in 6m0s.',
      type: 'tokens',
      param: null,
      code: 'rate_limit_exceeded',
    },
  });
  const headersOf = (h: Record<string, string>) => (name: string) => h[name];
  const tokens = adapter.classifyResponse(
    429,
    headersOf({
      'x-ratelimit-remaining-requests': '499',
      'x-ratelimit-reset-requests': '120ms',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': '6m0s',
    }),
    body,
  );
  assert.equal(tokens.retry_after_ms, 360_000);
  const requests = adapter.classifyResponse(
    429,
    headersOf({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1.5s' }),
    body,
  );
  assert.equal(requests.retry_after_ms, 1500);
  // retry-after, when sent, wins; nothing to go on gives no hint (the retry policy's own then applies)
  const told = adapter.classifyResponse(
    429,
    headersOf({ 'retry-after': '2', 'x-ratelimit-reset-tokens': '6m0s' }),
    body,
  );
  assert.equal(told.retry_after_ms, 2000);
  assert.equal(
    adapter.classifyResponse(429, headersOf({ 'x-ratelimit-reset-tokens': 'soon' }), body).retry_after_ms,
    undefined,
  );
});

test("openrouter: an error inside a 200 body is classified as the provider's HTTP answer of its status", () => {
  const adapter = createOpenRouterAdapter({ baseUrl: 'https://openrouter.test/api/v1', apiKey: 'sk-1' });
  const none = () => undefined;
  const classify = (body: unknown, header: (name: string) => string | undefined = none) =>
    adapter.classifyResponseBody!(body, header);
  const limited = classify({ error: { code: 429, message: 'Rate limit exceeded' } })!;
  assert.deepEqual(
    limited.failure,
    adapter.classifyResponse(429, none, '{"error":{"code":429,"message":"Rate limit exceeded"}}'),
  );
  assert.deepEqual(
    [limited.failure.error_class, limited.failure.retryable, limited.failure.status],
    ['rate_limit', true, 429],
  );
  assert.equal(limited.usage, undefined, 'nothing generated, nothing billed');
  // the 200's own headers count as an error answer's would
  const told = classify({ error: { code: 429, message: 'slow' } }, (n) =>
    n === 'retry-after' ? '2' : undefined,
  )!;
  assert.equal(told.failure.retry_after_ms, 2000);
  assert.equal(classify({ error: { code: 402, message: 'Insufficient credits' } })!.failure.retryable, false);
  // a generation that failed once begun: its choice's error, and the usage the provider billed for it
  const midway = classify({
    id: 'gen-1',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hel' },
        finish_reason: 'error',
        error: { code: 502, message: 'Provider down' },
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 3 },
  })!;
  assert.deepEqual(
    [midway.failure.error_class, midway.failure.status, midway.failure.code],
    ['server_error', 502, 'upstream_error'],
  );
  assert.deepEqual([midway.usage?.input_tokens, midway.usage?.output_tokens], [12, 3]);
  // an answer is not an error, even one whose text or arguments say "error"
  const answer = {
    id: 'gen-2',
    choices: [
      { index: 0, message: { role: 'assistant', content: '{"error": "none"}' }, finish_reason: 'stop' },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 1 },
  };
  assert.equal(classify(answer), null);
  assert.equal(classify({ ...answer, error: null }), null);
});

test("openrouter: an error as a stream's first event is classified as the provider's HTTP answer of its status", () => {
  const adapter = createOpenRouterAdapter({ baseUrl: 'https://openrouter.test/api/v1', apiKey: 'sk-1' });
  const none = () => undefined;
  const opening = (chunk: unknown) =>
    adapter.classifyStreamStart({ event: undefined, id: undefined, data: JSON.stringify(chunk) }, none);
  const first = (chunk: unknown) => opening(chunk)?.failure ?? null;
  const chunk = (error: unknown) => ({
    id: 'gen-1',
    object: 'chat.completion.chunk',
    error,
    choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
  });
  // moderation: the client's input (400), not the gateway's key, as the HTTP 403 would be
  const flagged = {
    code: 403,
    message: 'flagged',
    metadata: { reasons: ['harassment'], flagged_input: 'x' },
  };
  const moderated = first(chunk(flagged))!;
  assert.deepEqual(moderated, adapter.classifyResponse(403, none, JSON.stringify({ error: flagged })));
  assert.deepEqual(
    [moderated.error_class, moderated.code, moderated.status],
    ['invalid_request', 'upstream_invalid_request', 403],
  );
  const limited = first(chunk({ code: 429, message: 'slow' }))!;
  assert.deepEqual([limited.error_class, limited.status, limited.retryable], ['rate_limit', 429, true]);
  // the error only on the finished choice counts alike; a started stream is none
  const onChoice = first({
    id: 'gen-2',
    choices: [{ index: 0, delta: {}, finish_reason: 'error', error: { code: 502, message: 'down' } }],
  })!;
  assert.deepEqual([onChoice.error_class, onChoice.status], ['server_error', 502]);
  assert.equal(first({ id: 'gen-3', choices: [{ index: 0, delta: { content: '"error"' } }] }), null);
  // the usage such a chunk states (the prompt a failed generation read) comes with its failure, to be billed
  const billed = opening({ ...chunk({ code: 502, message: 'down' }), usage: { prompt_tokens: 40 } })!;
  assert.deepEqual([billed.failure.status, billed.usage?.input_tokens], [502, 40]);
  assert.equal(opening(chunk({ code: 502, message: 'down' }))!.usage, undefined);
});

test('openai: a Responses stream opening with response.failed states the usage its response carries', () => {
  const adapter = createOpenAIAdapter({ baseUrl: 'https://api.openai.test/v1', apiKey: 'sk-1' });
  const failed = (response: unknown) =>
    adapter.classifyStreamStart(
      {
        event: 'response.failed',
        id: undefined,
        data: JSON.stringify({ type: 'response.failed', sequence_number: 2, response }),
      },
      () => undefined,
    )!;
  const error = { code: 'server_is_overloaded', message: 'Overloaded' };
  const usage = { input_tokens: 30, input_tokens_details: { cached_tokens: 10 }, output_tokens: 0 };
  const opened = failed({ id: 'resp_1', status: 'failed', error, usage });
  assert.equal(opened.failure.error_class, 'overloaded');
  assert.deepEqual(
    [opened.usage?.input_tokens, opened.usage?.cached_input_tokens, opened.usage?.output_tokens],
    [20, 10, 0],
  );
  assert.equal(failed({ id: 'resp_2', status: 'failed', error, usage: null }).usage, undefined);
});

test("openai: a Responses stream opening with error, then response.failed, is the error's failure with the usage after it", () => {
  const adapter = createOpenAIAdapter({ baseUrl: 'https://api.openai.test/v1', apiKey: 'sk-1' });
  const none = () => undefined;
  const error = {
    event: 'error',
    id: undefined,
    data: JSON.stringify({
      type: 'error',
      error: { type: 'too_many_requests', code: 'too_many_requests', message: 'Too Many Requests' },
      sequence_number: 2,
    }),
  };
  const failed = (usage: unknown) => ({
    event: 'response.failed',
    id: undefined,
    data: JSON.stringify({
      type: 'response.failed',
      sequence_number: 3,
      response: { id: 'resp_1', status: 'failed', error: { code: 'too_many_requests' }, usage },
    }),
  });
  // the API's usual order: the error is the look's first event, and the event after it is read too
  assert.equal(adapter.streamStartFollows?.(error), true);
  assert.equal(adapter.streamStartFollows?.(failed(null)), false);
  const usage = { input_tokens: 30, input_tokens_details: { cached_tokens: 10 }, output_tokens: 0 };
  const opened = adapter.classifyStreamStart(error, none, failed(usage))!;
  assert.equal(opened.failure.error_class, 'rate_limit');
  assert.deepEqual([opened.usage?.input_tokens, opened.usage?.cached_input_tokens], [20, 10]);
  // nothing after it (the stream ended, or stayed silent), or another event: the error alone, as before
  const alone = adapter.classifyStreamStart(error, none)!;
  assert.deepEqual(alone, adapter.classifyStreamStart(error, none, null));
  assert.equal(alone.failure.error_class, 'rate_limit');
  assert.equal(alone.usage, undefined);
  const other = { event: 'response.output_text.delta', id: undefined, data: '{"delta":"x"}' };
  assert.equal(adapter.classifyStreamStart(error, none, other)!.usage, undefined);
});

test("openai: a custom tool's call (type custom, free-text input) is a tool call, so the answer stops for tool use", () => {
  const adapter = createOpenAIAdapter({ baseUrl: 'https://api.openai.test/v1', apiKey: 'sk-1' });
  // openai-node ChatCompletionMessageCustomToolCall: {id, type: 'custom', custom: {name, input}}
  const patch = '*** Begin Patch\n*** End Patch';
  const res = adapter.decodeResponse({
    ...response,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [{ id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: patch } }],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ],
  });
  assert.equal(res.stop_reason, 'tool_use');
  assert.deepEqual(res.content, [
    { type: 'tool_use', id: 'call_c1', name: 'apply_patch', input: { _raw_arguments: patch } },
  ]);
});

test("openai: a streamed custom tool's call (its name and free-text input under custom) is a tool call", async () => {
  const adapter = createOpenAIAdapter({ baseUrl: 'https://api.openai.test/v1', apiKey: 'sk-1' });
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-c', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const call = (custom: object, head = false) => ({
    tool_calls: [{ index: 0, ...(head ? { id: 'call_c1', type: 'custom' } : {}), custom }],
  });
  const stream = [
    chunk({ role: 'assistant', content: null, refusal: null }),
    chunk(call({ name: 'apply_patch', input: '' }, true)),
    chunk(call({ input: '*** Begin Patch\n' })),
    chunk(call({ input: '*** End Patch' })),
    chunk({}, 'tool_calls'),
    `data: ${JSON.stringify({ id: 'chatcmpl-c', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [], usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } })}\n\n`,
    'data: [DONE]\n\n',
  ].join('');
  const events = await collect(adapter.decodeStream(decodeSse(chunks([utf8(stream)]))));
  const done = events.at(-1);
  assert.equal(done?.type, 'message.complete');
  assert.equal(done.type === 'message.complete' && done.stop_reason, 'tool_use');
  assert.deepEqual(done.type === 'message.complete' && done.final_content, [
    {
      type: 'tool_use',
      id: 'call_c1',
      name: 'apply_patch',
      input: { _raw_arguments: '*** Begin Patch\n*** End Patch' },
    },
  ]);
});

test('openai Responses: a call of a tool the client runs (shell_call, apply_patch_call) stops for tool use, streamed or not', async () => {
  const responses = createOpenAIAdapter({ baseUrl: 'https://api.openai.test/v1', apiKey: 'sk-1' }).responses!;
  // openai-node ResponseFunctionShellToolCall / ResponseApplyPatchToolCall
  const shell = {
    id: 'sh_1',
    type: 'shell_call',
    call_id: 'call_sh',
    action: { commands: ['ls'], timeout_ms: null, max_output_length: null },
    environment: null,
    status: 'completed',
  };
  const patch = {
    id: 'ap_1',
    type: 'apply_patch_call',
    call_id: 'call_ap',
    operation: { type: 'update_file', path: 'a.txt', diff: '@@\n-a\n+b' },
    status: 'completed',
  };
  const usage = {
    input_tokens: 9,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 4,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 13,
  };
  const done = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    model: 'gpt-x',
    output: [shell, patch],
    usage,
  };
  const expected = [
    { type: 'tool_use', id: 'call_sh', name: 'shell', input: shell.action },
    { type: 'tool_use', id: 'call_ap', name: 'apply_patch', input: patch.operation },
  ];
  const answer = responses.decodeResponse(done);
  assert.equal(answer.stop_reason, 'tool_use');
  assert.deepEqual(answer.content, expected);
  const frame = (type: string, data: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const started = { ...done, status: 'in_progress', output: [], usage: null };
  const stream = [
    frame('response.created', { sequence_number: 0, response: started }),
    frame('response.output_item.added', {
      sequence_number: 1,
      output_index: 0,
      item: { ...shell, status: 'in_progress' },
    }),
    frame('response.output_item.done', { sequence_number: 2, output_index: 0, item: shell }),
    frame('response.output_item.added', {
      sequence_number: 3,
      output_index: 1,
      item: { ...patch, status: 'in_progress' },
    }),
    frame('response.output_item.done', { sequence_number: 4, output_index: 1, item: patch }),
    frame('response.completed', { sequence_number: 5, response: done }),
  ].join('');
  const tapped = responses.tapStream(chunks([utf8(stream)]));
  await collect(tapped);
  const complete = tapped.completed();
  assert.equal(complete?.type === 'message.complete' && complete.stop_reason, 'tool_use');
  assert.deepEqual(complete?.type === 'message.complete' && complete.final_content, expected);
});

test('openai: reasoning an OpenAI-compatible server sends as reasoning_content (DeepSeek, vLLM, llama.cpp) is thinking, streamed or not', async () => {
  const adapter = createOpenAIAdapter({ baseUrl: 'http://127.0.0.1:8000/v1', apiKey: 'sk-1' });
  const base = { id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1, model: 'deepseek-reasoner' };
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const stream = [
    chunk({ role: 'assistant', content: null, reasoning_content: '' }),
    chunk({ content: null, reasoning_content: 'The user ' }),
    chunk({ content: null, reasoning_content: 'greets.' }),
    chunk({ content: 'Hi!', reasoning_content: null }),
    chunk({ content: '' }, 'stop'),
    `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: 8, total_tokens: 17 } })}\n\n`,
    'data: [DONE]\n\n',
  ].join('');
  const expected = [
    { type: 'thinking', thinking: 'The user greets.', signature: null },
    { type: 'text', text: 'Hi!' },
  ];
  const events = await collect(adapter.decodeStream(decodeSse(chunks([utf8(stream)]))));
  const done = events.at(-1);
  assert.deepEqual(done?.type === 'message.complete' && done.final_content, expected);
  const answer = adapter.decodeResponse({
    ...response,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hi!', reasoning_content: 'The user greets.' },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
  });
  assert.deepEqual(answer.content, expected);
});

test('openrouter: streamed reasoning_details of different index are separate thinking blocks, each with its signature', async () => {
  const adapter = createOpenRouterAdapter({ baseUrl: 'https://openrouter.test/api/v1', apiKey: 'sk-or' });
  const base = {
    id: 'gen-r',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'anthropic/claude-sonnet-4.5',
  };
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const detail = (index: number, fields: object) => ({
    content: '',
    reasoning_details: [{ type: 'reasoning.text', format: 'anthropic-claude-v1', index, ...fields }],
  });
  const stream = [
    chunk(detail(0, { text: 'First ' })),
    chunk(detail(0, { text: 'block.' })),
    chunk(detail(0, { signature: 'sig-0' })),
    chunk(detail(1, { text: 'Second block.' })),
    chunk(detail(1, { signature: 'sig-1' })),
    chunk({ content: 'Hi!' }),
    chunk({ content: '' }, 'stop'),
    `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: 8, total_tokens: 17 } })}\n\n`,
    'data: [DONE]\n\n',
  ].join('');
  // each block keeps the family OpenRouter says wrote it (`format`), so only that family gets it back
  const origin = 'anthropic-claude-v1';
  const expected = [
    { type: 'thinking', thinking: 'First block.', signature: 'sig-0', origin },
    { type: 'thinking', thinking: 'Second block.', signature: 'sig-1', origin },
    { type: 'text', text: 'Hi!' },
  ];
  const events = await collect(adapter.decodeStream(decodeSse(chunks([utf8(stream)]))));
  const done = events.at(-1);
  assert.deepEqual(done?.type === 'message.complete' && done.final_content, expected);
  // as the answer that is not a stream has them
  const answer = adapter.decodeResponse({
    ...response,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Hi!',
          reasoning_details: [
            { type: 'reasoning.text', text: 'First block.', signature: 'sig-0', format: origin, index: 0 },
            { type: 'reasoning.text', text: 'Second block.', signature: 'sig-1', format: origin, index: 1 },
          ],
        },
        finish_reason: 'stop',
      },
    ],
  });
  assert.deepEqual(answer.content, expected);
});

test('openrouter: reasoning_details read the same in an answer and in a client replay of it (an empty signature is none)', () => {
  const adapter = createOpenRouterAdapter({ baseUrl: 'https://openrouter.test/api/v1', apiKey: 'sk-or' });
  const details = [
    { type: 'reasoning.text', text: 'Unsealed.', signature: '', format: 'anthropic-claude-v1', index: 0 },
    { type: 'reasoning.text', text: 'Sealed.', signature: 'sig-1', format: 'anthropic-claude-v1', index: 1 },
    { type: 'reasoning.summary', summary: 'In short.', format: 'openai-responses-v1', index: 2 },
    { type: 'reasoning.encrypted', data: 'gAAAAAenc', format: 'openai-responses-v1', index: 3 },
    { type: 'reasoning.unheard_of', text: 'left out', index: 4 },
  ];
  const expected = [
    { type: 'thinking', thinking: 'Unsealed.', signature: null, origin: 'anthropic-claude-v1' },
    { type: 'thinking', thinking: 'Sealed.', signature: 'sig-1', origin: 'anthropic-claude-v1' },
    { type: 'thinking', thinking: 'In short.', signature: null, origin: 'openai-responses-v1' },
    { type: 'redacted_thinking', data: 'gAAAAAenc', origin: 'openai-responses-v1' },
  ];
  const message = { role: 'assistant', content: 'Hi!', reasoning_details: details };
  const answer = adapter.decodeResponse({
    ...response,
    model: 'anthropic/claude-sonnet-4.5',
    choices: [{ index: 0, message, finish_reason: 'stop' }],
  });
  assert.deepEqual(answer.content, [...expected, { type: 'text', text: 'Hi!' }]);
  const replay = decodeOpenAIRequest({
    model: 'anthropic/claude-sonnet-4.5',
    messages: [{ role: 'user', content: 'Hello' }, message, { role: 'user', content: 'And?' }],
  });
  assert.deepEqual(replay.messages[1]?.content, [...expected, { type: 'text', text: 'Hi!' }]);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reasoningLeftOutForGatewayName } from '#src/adapters/openai/fit-effort.ts';
import {
  createAnthropicAdapter,
  createOpenAIAdapter,
  createOpenRouterAdapter,
} from '#src/adapters/registry.ts';
import { fittedDroppedParams } from '#src/gateway/dropped-params.ts';
import { rewriteModel } from '#src/lib/json-splice.ts';

const passthrough = (bodyText: string, stream = false, headers: Record<string, string> = {}) => ({
  bodyText,
  body: JSON.parse(bodyText),
  upstreamModel: 'up',
  stream,
  headers,
});

test('the Anthropic fast path changes only the model bytes and forwards the client version and beta headers', () => {
  const text =
    '{"model":"alias", "max_tokens":5,"messages":[{"role":"user","content":"hi \\"model\\""}],"container":null}';
  const call = createAnthropicAdapter({ baseUrl: 'https://a.test', apiKey: 'k' }).encodePassthrough(
    passthrough(text, true, { 'anthropic-version': '2026-10-21', 'anthropic-beta': 'fast-mode-2026-02-01' }),
  );
  assert.equal(call.body, text.replace('"alias"', '"up"'));
  assert.equal(call.headers['anthropic-version'], '2026-10-21');
  assert.equal(call.headers['anthropic-beta'], 'fast-mode-2026-02-01');
  assert.equal(call.headers['x-api-key'], 'k');
});

test('the OpenAI fast path forces include_usage while keeping other stream_options', () => {
  const text =
    '{"model":"a","stream":true,"stream_options":{"include_usage":false,"include_obfuscation":false},"messages":[]}';
  const sent = JSON.parse(
    createOpenAIAdapter({ baseUrl: 'https://o.test/v1', apiKey: 'k' }).encodePassthrough(
      passthrough(text, true),
    ).body,
  );
  assert.deepEqual(sent.stream_options, { include_usage: true, include_obfuscation: false });
  assert.equal(sent.model, 'up');
});

test('the OpenRouter fast path adds the configured provider routing and attribution headers', () => {
  const adapter = createOpenRouterAdapter(
    { baseUrl: 'https://r.test/api/v1', apiKey: 'k' },
    { provider: { sort: 'throughput' }, referer: 'https://svc.test', title: 'svc' },
  );
  const call = adapter.encodePassthrough(passthrough('{"model":"a","messages":[]}'));
  assert.deepEqual(JSON.parse(call.body), { provider: { sort: 'throughput' }, model: 'up', messages: [] });
  assert.equal(call.headers['http-referer'], 'https://svc.test');
  assert.equal(call.headers['x-openrouter-title'], 'svc');
  const own = adapter.encodePassthrough(
    passthrough('{"model":"a","messages":[],"provider":{"order":["x"]}}'),
  );
  assert.deepEqual(JSON.parse(own.body).provider, { order: ['x'] });
});

test('rewriteModel echoes the requested model in an upstream response body without re-serialising it', () => {
  const res =
    '{"id":"msg_1","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"model"}]}';
  assert.equal(rewriteModel(res, 'fast'), res.replace('claude-sonnet-4-5-20250929', 'fast'));
  assert.deepEqual(JSON.parse(rewriteModel('{"a":1}', 'm')), { model: 'm', a: 1 });
});

test('the OpenRouter fast path drops the client’s own model routing (models, route): the gateway routed', () => {
  const adapter = createOpenRouterAdapter({ baseUrl: 'https://r.test/api/v1', apiKey: 'k' });
  const call = adapter.encodePassthrough(
    passthrough(
      '{"model":"a","models":["openai/gpt-5","anthropic/claude-opus-4.1"],"route":"fallback","messages":[],"x":1}',
    ),
  );
  assert.deepEqual(JSON.parse(call.body), { model: 'up', messages: [], x: 1 });
  const plain = '{"model":"a","messages":[],"provider":{"order":["x"]}}';
  assert.equal(adapter.encodePassthrough(passthrough(plain)).body, plain.replace('"a"', '"up"'));
});

test('the OpenAI fast path names max_tokens max_completion_tokens on a reasoning model, which refuses the older name', () => {
  const adapter = createOpenAIAdapter({ baseUrl: 'https://o.test/v1', apiKey: 'k' });
  const sent = (text: string, model: string) =>
    JSON.parse(adapter.encodePassthrough({ ...passthrough(text), upstreamModel: model }).body);
  const text = '{"model":"openai:gpt-5-mini","max_tokens":256,"messages":[]}';
  assert.deepEqual(sent(text, 'gpt-5-mini'), {
    model: 'gpt-5-mini',
    messages: [],
    max_completion_tokens: 256,
  });
  // a model that takes max_tokens, or a client that sent both, gets its bytes as sent
  assert.deepEqual(sent(text, 'gpt-4.1'), { model: 'gpt-4.1', max_tokens: 256, messages: [] });
  assert.deepEqual(sent(text, 'gpt-5-chat-latest').max_tokens, 256);
  // gpt-oss runs on other servers (OPENAI_BASE_URL at Ollama), some of which read only max_tokens
  assert.deepEqual(sent(text, 'gpt-oss-120b').max_tokens, 256);
  const both = '{"model":"a","max_tokens":5,"max_completion_tokens":9,"messages":[]}';
  assert.deepEqual(sent(both, 'gpt-5'), {
    model: 'gpt-5',
    max_tokens: 5,
    max_completion_tokens: 9,
    messages: [],
  });
});

test('the OpenAI fast paths fit an effort written for another model to one the routed model takes', () => {
  const openai = createOpenAIAdapter({ baseUrl: 'https://o.test/v1', apiKey: 'k' });
  const responses = (model: string, effort: string, upstreamModel: string) =>
    JSON.parse(
      openai.responses!.encodePassthrough({
        ...passthrough(JSON.stringify({ model, input: 'hi', reasoning: { effort, summary: 'auto' } })),
        upstreamModel,
      }).body,
    ).reasoning;
  // Codex's default gpt-6.1-sol takes none and xhigh; gpt-5, which serves it, takes minimal to high
  assert.deepEqual(responses('gpt-6.1-sol', 'xhigh', 'gpt-5'), { effort: 'high', summary: 'auto' });
  assert.deepEqual(responses('gpt-6.1-sol', 'none', 'gpt-5'), { effort: 'minimal', summary: 'auto' });
  assert.deepEqual(responses('gpt-6.1-sol', 'medium', 'gpt-5'), { effort: 'medium', summary: 'auto' });
  assert.deepEqual(responses('gpt-6.1-sol', 'none', 'o3'), { effort: 'low', summary: 'auto' });
  // GPT-6.2 Sol refuses none (its model page): a body for another model asking none gets low
  assert.deepEqual(responses('gpt-6.1-sol', 'none', 'gpt-6.2-sol'), { effort: 'low', summary: 'auto' });
  assert.deepEqual(responses('gpt-6.1-sol', 'max', 'gpt-6.2-sol'), { effort: 'max', summary: 'auto' });
  // the model named as OpenAI names it: as sent (OpenAI's own 400 says what it refuses)
  assert.deepEqual(responses('gpt-5', 'xhigh', 'gpt-5'), { effort: 'xhigh', summary: 'auto' });
  // its reasoning.context (all_turns) is taken from GPT-5.6 on: left out before, the effort fitted still
  const withContext = (upstreamModel: string) =>
    JSON.parse(
      openai.responses!.encodePassthrough({
        ...passthrough('{"model":"gpt-6.1-sol","reasoning":{"effort":"xhigh","context":"all_turns"}}'),
        upstreamModel,
      }).body,
    ).reasoning;
  assert.deepEqual(withContext('gpt-5'), { effort: 'high' });
  assert.deepEqual(withContext('gpt-5.5'), { effort: 'xhigh' });
  assert.deepEqual(withContext('gpt-5.6-sol'), { effort: 'xhigh', context: 'all_turns' });
  const chat = (model: string, upstreamModel: string) =>
    JSON.parse(
      openai.encodePassthrough({
        ...passthrough(JSON.stringify({ model, messages: [], reasoning_effort: 'none' })),
        upstreamModel,
      }).body,
    ).reasoning_effort;
  assert.equal(chat('fast', 'gpt-5-mini'), 'minimal');
  assert.equal(chat('gpt-5-mini', 'gpt-5-mini'), 'none');
  const openrouter = createOpenRouterAdapter({ baseUrl: 'https://r.test/api/v1', apiKey: 'k' });
  const routed = openrouter.encodePassthrough({
    ...passthrough('{"model":"a","messages":[],"reasoning_effort":"none"}'),
    upstreamModel: 'openai/gpt-5',
  });
  assert.equal(JSON.parse(routed.body).reasoning_effort, 'none');
});

test('the reasoning options of a body named otherwise are left out for an OpenAI model that does not reason', () => {
  const chat = { model: 'fast', messages: [], reasoning_effort: 'low' };
  const responses = { model: 'openai:gpt-4.1', input: 'hi', reasoning: { effort: 'high', summary: 'auto' } };
  assert.deepEqual(reasoningLeftOutForGatewayName('openai', 'fast', 'gpt-4o', chat), ['reasoning_effort']);
  assert.deepEqual(reasoningLeftOutForGatewayName('openai', 'openai:gpt-4.1', 'gpt-4.1', responses), [
    'reasoning',
  ]);
  assert.deepEqual(reasoningLeftOutForGatewayName('openai', 'x', 'gpt-5-chat-latest', chat), [
    'reasoning_effort',
  ]);
  // named as OpenAI names it (its own 400), a reasoning model, a local server's model, OpenRouter: as sent
  assert.deepEqual(reasoningLeftOutForGatewayName('openai', 'gpt-4.1', 'gpt-4.1', responses), []);
  assert.deepEqual(reasoningLeftOutForGatewayName('openai', 'fast', 'gpt-5-mini', chat), []);
  assert.deepEqual(reasoningLeftOutForGatewayName('openai', 'local', 'qwen3:8b', chat), []);
  assert.deepEqual(reasoningLeftOutForGatewayName('openrouter', 'a', 'openai/gpt-4.1', chat), []);
});

test('the Anthropic fast path fits a body written for another Claude model to the routed one', () => {
  const anthropic = createAnthropicAdapter({ baseUrl: 'https://a.test', apiKey: 'k' });
  const send = (body: Record<string, unknown>, upstreamModel: string, fit = true) =>
    JSON.parse(
      anthropic.encodePassthrough({
        ...passthrough(JSON.stringify({ model: 'claude-sonnet-5-5', messages: [], ...body })),
        upstreamModel,
        ...(fit ? { fitTo: { maxOutputTokens: 64_000 } } : {}),
      }).body,
    );
  // what svc-dropped-params names of such a body (POST /v1/messages and count_tokens alike)
  const named = (body: Record<string, unknown>, upstreamModel: string) =>
    fittedDroppedParams(body, upstreamModel, { maxOutputTokens: 64_000 });
  // Claude Code's request for claude-*-5-5: a 4.5 model takes a budget for the effort, and only Opus 4.5 the effort
  const claudeCode = {
    max_tokens: 128_000,
    thinking: { type: 'adaptive', display: 'omitted' },
    output_config: { effort: 'medium', format: { type: 'json_schema', schema: {} } },
  };
  const sonnet = send(claudeCode, 'claude-sonnet-4-5');
  assert.equal(sonnet.max_tokens, 64_000);
  assert.deepEqual(sonnet.thinking, { type: 'enabled', budget_tokens: 8192, display: 'omitted' });
  assert.deepEqual(sonnet.output_config, { format: { type: 'json_schema', schema: {} } });
  assert.deepEqual(send(claudeCode, 'claude-opus-4-5').output_config, claudeCode.output_config);
  // a model that takes it all gets it as sent, and so does a body the client wrote for the routed model
  assert.deepEqual(
    send({ ...claudeCode, max_tokens: 32_000 }, 'claude-opus-4-6').thinking,
    claudeCode.thinking,
  );
  assert.equal(send(claudeCode, 'claude-sonnet-4-5', false).max_tokens, 128_000);
  // a budget the client asked stays below the max_tokens it is fitted to; no room for 1,024: no thinking
  const budget = { max_tokens: 100_000, thinking: { type: 'enabled', budget_tokens: 90_000 } };
  assert.deepEqual(send(budget, 'claude-haiku-4-5').thinking, { type: 'enabled', budget_tokens: 63_999 });
  const small = send(
    { max_tokens: 1500, thinking: { type: 'adaptive' }, output_config: { effort: 'low' } },
    'claude-haiku-4-5',
  );
  assert.deepEqual([small.thinking, small.output_config], [undefined, undefined]);
  assert.deepEqual(
    named(
      { max_tokens: 1500, thinking: { type: 'adaptive' }, output_config: { effort: 'low' } },
      'claude-haiku-4-5',
    ),
    ['thinking', 'output_config.effort'],
  );
  // a Claude 3 or 3.5 model (a family rule's fallback in a models.yaml) takes no thinking at all: a 400 with it
  for (const old of ['claude-3-5-haiku-20241022', 'claude-3-haiku-20240307', 'claude-3-5-sonnet-latest']) {
    const fitted = send(claudeCode, old);
    assert.deepEqual(
      [fitted.thinking, fitted.output_config],
      [undefined, { format: claudeCode.output_config.format }],
    );
    assert.deepEqual(named(claudeCode, old), ['thinking', 'output_config.effort']);
  }
  assert.deepEqual(send(claudeCode, 'claude-3-7-sonnet-latest').thinking.type, 'enabled');
  // an effort no thinking budget carries is named in svc-dropped-params
  assert.deepEqual(named({ output_config: { effort: 'low' } }, 'claude-haiku-4-5'), ['output_config.effort']);
  assert.deepEqual(named(claudeCode, 'claude-haiku-4-5'), []);
  assert.deepEqual(named({ output_config: { effort: 'low' } }, 'claude-opus-4-5'), []);
  // a body for an older model (or an alias) routed to a Claude model after Opus 4.6, which takes temperature 1
  // only, top_p from 0.99 and no top_k: the rest is left out and named
  const sampled = { max_tokens: 1000, temperature: 0.2, top_p: 0.9, top_k: 40 };
  const newer = send(sampled, 'claude-opus-4-8');
  assert.deepEqual(
    [newer.temperature, newer.top_p, newer.top_k, newer.max_tokens],
    [undefined, undefined, undefined, 1000],
  );
  assert.deepEqual(named(sampled, 'claude-opus-4-8'), ['temperature', 'top_p', 'top_k']);
  const taken = { max_tokens: 1000, temperature: 1, top_p: 0.99 };
  assert.deepEqual(send(taken, 'claude-opus-4-8'), { model: 'claude-opus-4-8', messages: [], ...taken });
  assert.deepEqual(send(sampled, 'claude-sonnet-4-5').top_k, 40);
  assert.deepEqual(named(sampled, 'claude-sonnet-4-5'), []);
  // a mid-conversation system message joins the user turn beside it on a model before Opus 4.8
  const midSystem = {
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'more' },
      { role: 'assistant', content: 'ok' },
      { role: 'system', content: 'Now French.' },
    ],
  };
  assert.deepEqual(send(midSystem, 'claude-sonnet-4-5').messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'more' },
      ],
    },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'Now French.' },
  ]);
  assert.deepEqual(send(midSystem, 'claude-opus-4-8').messages, midSystem.messages);
  // a body for another model routed to Opus 5.5, Sonnet 5.5 or Fable 5.1, which refuse forced tool use (a 400):
  // the model chooses, its parallel-use setting kept; named tool_choice
  const forced = {
    max_tokens: 1000,
    tool_choice: { type: 'tool', name: 'x', disable_parallel_tool_use: true },
  };
  for (const model of ['claude-opus-5-5', 'claude-sonnet-5-5', 'claude-fable-5-1']) {
    assert.deepEqual(
      send(forced, model).tool_choice,
      { type: 'auto', disable_parallel_tool_use: true },
      model,
    );
    assert.deepEqual(named(forced, model), ['tool_choice'], model);
  }
  assert.deepEqual(send(forced, 'claude-opus-5').tool_choice, forced.tool_choice);
  assert.deepEqual(
    send(forced, 'claude-opus-5-5', false).tool_choice,
    forced.tool_choice,
    'asked of it: as sent',
  );
  // Opus 5.5 and Fable 5.1 always think: turned off is left out (and named), a budget becomes adaptive thinking
  for (const model of ['claude-opus-5-5', 'claude-fable-5-1']) {
    const off = { max_tokens: 1000, thinking: { type: 'disabled' } };
    assert.equal(send(off, model).thinking, undefined, model);
    assert.deepEqual(named(off, model), ['thinking'], model);
    const budget = {
      max_tokens: 9000,
      thinking: { type: 'enabled', budget_tokens: 4096, display: 'omitted' },
    };
    assert.deepEqual(send(budget, model).thinking, { type: 'adaptive', display: 'omitted' }, model);
    assert.deepEqual(named(budget, model), [], model);
  }
  // Sonnet 5.5 refuses thinking turned off and a budget ("What's new in Claude Sonnet 5.5"): turned off is
  // between_tools, its lowest setting (left out, and named, at effort xhigh or max, which refuse it); a budget
  // is adaptive thinking (a body for claude-3-7-sonnet or claude-sonnet-4-6 reaches it through the family rule)
  const sonnetOff = { max_tokens: 1000, thinking: { type: 'disabled' } };
  assert.deepEqual(send(sonnetOff, 'claude-sonnet-5-5').thinking, { type: 'between_tools' });
  assert.deepEqual(named(sonnetOff, 'claude-sonnet-5-5'), []);
  const offHigh = { ...sonnetOff, output_config: { effort: 'max' } };
  assert.equal(send(offHigh, 'claude-sonnet-5-5').thinking, undefined);
  assert.deepEqual(named(offHigh, 'claude-sonnet-5-5'), ['thinking']);
  const sonnetBudget = { max_tokens: 9000, thinking: { type: 'enabled', budget_tokens: 4096 } };
  for (const model of ['claude-sonnet-5-5', 'claude-sonnet-5'])
    assert.deepEqual(send(sonnetBudget, model).thinking, { type: 'adaptive' }, model);
  assert.deepEqual(named(sonnetBudget, 'claude-sonnet-5-5'), []);
  // Haiku 5.5 refuses a budget too (its migration guide): adaptive thinking; Haiku 4.5 takes it as sent
  assert.deepEqual(send(sonnetBudget, 'claude-haiku-5-5').thinking, { type: 'adaptive' });
  assert.deepEqual(send(sonnetBudget, 'claude-haiku-4-5').thinking, sonnetBudget.thinking);
  // and thinking turned off at effort xhigh or max ("Prompting Claude Haiku 5.5"): left out there, and named
  assert.equal(send(offHigh, 'claude-haiku-5-5').thinking, undefined);
  assert.deepEqual(named(offHigh, 'claude-haiku-5-5'), ['thinking']);
  assert.deepEqual(send(sonnetOff, 'claude-haiku-5-5').thinking, { type: 'disabled' });
  assert.deepEqual(named(sonnetOff, 'claude-haiku-5-5'), []);
  // earlier models take both as sent
  assert.deepEqual(send(sonnetOff, 'claude-sonnet-4-5').thinking, { type: 'disabled' });
  assert.deepEqual(send(sonnetOff, 'claude-sonnet-5').thinking, { type: 'disabled' });
  assert.deepEqual(send(sonnetBudget, 'claude-sonnet-4-5').thinking, sonnetBudget.thinking);
});

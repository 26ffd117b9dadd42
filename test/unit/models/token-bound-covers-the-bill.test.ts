/**
 * The budget reservation's token bound never reads less than what a provider bills: for CJK, emoji,
 * base64 images, large tool schemas, tool calls and tool results, in both inbound shapes, on the same wire
 * and translated, measured from the client body or from the canonical request alone. The bill is the fake
 * provider's (test/fake-provider/billing.ts), which tokenizes like the real APIs (1.5 tokens per CJK
 * character, images by the documented formulas).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeResponsesRequest } from '#src/gateway/shapes/responses/decode.ts';
import { boundCallTokens, IMAGE_TOKEN_MAXIMA } from '#src/models/token-bound.ts';
import { billedInputTokens } from '../../fake-provider/billing.ts';
import { BIG_PNG, CASES, decode, MODELS, registry, upstreamBody } from '../../helpers/budget-probes.ts';

for (const [name, c] of Object.entries(CASES)) {
  for (const shape of ['anthropic', 'openai'] as const) {
    test(`${name} (${shape} shape): the bound covers the bill on every model, from the body or the request`, () => {
      const body = c[shape];
      const bodyText = JSON.stringify(body);
      for (const modelId of MODELS) {
        const model = registry.get(modelId)!;
        const up = upstreamBody(shape, body, modelId);
        const billed = billedInputTokens(up.wire, up.body);
        const fromBody = boundCallTokens(decode(shape, body), model, bodyText);
        const fromRequest = boundCallTokens(decode(shape, body), model);
        assert.ok(
          fromBody.inputTokens >= billed,
          `${modelId}: body bound ${fromBody.inputTokens} < bill ${billed}`,
        );
        assert.ok(
          fromRequest.inputTokens >= billed,
          `${modelId}: bound ${fromRequest.inputTokens} < bill ${billed}`,
        );
        assert.equal(fromBody.outputTokens, 200);
      }
    });
  }
}

test('CJK text reserves at least its 3 UTF-8 bytes per character, not a characters / 4 guess', () => {
  const model = registry.get('anthropic:claude-haiku-4-5')!;
  const bound = boundCallTokens(decode('anthropic', CASES['CJK text'].anthropic), model);
  assert.ok(bound.inputTokens >= 3 * 4_000, String(bound.inputTokens));
});

test('an English prompt reserves about 4× what it is billed, not more than 5×', () => {
  const model = registry.get('anthropic:claude-haiku-4-5')!;
  const body = CASES['English text'].anthropic;
  const billed = billedInputTokens('anthropic', body);
  const bound = boundCallTokens(decode('anthropic', body), model, JSON.stringify(body)).inputTokens;
  assert.ok(bound >= 3 * billed && bound <= 5 * billed, `${bound} vs ${billed}`);
});

test('a base64 image reserves the per-image maximum, not its encoded size', () => {
  const model = registry.get('anthropic:claude-haiku-4-5')!;
  const body = CASES['base64 images'].anthropic;
  const bound = boundCallTokens(decode('anthropic', body), model, JSON.stringify(body)).inputTokens;
  assert.ok(BIG_PNG.length > 80_000);
  assert.ok(bound < 4 * 6_000, `3 images reserve ${bound} tokens`);
  assert.ok(bound >= 3 * 1_600);
});

test('per-image maxima: Claude up to 4,784, gpt-4o-mini 48,169, the rest of OpenAI 6,150', () => {
  const maxOf = (id: string) => IMAGE_TOKEN_MAXIMA.find((m) => m.pattern.test(id))?.tokens;
  assert.equal(maxOf('anthropic:claude-haiku-4-5'), 4_784);
  assert.equal(maxOf('openrouter:anthropic/claude-sonnet-4.5'), 4_784);
  assert.equal(maxOf('openai:gpt-4o-mini'), 48_169);
  assert.equal(maxOf('openai:gpt-5-mini'), 6_150);
  assert.equal(maxOf('openai:o3'), 6_150);
  assert.equal(
    maxOf('openrouter:google/gemini-2.5-pro'),
    48_169,
    'no published formula: the largest maximum',
  );
});

test('output is max_tokens, else the model maximum, times n', () => {
  const model = registry.get('openai:gpt-5-mini')!;
  const messages = [{ role: 'user', content: 'hi' }];
  assert.equal(boundCallTokens(decode('openai', { model: 'm', messages }), model).outputTokens, 128_000);
  assert.equal(
    boundCallTokens(decode('openai', { model: 'm', messages, max_completion_tokens: 50, n: 3 }), model)
      .outputTokens,
    150,
  );
});

test('a block the gateway cannot measure (a PDF document) reserves the whole context window', () => {
  const model = registry.get('anthropic:claude-haiku-4-5')!;
  const body = {
    model: 'm',
    max_tokens: 10,
    messages: [
      {
        role: 'user',
        content: [
          {
            type: 'document',
            source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' },
          },
          { type: 'text', text: 'summarise' },
        ],
      },
    ],
  };
  const bound = boundCallTokens(decode('anthropic', body), model, JSON.stringify(body));
  assert.ok(bound.inputTokens >= model.capabilities.max_context_tokens);
});

test("a PDF's explicit prompt-cache breakpoint on a Claude model reserves at the one-hour write rate, which bills its document", () => {
  const model = registry.get('anthropic:claude-haiku-4-5')!;
  const data = 'data:application/pdf;base64,JVBERi0xLjQK';
  const bp = { prompt_cache_breakpoint: { mode: 'explicit' } };
  const bodies = {
    openai: {
      model: 'm',
      messages: [
        { role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: data }, ...bp }] },
      ],
    },
    openai_responses: {
      model: 'm',
      input: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf', file_data: data, ...bp }] }],
    },
  };
  for (const [shape, body] of Object.entries(bodies)) {
    const req = shape === 'openai' ? decode('openai', body) : decodeResponsesRequest(body);
    assert.equal(
      boundCallTokens(req, model, JSON.stringify(body)).hourCache,
      true,
      `${shape}, from the body`,
    );
    assert.equal(boundCallTokens(req, model).hourCache, true, `${shape}, from the request`);
  }
});

test('a message thread continued reserves the whole context window (the provider bills what it holds); a new one its body', () => {
  const model = registry.get('anthropic:claude-haiku-4-5')!;
  const turn = (thread: Record<string, unknown>) => ({
    model: 'm',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'and then?' }],
    thread,
  });
  const continued = turn({ type: 'continue', previous_message_id: 'msg_01' });
  const created = turn({ type: 'create' });
  const bound = (body: Record<string, unknown>) =>
    boundCallTokens(decode('anthropic', body), model, JSON.stringify(body));
  assert.ok(bound(continued).inputTokens >= model.capabilities.max_context_tokens);
  assert.ok(bound(created).inputTokens < 1_000);
});

test('a Responses request on state OpenAI holds (previous_response_id, conversation, prompt) reserves the whole context window', () => {
  const model = registry.get('openai:gpt-5-mini')!;
  const bound = (fields: Record<string, unknown>) => {
    const body = { model: 'm', input: 'and then?', max_output_tokens: 16, ...fields };
    return boundCallTokens(decodeResponsesRequest(body), model, JSON.stringify(body)).inputTokens;
  };
  // OpenAI bills the conversation or prompt it stored as input, which the body does not show
  for (const fields of [
    { previous_response_id: 'resp_01' },
    { conversation: 'conv_01' },
    { conversation: { id: 'conv_01' } },
    { prompt: { id: 'pmpt_01', version: '2' } },
  ])
    assert.ok(bound(fields) >= model.capabilities.max_context_tokens, JSON.stringify(fields));
  assert.ok(bound({}) < 1_000, 'a request that is all in its body reserves its body');
  assert.ok(bound({ previous_response_id: null }) < 1_000);
  // another model refuses such a request with a 400 naming the field; the reservation must not refuse it first
  const claude = registry.get('anthropic:claude-haiku-4-5')!;
  const body = { model: 'm', input: 'and then?', max_output_tokens: 16, previous_response_id: 'resp_01' };
  assert.ok(boundCallTokens(decodeResponsesRequest(body), claude, JSON.stringify(body)).inputTokens < 1_000);
});

test("a field only another provider serves reserves nothing for it: that provider's model alone bills it", () => {
  const claude = registry.get('anthropic:claude-haiku-4-5')!;
  const gpt = registry.get('openai:gpt-5-mini')!;
  const inputOf = (shape: 'anthropic' | 'openai', fields: Record<string, unknown>, model = claude) => {
    const body = { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...fields };
    return boundCallTokens(decode(shape, body), model, JSON.stringify(body)).inputTokens;
  };
  const thread = { thread: { type: 'continue', previous_message_id: 'msg_01' } };
  const mcp = { mcp_servers: [{ type: 'url', url: 'https://mcp.example/sse', name: 'x' }] };
  const search = { web_search_options: {} };
  // the provider that runs them bills what they add
  assert.ok(inputOf('anthropic', thread) >= claude.capabilities.max_context_tokens);
  assert.ok(inputOf('anthropic', mcp) >= claude.capabilities.max_context_tokens);
  assert.ok(inputOf('openai', search, gpt) >= gpt.capabilities.max_context_tokens);
  // a Claude model runs its own web search for web_search_options, and bills the pages it reads as input
  assert.ok(inputOf('openai', search) >= claude.capabilities.max_context_tokens);
  // another provider's model refuses them with a 400 naming the field
  assert.ok(inputOf('anthropic', thread, gpt) < 1_000);
  assert.ok(inputOf('anthropic', mcp, gpt) < 1_000);
  // OpenRouter's plugins: an OpenAI model refuses the unknown field, a Claude model is sent without it
  const plugins = { plugins: [{ id: 'web' }] };
  const router = registry.get('openrouter:meta-llama/llama-3.3-70b-instruct')!;
  assert.ok(inputOf('openai', plugins, router) >= router.capabilities.max_context_tokens);
  assert.ok(inputOf('openai', plugins, gpt) < 1_000);
  assert.ok(inputOf('openai', plugins) < 1_000);
});

test("Codex's tools (its additional_tools item, custom and namespace tools) reserve their bytes, not the whole context", () => {
  const gpt = registry.get('openai:gpt-5')!;
  const fn = (name: string) => ({
    type: 'function',
    name,
    description: `${name} `.repeat(200),
    parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
  });
  const exec = { type: 'custom', name: 'exec', description: 'Run JavaScript. '.repeat(300) };
  const listed = { type: 'namespace', name: 'functions', description: '', tools: [exec, fn('wait')] };
  const message = (role: string, text: string) => ({
    type: 'message',
    role,
    content: [{ type: 'input_text', text }],
  });
  const codex = {
    model: 'gpt-6.1-sol',
    stream: true,
    store: false,
    include: ['reasoning.encrypted_content'],
    input: [
      { type: 'additional_tools', id: 'at_01', role: 'developer', tools: [listed] },
      message('developer', 'You are Codex. '.repeat(500)),
      message('user', 'say hi'),
    ],
  };
  const withTools = { ...codex, input: codex.input.slice(1), tools: [fn('exec_command'), exec, listed] };
  for (const body of [codex, withTools]) {
    const billed = billedInputTokens('openai_responses', body);
    const fromBody = boundCallTokens(decodeResponsesRequest(body), gpt, JSON.stringify(body)).inputTokens;
    const fromRequest = boundCallTokens(decodeResponsesRequest(body), gpt).inputTokens;
    for (const bound of [fromBody, fromRequest]) {
      assert.ok(bound >= billed, `bound ${bound} < bill ${billed}`);
      assert.ok(bound < 6 * billed, `bound ${bound} for a bill of ${billed}`);
    }
  }
  // a hosted tool among them is run by the provider, which bills what it adds: the whole context
  const hosted = { type: 'file_search', vector_store_ids: ['vs_01'] };
  const search = {
    ...codex,
    input: [{ ...codex.input[0], tools: [listed, hosted] }, ...codex.input.slice(1)],
  };
  const bound = boundCallTokens(decodeResponsesRequest(search), gpt, JSON.stringify(search)).inputTokens;
  assert.ok(bound >= gpt.capabilities.max_context_tokens);
});

test('a Codex turn after its first patch (custom_tool_call and its output replayed) reserves its bytes, not the whole context', () => {
  const gpt = registry.get('openai:gpt-5')!;
  const patch = '*** Begin Patch\n*** Update File: a.ts\n@@\n-old\n+new\n*** End Patch\n'.repeat(20);
  const body = {
    model: 'gpt-5',
    stream: true,
    tools: [{ type: 'custom', name: 'apply_patch', description: 'Edit files.' }],
    input: [
      {
        type: 'message',
        role: 'developer',
        content: [{ type: 'input_text', text: 'You are Codex. '.repeat(500) }],
      },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'fix a.ts' }] },
      { type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: patch },
      { type: 'custom_tool_call_output', call_id: 'call_1', output: 'Success. Updated: a.ts' },
      { type: 'shell_call', call_id: 'call_2', action: { commands: ['npm test'] } },
      { type: 'shell_call_output', call_id: 'call_2', output: [{ stdout: 'ok', stderr: '' }] },
    ],
  };
  const billed = billedInputTokens('openai_responses', body);
  const fromBody = boundCallTokens(decodeResponsesRequest(body), gpt, JSON.stringify(body)).inputTokens;
  const fromRequest = boundCallTokens(decodeResponsesRequest(body), gpt).inputTokens;
  for (const bound of [fromBody, fromRequest]) {
    assert.ok(bound >= billed, `bound ${bound} < bill ${billed}`);
    assert.ok(bound < 6 * billed, `bound ${bound} for a bill of ${billed}`);
  }
  // an output holding a screenshot is billed by the image's size, which its bytes do not bound
  const shot = {
    type: 'computer_call_output',
    call_id: 'call_3',
    output: { type: 'computer_screenshot', file_id: 'f' },
  };
  const withShot = { ...body, input: [...body.input, shot] };
  const bound = boundCallTokens(decodeResponsesRequest(withShot), gpt, JSON.stringify(withShot)).inputTokens;
  assert.ok(bound >= gpt.capabilities.max_context_tokens);
});

test('a hosted web search on the Responses API reserves the whole context on an OpenAI or Claude model, which run it', () => {
  const gpt = registry.get('openai:gpt-5')!;
  const claude = registry.get('anthropic:claude-haiku-4-5')!;
  const router = registry.get('openrouter:meta-llama/llama-3.3-70b-instruct')!;
  const body = { model: 'm', input: 'news?', max_output_tokens: 16, tools: [{ type: 'web_search' }] };
  const bound = (model: typeof gpt, b: Record<string, unknown> = body) =>
    boundCallTokens(decodeResponsesRequest(b), model, JSON.stringify(b)).inputTokens;
  assert.ok(bound(gpt) >= gpt.capabilities.max_context_tokens);
  // a Claude model runs its own search tool, and bills the pages it reads as input
  assert.ok(bound(claude) >= claude.capabilities.max_context_tokens);
  // another model is sent without it (svc-dropped-tools), so it bills the body alone; so is a Claude model
  // for Codex's search of OpenAI's cache only (external_web_access: false)
  assert.ok(bound(router) < 1_000);
  const cached = { ...body, tools: [{ type: 'web_search', external_web_access: false }] };
  assert.ok(bound(claude, cached) < 1_000);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CanonicalRequest } from '#src/canonical/request.ts';
import { decodeResponsesRequest } from '#src/gateway/shapes/responses/decode.ts';
import { describeRequest, IMAGE_TOKEN_ESTIMATE, lastUserText } from '#src/routing/request-facts.ts';

const base = (over: Partial<CanonicalRequest> = {}): CanonicalRequest => ({
  model: 'fast',
  system: [],
  messages: [],
  stream: false,
  include_usage: false,
  ...over,
});

test('images and tools are seen anywhere in the conversation, tool results included', () => {
  const img = { type: 'image' as const, source: { type: 'url' as const, url: 'https://x.test/a.png' } };
  const req = base({
    messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [img] }] }],
    tools: [{ type: 'function', name: 'get', input_schema: { type: 'object', properties: {} } }],
  });
  const facts = describeRequest(req, { workspacePath: '/srv/a' });
  assert.equal(facts.hasImages, true);
  assert.equal(facts.hasTools, true);
  assert.equal(facts.workspacePath, '/srv/a');
  assert.ok(facts.estimatedInputTokens >= IMAGE_TOKEN_ESTIMATE);
});

test('a Responses request whose only tool is hosted web search has tools (a model without them is missing_capability)', () => {
  for (const type of ['web_search', 'web_search_preview']) {
    const req = decodeResponsesRequest({ model: 'local', input: 'news?', tools: [{ type }] });
    const facts = describeRequest(req, { workspacePath: null });
    assert.equal(facts.hasTools, true, type);
    assert.deepEqual(facts.toolNames, [type]);
  }
});

test('tool names list the function and wire-specific tools in order, then the hosted ones; none without tools', () => {
  const req = decodeResponsesRequest({
    model: 'local',
    input: 'hi',
    tools: [
      { type: 'function', name: 'get', parameters: { type: 'object', properties: {} } },
      { type: 'web_search' },
      { type: 'custom', name: 'apply_patch' },
    ],
  });
  assert.deepEqual(describeRequest(req, { workspacePath: null }).toolNames, [
    'get',
    'apply_patch',
    'web_search',
  ]);
  const none = describeRequest(base(), { workspacePath: null });
  assert.deepEqual(none.toolNames, []);
  assert.equal(none.hasTools, false);
});

test('the input estimate is characters / 4 over text, tool calls and system, rounded up', () => {
  const req = base({
    system: [{ type: 'text', text: 'x'.repeat(400) }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'y'.repeat(401) }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'ab', input: {} }] },
    ],
    max_tokens: 50,
  });
  const facts = describeRequest(req, { workspacePath: null });
  assert.equal(facts.estimatedInputTokens, Math.ceil((400 + 401 + 2 + 2) / 4));
  assert.equal(facts.maxOutputTokens, 50);
  assert.equal(facts.hasImages, false);
  assert.equal(facts.hasTools, false);
  assert.equal(facts.requestedModel, 'fast');
});

test('other scripts count more tokens a character: 2 per character of other alphabets, 1 per CJK or emoji character', () => {
  const text = (t: string) =>
    describeRequest(base({ messages: [{ role: 'user', content: [{ type: 'text', text: t }] }] }), {
      workspacePath: null,
    }).estimatedInputTokens;
  assert.equal(text('a'.repeat(400)), 100);
  assert.equal(text('é'.repeat(400)), 200); // accented Latin
  assert.equal(text('Ж'.repeat(400)), 200); // Cyrillic
  assert.equal(text('日'.repeat(400)), 400); // CJK
  assert.equal(text('한'.repeat(400)), 400); // Hangul
  assert.equal(text('😀'.repeat(400)), 400); // outside the BMP: one character, not two
  assert.equal(text('ab日本'), Math.ceil((1 + 1 + 4 + 4) / 4));
  // tool calls and tool results are weighed alike
  const tool = describeRequest(
    base({
      messages: [
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'ab', input: { q: '東京' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: '東京'.repeat(100) }] },
      ],
    }),
    { workspacePath: null },
  ).estimatedInputTokens;
  assert.equal(tool, Math.ceil((2 + '{"q":""}'.length + 8 + 800) / 4));
});

test('text_matches reads the last user message that has text', () => {
  const req = base({
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'answer' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'second' },
          { type: 'text', text: 'line' },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r' }] },
    ],
  });
  assert.equal(lastUserText(req), 'second\nline');
  const facts = describeRequest(req, { workspacePath: null });
  assert.equal(typeof facts.text === 'function' ? facts.text() : facts.text, 'second\nline');
  assert.equal(lastUserText(base()), '');
});

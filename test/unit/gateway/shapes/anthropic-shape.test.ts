import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anthropicShape } from '#src/gateway/shapes/shapes.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { runShapeContract } from './shape-contract.ts';

const valid = { model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };

runShapeContract({
  shape: anthropicShape,
  validBody: valid,
  invalid: [
    [{ ...valid, model: 3 }, 'model'],
    [{ max_tokens: 1, messages: [] }, 'model'],
    [{ ...valid, max_tokens: '100' }, 'max_tokens'],
    [{ ...valid, max_tokens: undefined }, 'max_tokens'],
    [{ ...valid, messages: 'hi' }, 'messages'],
    [{ ...valid, messages: [{ role: 'bot', content: 'x' }] }, 'messages.0.role'],
    [{ ...valid, tool_choice: { type: 'tool' } }, 'tool_choice'],
  ],
  isTerminal: (f) => f.event === 'message_stop',
  isError: (f) => f.event === 'error',
  errorType: (b) => (b.error as { type: string }).type,
  errorTypes: {
    invalid_request: 'invalid_request_error',
    invalid_token: 'authentication_error',
    model_not_allowed: 'permission_error',
    request_too_large: 'request_too_large',
    quota_exceeded: 'rate_limit_error',
    upstream_rate_limited: 'rate_limit_error',
    upstream_error: 'api_error',
    upstream_overloaded: 'overloaded_error',
    upstream_timeout: 'timeout_error',
    // not overloaded_error: Claude Code retries those for minutes whatever x-should-retry says
    routing_failed: 'api_error',
  },
});

test('text blocks and tool results decode as the block schemas read them, and every malformed one is their 400', () => {
  const decoded = (block: unknown): unknown => {
    try {
      return anthropicShape.decode({ ...valid, messages: [{ role: 'user', content: [block] }] }).messages[0]
        .content[0];
    } catch (err) {
      assert.ok(isSvcError(err));
      return err.message;
    }
  };
  const cc = (ttl?: string) => ({ type: 'ephemeral', ...(ttl ? { ttl } : {}) });
  assert.deepEqual(decoded({ type: 'text', text: 'a' }), { type: 'text', text: 'a' });
  assert.deepEqual(decoded({ type: 'text', text: 'b', cache_control: cc() }), {
    type: 'text',
    text: 'b',
    cache_control: cc(),
  });
  assert.deepEqual(decoded({ type: 'text', text: 'c', cache_control: { ...cc('1h'), x: 1 } }), {
    type: 'text',
    text: 'c',
    cache_control: cc('1h'),
  });
  assert.deepEqual(decoded({ type: 'text', text: 'd', cache_control: null, extra: 1 }), {
    type: 'text',
    text: 'd',
  });
  assert.deepEqual(
    decoded({
      type: 'tool_result',
      tool_use_id: 't',
      content: 'no',
      is_error: true,
      cache_control: cc('5m'),
    }),
    {
      type: 'tool_result',
      tool_use_id: 't',
      content: 'no',
      is_error: true,
      cache_control: cc('5m'),
    },
  );
  assert.deepEqual(decoded({ type: 'tool_result', tool_use_id: 't' }), {
    type: 'tool_result',
    tool_use_id: 't',
    content: '',
  });
  const at = 'messages.0.content.0';
  for (const [block, message] of [
    [{ type: 'text', text: 5 }, `${at}.text: must be a string, not 5`],
    [{ type: 'text' }, `${at}.text: is required`],
    [
      { type: 'text', text: 'e', cache_control: cc('2h') },
      `${at}.cache_control.ttl: must be "5m" or "1h", not "2h"`,
    ],
    [
      { type: 'text', text: 'f', cache_control: { type: 'persistent' } },
      `${at}.cache_control.type: must be "ephemeral", not "persistent"`,
    ],
    [
      { type: 'text', text: 'g', cache_control: 'ephemeral' },
      `${at}.cache_control: must be a JSON object, not "ephemeral"`,
    ],
    [{ type: 'text', text: 'h', cache_control: [] }, `${at}.cache_control.type: is required`],
    [{ type: 'tool_result', tool_use_id: 5, content: 'x' }, `${at}.tool_use_id: must be a string, not 5`],
    [
      { type: 'tool_result', tool_use_id: 't', content: null },
      `${at}.content: must be a string or an array, not null`,
    ],
    [
      { type: 'tool_result', tool_use_id: 't', content: 'x', is_error: 'yes' },
      `${at}.is_error: must be true or false, not "yes"`,
    ],
    [
      { type: 'tool_result', tool_use_id: 't', content: 'x', cache_control: { ttl: '1h' } },
      `${at}.cache_control.type: is required`,
    ],
  ] as const)
    assert.equal(decoded(block), message);
});

test('tool calls decode as their schema reads them: an array or odd names in the input as the record copies them', () => {
  const input = (block: unknown): unknown => {
    try {
      const b = anthropicShape.decode({ ...valid, messages: [{ role: 'assistant', content: [block] }] })
        .messages[0].content[0];
      return b.type === 'tool_use' ? b.input : b;
    } catch (err) {
      assert.ok(isSvcError(err));
      return err.message;
    }
  };
  const call = (over: Record<string, unknown>) => ({ type: 'tool_use', id: 't', name: 'Read', ...over });
  assert.deepEqual(input(call({ input: { file_path: '/a', 2: 'b', 1: 'a' } })), {
    1: 'a',
    2: 'b',
    file_path: '/a',
  });
  assert.deepEqual(input(call({ input: [1, 2] })), { 0: 1, 1: 2 });
  assert.deepEqual(
    input(JSON.parse('{"type":"tool_use","id":"t","name":"R","input":{"__proto__":{"x":1},"a":1}}')),
    {
      a: 1,
    },
  );
  assert.deepEqual(input(call({ input: JSON.parse('{"constructor":1,"b":2,"prototype":3}') })), { b: 2 });
  const at = 'messages.0.content.0';
  assert.equal(input(call({ input: null })), `${at}.input: must be a JSON object, not null`);
  assert.equal(input({ type: 'tool_use', id: 't', name: 'R' }), `${at}.input: is required`);
  assert.equal(input(call({ id: 7, input: {} })), `${at}.id: must be a string, not 7`);
  assert.equal(
    input(call({ input: {}, cache_control: { type: 'x' } })),
    `${at}.cache_control.type: must be "ephemeral", not "x"`,
  );
});

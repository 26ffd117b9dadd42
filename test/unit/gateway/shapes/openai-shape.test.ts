import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openaiShape } from '#src/gateway/shapes/shapes.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { runShapeContract } from './shape-contract.ts';

const valid = { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] };

runShapeContract({
  shape: openaiShape,
  validBody: valid,
  invalid: [
    [{ ...valid, model: '' }, 'model'],
    [{ messages: valid.messages }, 'model'],
    [{ ...valid, messages: {} }, 'messages'],
    [{ ...valid, max_tokens: 1.5 }, 'max_tokens'],
    [{ ...valid, messages: [{ role: 'robot', content: 'x' }] }, 'messages.0.role'],
    [{ ...valid, stream: 'yes' }, 'stream'],
  ],
  isTerminal: (f) => f.data === '[DONE]',
  isError: (f) => f.data.startsWith('{"error"'),
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

test('text parts decode as TextPartSchema reads them in every role, and a malformed one is its 400', () => {
  const decoded = (messages: unknown[]) => {
    try {
      const req = openaiShape.decode({ model: 'gpt-x', messages });
      return { system: req.system, messages: req.messages.map((m) => m.content) };
    } catch (err) {
      assert.ok(isSvcError(err));
      return err.message;
    }
  };
  assert.deepEqual(
    decoded([
      { role: 'system', content: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: [{ text: 'hi', type: 'text', extra: 1 }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      { role: 'tool', tool_call_id: 't', content: [{ type: 'text', text: 'r' }] },
    ]),
    {
      system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
      messages: [
        [{ type: 'text', text: 'hi' }],
        [{ type: 'text', text: 'ok' }],
        [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'r' }] }],
      ],
    },
  );
  const at = 'messages.0.content.0';
  for (const [message, error] of [
    [
      { role: 'system', content: [{ type: 'image_url', image_url: { url: 'x' } }] },
      `${at}.type: must be "text", not "image_url"`,
    ],
    [{ role: 'user', content: [{ type: 'text', text: 5 }] }, `${at}.text: must be a string, not 5`],
    [{ role: 'user', content: [{ type: 'text' }] }, `${at}.text: is required`],
    [
      { role: 'assistant', content: [{ type: 'text', text: null }] },
      `${at}.text: must be a string, not null`,
    ],
    [
      { role: 'developer', content: [{ type: 'texts', text: 'a' }] },
      `${at}.type: must be "text", not "texts"`,
    ],
  ] as const)
    assert.equal(decoded([message]), error);
});

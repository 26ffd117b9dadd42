import { openaiShape } from '#src/gateway/shapes/shapes.ts';
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

import { anthropicShape } from '#src/gateway/shapes/shapes.ts';
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

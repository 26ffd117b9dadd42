import { responsesShape } from '#src/gateway/shapes/shapes.ts';
import { runShapeContract } from './shape-contract.ts';

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

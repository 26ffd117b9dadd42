import { createAnthropicAdapter } from '#src/adapters/registry.ts';
import { ANTHROPIC_TOOL_STREAM } from '../../helpers/sse-fixtures.ts';
import { runAdapterContract } from './adapter-contract.ts';

runAdapterContract({
  name: 'anthropic',
  adapter: createAnthropicAdapter({ baseUrl: 'https://api.anthropic.test/', apiKey: 'sk-ant-1' }),
  apiKey: 'sk-ant-1',
  url: 'https://api.anthropic.test/v1/messages',
  authHeader: ['x-api-key', 'sk-ant-1'],
  stream: ANTHROPIC_TOOL_STREAM,
  streamUsage: {
    input_tokens: 40,
    output_tokens: 31,
    cached_input_tokens: 1200,
    cache_creation_input_tokens: 7,
  },
  response: {
    id: 'msg_01Ab',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content: [
      { type: 'text', text: 'Checking', citations: null },
      { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Oslo' } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: {
      input_tokens: 12,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 2048,
      output_tokens: 57,
    },
  },
  responseUsage: {
    input_tokens: 12,
    output_tokens: 57,
    cached_input_tokens: 2048,
    cache_creation_input_tokens: 0,
  },
  streamError: {
    frame:
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    error_class: 'overloaded',
  },
  errorBody: (message) =>
    JSON.stringify({ type: 'error', error: { type: 'api_error', message }, request_id: 'req_1' }),
  passthroughBody:
    '{"model":"claude","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"container":"x"}',
});

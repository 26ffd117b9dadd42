/**
 * A Responses stream that ends in `response.failed` whose response states its usage: the failed call is
 * billed on those counts (README §Streaming: a stream that breaks after the provider stated its counts is
 * billed on them as stated), not on the gateway's estimate; one without usage leaves the counts open.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createResponsesStreamDecoder } from '#src/adapters/openai/responses-stream.ts';
import type { SseEvent } from '#src/lib/sse-decode.ts';

const sse = (data: Record<string, unknown>): SseEvent => ({
  event: String(data.type),
  data: JSON.stringify(data),
  id: undefined,
});
const created = sse({
  type: 'response.created',
  response: { id: 'resp_1', model: 'gpt-5-mini', status: 'in_progress' },
});
const delta = sse({
  type: 'response.output_text.delta',
  item_id: 'msg_1',
  output_index: 0,
  content_index: 0,
  delta: 'Hel',
});
const failed = (usage: unknown) =>
  sse({
    type: 'response.failed',
    response: {
      id: 'resp_1',
      status: 'failed',
      error: { code: 'server_error', message: 'The model failed to generate a response.' },
      usage,
    },
  });

function run(usage: unknown) {
  const decoder = createResponsesStreamDecoder();
  decoder.push(created);
  decoder.push(delta);
  assert.throws(() => decoder.push(failed(usage)));
  return decoder;
}

test('response.failed with usage: the stated counts, final', () => {
  const decoder = run({
    input_tokens: 120,
    input_tokens_details: { cached_tokens: 20 },
    output_tokens: 7,
    output_tokens_details: { reasoning_tokens: 3 },
    total_tokens: 127,
  });
  assert.equal(decoder.usageFinal(), true);
  const usage = decoder.usage();
  assert.equal(usage.input_tokens, 100);
  assert.equal(usage.cached_input_tokens, 20);
  assert.equal(usage.output_tokens, 7);
  assert.equal(usage.reasoning_tokens, 3);
});

test('response.failed with usage null: the counts stay open for the estimate', () => {
  const decoder = run(null);
  assert.equal(decoder.usageFinal(), false);
});

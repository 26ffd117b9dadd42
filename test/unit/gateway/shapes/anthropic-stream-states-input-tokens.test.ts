/**
 * A translated stream tells an Anthropic client its input tokens twice (issue 17 item 9, wire-formats
 * §5.4): the gateway's estimate in `message_start` (LangChain and SDK 0.39 read input tokens only there)
 * and the provider's exact count in `message_delta.usage` (SDK 0.137+/1.x overwrite with it).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emptyUsage } from '#src/canonical/response.ts';
import type { CanonicalStreamEvent } from '#src/canonical/stream.ts';
import { anthropicShape } from '#src/gateway/shapes/shapes.ts';
import { collect, items, parseSseText } from '../../../helpers/sse-fixtures.ts';

const usage = { ...emptyUsage(), input_tokens: 1234, output_tokens: 5, cached_input_tokens: 100 };
const events: CanonicalStreamEvent[] = [
  { type: 'message.start', message_id: 'chatcmpl-1', role: 'assistant', model: 'gpt' },
  { type: 'text.delta', message_id: 'chatcmpl-1', content_block_index: 0, text: 'hi' },
  {
    type: 'message.complete',
    message_id: 'chatcmpl-1',
    stop_reason: 'end_turn',
    final_content: [{ type: 'text', text: 'hi' }],
    usage,
  },
];

async function frames(estimate: number | undefined) {
  const text = (
    await collect(anthropicShape.encodeStream(items(events), { model: 'm', input_tokens_estimate: estimate }))
  ).join('');
  return parseSseText(text).map((f) => ({ event: f.event, data: JSON.parse(f.data) }));
}

test('message_start carries the input estimate; message_delta the exact count', async () => {
  const out = await frames(1100);
  const start = out.find((f) => f.event === 'message_start')!;
  assert.equal(start.data.message.usage.input_tokens, 1100);
  assert.equal(start.data.message.usage.output_tokens, 0);
  const delta = out.find((f) => f.event === 'message_delta')!;
  assert.equal(delta.data.usage.input_tokens, 1234);
  assert.equal(delta.data.usage.cache_read_input_tokens, 100);
  assert.equal(delta.data.usage.output_tokens, 5);
});

test('without an estimate message_start says 0, as before', async () => {
  const start = (await frames(undefined)).find((f) => f.event === 'message_start')!;
  assert.equal(start.data.message.usage.input_tokens, 0);
});

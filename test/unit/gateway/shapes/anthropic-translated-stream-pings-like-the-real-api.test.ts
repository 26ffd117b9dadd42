/**
 * A translated Messages stream (an OpenAI model answering an Anthropic client) has the event order of the
 * real API's streams (wire-formats §1.10, the streaming docs' full HTTP examples): message_start, the first
 * content_block_start, then one `ping`, then the deltas. Before, it sent no ping, so the same client saw a
 * different sequence depending on which provider's model answered.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emptyUsage } from '#src/canonical/response.ts';
import type { CanonicalStreamEvent } from '#src/canonical/stream.ts';
import { anthropicShape } from '#src/gateway/shapes/shapes.ts';
import { collect, items, parseSseText } from '../../../helpers/sse-fixtures.ts';

const id = 'chatcmpl-1';
const tool = { message_id: id, content_block_index: 1, tool_use_id: 'call_1' };
const complete = (final_content: unknown[], stop_reason: 'end_turn' | 'tool_use'): CanonicalStreamEvent =>
  ({
    type: 'message.complete',
    message_id: id,
    stop_reason,
    final_content,
    usage: { ...emptyUsage(), input_tokens: 12, output_tokens: 7 },
  }) as CanonicalStreamEvent;

async function eventNames(events: CanonicalStreamEvent[]): Promise<string[]> {
  const text = (await collect(anthropicShape.encodeStream(items(events), { model: 'm' }))).join('');
  return parseSseText(text).map((f) => {
    assert.equal(JSON.parse(f.data).type, f.event, 'the data type names its event');
    return f.event!;
  });
}

test('one ping follows the first content_block_start, as in the real API streams', async () => {
  const names = await eventNames([
    { type: 'message.start', message_id: id, role: 'assistant', model: 'gpt' },
    { type: 'text.delta', message_id: id, content_block_index: 0, text: 'Checking' },
    { type: 'text.delta', message_id: id, content_block_index: 0, text: ' now' },
    { ...tool, type: 'tool.use_start', tool_name: 'f' },
    { ...tool, type: 'tool.use_input_delta', partial_json: '{"x":1}' },
    { ...tool, type: 'tool.use_end', final_input: { x: 1 } },
    complete([{ type: 'text', text: 'Checking now' }], 'tool_use'),
  ]);
  assert.deepEqual(names, [
    'message_start',
    'content_block_start',
    'ping',
    'content_block_delta',
    'content_block_delta',
    'content_block_stop',
    'content_block_start',
    'content_block_delta',
    'content_block_stop',
    'message_delta',
    'message_stop',
  ]);
});

test('a message without content blocks sends no ping', async () => {
  const names = await eventNames([
    { type: 'message.start', message_id: id, role: 'assistant', model: 'gpt' },
    complete([], 'end_turn'),
  ]);
  assert.deepEqual(names, ['message_start', 'message_delta', 'message_stop']);
});

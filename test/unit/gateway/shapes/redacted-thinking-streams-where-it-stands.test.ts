/**
 * A redacted thinking block arrives whole (Anthropic `redacted_thinking` at content_block_start, OpenRouter
 * `reasoning.encrypted`): the canonical stream carries it as the block's one `thinking.delta` with its data,
 * so every shape streams it where the final answer has it. Before, no event carried it: a Responses stream
 * never announced the reasoning item that response.completed then listed (every later item streamed one
 * output_index off), and Anthropic and OpenAI-shape streams lost the block.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAnthropicAdapter, createOpenRouterAdapter } from '#src/adapters/registry.ts';
import { createPartialMessage } from '#src/agent/turns/partial-message.ts';
import type { CanonicalStreamEvent } from '#src/canonical/stream.ts';
import { encodeAnthropicStream } from '#src/gateway/shapes/anthropic/encode-stream.ts';
import { encodeOpenAIStream } from '#src/gateway/shapes/openai/encode-stream.ts';
import { encodeResponsesStream } from '#src/gateway/shapes/responses/encode-stream.ts';
import { decodeSse } from '#src/lib/sse-decode.ts';
import { chunks, collect, items, parseSseText, utf8 } from '../../../helpers/sse-fixtures.ts';

const anthropic = createAnthropicAdapter({ baseUrl: 'https://a.test', apiKey: 'k' });
const openrouter = createOpenRouterAdapter({ baseUrl: 'https://r.test/api/v1', apiKey: 'k' });

/** An Anthropic stream: thinking, a redacted block, then text. */
const ANTHROPIC_SSE = [
  ['message_start', { type: 'message_start', message: message() }],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: thinkingStart() }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: thinkingDelta('Let me see.') }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: signatureDelta('sig0') }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  [
    'content_block_start',
    { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'EmwKAhgB' } },
  ],
  ['content_block_stop', { type: 'content_block_stop', index: 1 }],
  [
    'content_block_start',
    { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
  ],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Done.' } },
  ],
  ['content_block_stop', { type: 'content_block_stop', index: 2 }],
  [
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 9 },
    },
  ],
  ['message_stop', { type: 'message_stop' }],
]
  .map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  .join('');

async function decoded(): Promise<CanonicalStreamEvent[]> {
  return collect(anthropic.decodeStream(decodeSse(chunks([utf8(ANTHROPIC_SSE)]))));
}

test('the canonical stream carries a redacted block as its one thinking.delta, at its index', async () => {
  const events = await decoded();
  const redacted = events.filter((e) => e.type === 'thinking.delta' && e.redacted_data !== undefined);
  assert.deepEqual(redacted, [
    {
      type: 'thinking.delta',
      message_id: 'msg_1',
      content_block_index: 1,
      text: '',
      signature: null,
      redacted_data: 'EmwKAhgB',
    },
  ]);
  const done = events.at(-1);
  assert.equal(done?.type, 'message.complete');
  if (done?.type === 'message.complete')
    assert.deepEqual(done.final_content[1], { type: 'redacted_thinking', data: 'EmwKAhgB' });
  // a turn cut off after it keeps it in its partial message, in order
  const partial = createPartialMessage();
  for (const e of events.slice(0, -1)) partial.push(e);
  assert.deepEqual(
    partial.content().map((b) => b.type),
    ['thinking', 'redacted_thinking', 'text'],
  );
});

test('Responses: the redacted reasoning item is streamed where response.completed lists it', async () => {
  const request = { model: 'claude-x', input: 'q', include: ['reasoning.encrypted_content'] };
  const text = (
    await collect(encodeResponsesStream(items(await decoded()), { model: 'claude-x', request, idBase: 'b1' }))
  ).join('');
  const frames = parseSseText(text).map((f) => JSON.parse(f.data));
  const added = frames.filter((f) => f.type === 'response.output_item.added');
  const done = frames.filter((f) => f.type === 'response.output_item.done');
  const completed = frames.find((f) => f.type === 'response.completed');
  assert.deepEqual(
    added.map((f) => [f.output_index, f.item.type]),
    [
      [0, 'reasoning'],
      [1, 'reasoning'],
      [2, 'message'],
    ],
  );
  // what was streamed is what the response holds, item for item and at the same positions
  assert.deepEqual(
    done.map((f) => f.item),
    completed.response.output,
  );
  assert.deepEqual(
    done.map((f) => f.output_index),
    [0, 1, 2],
  );
  const item = completed.response.output[1];
  assert.deepEqual(item.summary, []);
  assert.match(item.encrypted_content, /EmwKAhgB$/);
  // a redacted item has no summary to stream
  assert.equal(
    frames.filter((f) => f.type.startsWith('response.reasoning_summary') && f.output_index === 1).length,
    0,
  );
  assert.deepEqual(
    frames.map((f) => f.sequence_number),
    frames.map((_, i) => i),
  );
});

test('Anthropic shape: an OpenRouter encrypted reasoning detail streams as a redacted_thinking block', async () => {
  const sse = [
    { reasoning_details: [{ type: 'reasoning.text', text: 'hm', signature: 's1' }] },
    { reasoning_details: [{ type: 'reasoning.encrypted', data: 'EmwKAhgB' }] },
    { content: 'Done.' },
  ]
    .map((delta) => chunk(delta, null))
    .join('')
    .concat(chunk({}, 'stop'), 'data: [DONE]\n\n');
  const events = await collect(openrouter.decodeStream(decodeSse(chunks([utf8(sse)]))));
  const text = (await collect(encodeAnthropicStream(items(events), { model: 'alias' }))).join('');
  const frames = parseSseText(text).map((f) => JSON.parse(f.data));
  const starts = frames.filter((f) => f.type === 'content_block_start');
  assert.deepEqual(
    starts.map((f) => [f.index, f.content_block.type]),
    [
      [0, 'thinking'],
      [1, 'redacted_thinking'],
      [2, 'text'],
    ],
  );
  assert.equal(starts[1].content_block.data, 'EmwKAhgB');
  // every block that starts stops, in order, before the next starts
  const order = frames
    .filter((f) => f.type === 'content_block_start' || f.type === 'content_block_stop')
    .map((f) => `${f.type === 'content_block_start' ? '+' : '-'}${f.index}`);
  assert.deepEqual(order, ['+0', '-0', '+1', '-1', '+2', '-2']);
});

test('OpenAI shape: the redacted block streams as OpenRouter writes it, and decodes back to itself', async () => {
  const frames = parseSseText(
    (await collect(encodeOpenAIStream(items(await decoded()), { model: 'alias', created: 1 }))).join(''),
  );
  const sse = frames.map((f) => `data: ${f.data}\n\n`).join('');
  const again = await collect(openrouter.decodeStream(decodeSse(chunks([utf8(sse)]))));
  const done = again.at(-1);
  assert.equal(done?.type, 'message.complete');
  if (done?.type === 'message.complete')
    assert.deepEqual(
      done.final_content.map((b) => b.type),
      ['thinking', 'redacted_thinking', 'text'],
    );
});

// --- fixtures ---

function message() {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}
function thinkingStart() {
  return { type: 'thinking', thinking: '', signature: '' };
}
function thinkingDelta(thinking: string) {
  return { type: 'thinking_delta', thinking };
}
function signatureDelta(signature: string) {
  return { type: 'signature_delta', signature };
}
function chunk(delta: unknown, finish: string | null): string {
  const c = {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'g',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(c)}\n\n`;
}

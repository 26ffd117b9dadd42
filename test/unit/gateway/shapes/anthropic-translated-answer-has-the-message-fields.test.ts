/**
 * A translated answer (another provider's model on /v1/messages) carries the Message fields the real API
 * always sends and the SDK 1.x types declare (wire-formats §1.7, §1.8): `stop_details` (null, or the
 * refusal's details) and usage `cache_creation` and `service_tier`. Read by the Anthropic SDK itself, the
 * stream's `finalMessage()` has the same `stop_details` as `create()`: the SDK's accumulator copies it from
 * `message_delta`, so a delta without it left `undefined` where the type promises null.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { CanonicalResponse, CanonicalUsage, StopReason } from '#src/canonical/response.ts';
import type { CanonicalStreamEvent } from '#src/canonical/stream.ts';
import { anthropicShape } from '#src/gateway/shapes/shapes.ts';
import { ANTHROPIC_MESSAGE } from '../../../fixtures/provider-docs.ts';
import { collect, items } from '../../../helpers/sse-fixtures.ts';

const usage: CanonicalUsage = {
  input_tokens: 40,
  output_tokens: 12,
  cached_input_tokens: 1200,
  cache_creation_input_tokens: 300,
  cache_creation_1h_input_tokens: 100,
};

function response(stop: StopReason): CanonicalResponse {
  return {
    id: 'chatcmpl-1',
    model: 'gpt',
    content: [{ type: 'text', text: 'hi' }],
    stop_reason: stop,
    stop_sequence: null,
    usage,
  };
}

function events(stop: StopReason): CanonicalStreamEvent[] {
  const id = 'chatcmpl-1';
  return [
    { type: 'message.start', message_id: id, role: 'assistant', model: 'gpt' },
    { type: 'text.delta', message_id: id, content_block_index: 0, text: 'hi' },
    {
      type: 'message.complete',
      message_id: id,
      stop_reason: stop,
      final_content: [{ type: 'text', text: 'hi' }],
      usage,
    },
  ];
}

/** An SDK client whose every request is answered with `body` (JSON or an event stream). */
function client(body: () => Promise<string>, stream: boolean): Anthropic {
  const headers = { 'content-type': stream ? 'text/event-stream' : 'application/json' };
  return new Anthropic({
    apiKey: 'k',
    maxRetries: 0,
    fetch: async () => new Response(await body(), { status: 200, headers }),
  });
}

const ONLY_WHEN_KNOWN = new Set(['output_tokens_details', 'server_tool_use']);

const params = { model: 'm', max_tokens: 10, messages: [{ role: 'user' as const, content: 'hi' }] };

async function both(stop: StopReason) {
  const json = async () => JSON.stringify(anthropicShape.encode(response(stop), { model: 'm' }));
  const sse = async () =>
    (
      await collect(
        anthropicShape.encodeStream(items(events(stop)), { model: 'm', input_tokens_estimate: 40 }),
      )
    ).join('');
  const created = await client(json, false).messages.create(params);
  const streamed = await client(sse, true).messages.stream(params).finalMessage();
  return { created, streamed };
}

test('a translated message has stop_details null, and the cache_creation split where it is known', async () => {
  const { created, streamed } = await both('end_turn');
  assert.equal(created.stop_details, null);
  assert.equal(streamed.stop_details, null);
  assert.deepEqual(created.usage.cache_creation, {
    ephemeral_5m_input_tokens: 200,
    ephemeral_1h_input_tokens: 100,
  });
  assert.equal(created.usage.service_tier, 'standard');
  assert.equal(streamed.usage.service_tier, 'standard');
  // the stream's counts come at its end, in message_delta, which has no split: message_start's split is
  // the API's "unknown" (null), not zeros that would contradict the exact total of 300 writes
  assert.equal(streamed.usage.cache_creation, null);
  assert.equal(streamed.usage.cache_creation_input_tokens, 300);
  // every top-level and usage field of the documented message is there (thinking tokens only when known;
  // `server_tool_use` only when the provider ran a server tool, which a translated call never does)
  const missing = (sent: object, doc: object) =>
    Object.keys(doc).filter((k) => !(k in sent) && !ONLY_WHEN_KNOWN.has(k));
  assert.deepEqual(missing(created, ANTHROPIC_MESSAGE), []);
  assert.deepEqual(missing(created.usage, ANTHROPIC_MESSAGE.usage), []);
  assert.deepEqual(missing(streamed, ANTHROPIC_MESSAGE), []);
});

test('a translated refusal names itself in stop_details, streamed or not', async () => {
  const { created, streamed } = await both('refusal');
  const details = { type: 'refusal', category: null, explanation: null };
  assert.equal(created.stop_reason, 'refusal');
  assert.deepEqual(created.stop_details, details);
  assert.equal(streamed.stop_reason, 'refusal');
  assert.deepEqual(streamed.stop_details, details);
});

test('a translated message names the tier it ran at as Anthropic does: priority, else standard', async () => {
  for (const [tier, expected] of [
    ['priority', 'priority'],
    ['default', 'standard'],
    ['flex', 'standard'],
    ['fast', 'standard'],
    [undefined, 'standard'],
  ] as const) {
    const ran = { ...usage, ...(tier ? { service_tier: tier } : {}) };
    const json = anthropicShape.encode({ ...response('end_turn'), usage: ran }, { model: 'm' }) as {
      usage: { service_tier: string };
    };
    assert.equal(json.usage.service_tier, expected, `${tier}`);
    const start = { ...events('end_turn')[0]!, ...(tier ? { service_tier: tier } : {}) };
    const sse = (await collect(anthropicShape.encodeStream(items([start]), { model: 'm' }))).join('');
    assert.ok(sse.includes(`"service_tier":"${expected}"`), `${tier} streamed: ${sse}`);
  }
});

/**
 * An OpenAI-wire stream translated for an Anthropic client states input tokens where each client reads
 * them (issue 17 item 9): LangChain's ChatAnthropic reads them only from `message_start`, which now carries
 * the gateway's estimate instead of 0; the Anthropic SDK's final message takes the provider's exact count
 * from `message_delta` (the cache write split, which only `message_start` could carry, is null there:
 * unknown at the start); the trace keeps the exact count.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatAnthropic } from '@langchain/anthropic';
import type { AIMessageChunk } from '@langchain/core/messages';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

const MODEL = 'openai:gpt-5-mini';
const EXACT_INPUT = 321;
const prompt = `${'Tell me about tokens. '.repeat(20)}[[fake:usage=in:${EXACT_INPUT},out:7,cache_write:50]]`;
/** The routing estimate: characters / 4 of the only text in the request. */
const ESTIMATE = Math.ceil(prompt.length / 4);

test('a translated stream gives Anthropic clients an input estimate first and the exact count last', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const lastCall = () => readEvents(stack.files.db, 'llm.call_completed').at(-1)!;

  await t.test('raw events: message_start has the estimate, message_delta the exact count', async () => {
    const stream = stack.anthropic.messages.stream({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: prompt }],
    });
    const seen: Array<{ type: string; usage?: Record<string, unknown> }> = [];
    stream.on('streamEvent', (e) => {
      if (e.type === 'message_start') seen.push({ type: e.type, usage: { ...e.message.usage } });
      if (e.type === 'message_delta') seen.push({ type: e.type, usage: { ...e.usage } });
    });
    const final = await stream.finalMessage();
    const start = seen.find((e) => e.type === 'message_start')!;
    const delta = seen.find((e) => e.type === 'message_delta')!;
    assert.equal(start.usage?.input_tokens, ESTIMATE);
    assert.equal(delta.usage?.input_tokens, EXACT_INPUT);
    assert.equal(final.usage.input_tokens, EXACT_INPUT, 'the SDK overwrites the estimate');
    assert.equal(final.usage.output_tokens, 7);
    assert.equal(final.usage.cache_creation_input_tokens, 50);
    // message_delta has no lifetime split of the writes, so message_start's is null (unknown), not zeros
    // contradicting the 50 writes in the final message
    assert.equal(final.usage.cache_creation, null);
    assert.equal(lastCall().payload.input_tokens, EXACT_INPUT, 'the trace keeps the exact count');
  });

  await t.test('LangChain ChatAnthropic sees input tokens, not 0', async () => {
    const model = new ChatAnthropic({
      model: MODEL,
      apiKey: stack.token,
      anthropicApiUrl: stack.gw.url,
      maxRetries: 0,
      maxTokens: 64,
    });
    let merged: AIMessageChunk | undefined;
    for await (const chunk of await model.stream(prompt)) merged = merged ? merged.concat(chunk) : chunk;
    assert.ok(merged, 'chunks arrived');
    assert.equal(merged.usage_metadata?.input_tokens, ESTIMATE);
    assert.equal(merged.usage_metadata?.output_tokens, 7);
    assert.equal(lastCall().payload.input_tokens, EXACT_INPUT, 'the trace keeps the exact count');
  });
});

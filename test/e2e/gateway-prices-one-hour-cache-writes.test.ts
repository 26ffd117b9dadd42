/**
 * One-hour cache writes are billed at their own rate: Anthropic reports them apart in
 * `usage.cache_creation.ephemeral_1h_input_tokens`, and llm.call_completed carries them and a cost that
 * prices them at cache_write_1h (twice input for the built-in Anthropic models), streaming and not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

const MODEL = 'anthropic:claude-haiku-4-5';

test('a call with one-hour cache writes is priced at the one-hour rate', async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const system = [
    {
      type: 'text' as const,
      text: 'a long preamble',
      cache_control: { type: 'ephemeral' as const, ttl: '1h' as const },
    },
  ];
  for (const stream of [false, true]) {
    stack.fake.script(['usage=in:10,cache_write:1000,cache_write_1h:600,out:10']);
    const ask = {
      model: MODEL,
      max_tokens: 64,
      system,
      messages: [{ role: 'user' as const, content: 'hi' }],
    };
    if (stream) await stack.anthropic.messages.stream(ask).finalMessage();
    else {
      const message = await stack.anthropic.messages.create(ask);
      assert.equal(message.usage.cache_creation?.ephemeral_1h_input_tokens, 600);
    }
    const call = readEvents(stack.files.db, 'llm.call_completed').at(-1)!.payload;
    assert.equal(call.cache_creation_input_tokens, 1000, `stream ${stream}`);
    assert.equal(call.cache_creation_1h_input_tokens, 600, `stream ${stream}`);
    // haiku: input 1, five-minute write 1.25, one-hour write 2, output 5 USD per million tokens:
    // 10 × 1 + 400 × 1.25 + 600 × 2 + 10 × 5 = 1760 → 0.001760
    assert.equal(call.cost_usd, '0.001760', `stream ${stream}`);
  }
});

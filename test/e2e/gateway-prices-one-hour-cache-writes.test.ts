/**
 * One-hour cache writes are billed at their own rate: Anthropic reports them apart in
 * `usage.cache_creation.ephemeral_1h_input_tokens`, and llm.call_completed carries them and a cost that
 * prices them at cache_write_1h (twice input for the built-in Anthropic models), streaming and not.
 * Server-side web searches likewise (`usage.server_tool_use.web_search_requests`): counted on the event as
 * web_search_requests and priced at the model's web_search (USD per 1,000 searches).
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

  await t.test('server-side web searches are counted and priced on top of the tokens', async () => {
    const ask = {
      model: MODEL,
      max_tokens: 64,
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 5 }],
      messages: [{ role: 'user' as const, content: 'news today? [[fake:web-search=2;usage=in:10,out:10]]' }],
    };
    for (const stream of [false, true]) {
      const message = stream
        ? await stack.anthropic.messages.stream(ask).finalMessage()
        : await stack.anthropic.messages.create(ask);
      // the client gets the API's answer as sent: the search blocks and the usage that counts them
      assert.deepEqual(
        message.content.map((b) => b.type),
        ['server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_search_tool_result', 'text'],
      );
      assert.equal(message.usage.server_tool_use?.web_search_requests, 2, `stream ${stream}`);
      const call = readEvents(stack.files.db, 'llm.call_completed').at(-1)!.payload;
      assert.equal(call.web_search_requests, 2, `stream ${stream}`);
      // haiku: 10 × 1 + 10 × 5 = 60 per million tokens, plus 2 searches × 10 USD per 1,000
      assert.equal(call.cost_usd, '0.020060', `stream ${stream}`);
    }
  });
});

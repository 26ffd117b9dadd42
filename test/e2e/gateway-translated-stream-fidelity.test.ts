/**
 * Translated streams through the real gateway (wire-formats §5.3, §5.4): what a stream that fails after
 * some output still carries, and the parallel-tool switch on its way between the shapes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';

const ANTHROPIC_MODEL = 'anthropic:claude-haiku-4-5';

/** A streamed Responses call with plain fetch (the SDK throws at the error event): its events' data. */
async function streamResponses(stack: GatewayStack, body: Record<string, unknown>) {
  const res = await fetch(`${stack.gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ stream: true, ...body }),
  });
  assert.equal(res.status, 200);
  return (await res.text())
    .trim()
    .split('\n\n')
    .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as Record<string, any>);
}

test('translated streams', { timeout: 60_000 }, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const { fake } = stack;
  t.beforeEach(() => fake.reset());

  await t.test(
    'a Claude stream that fails after its text block ended: response.failed carries that message item',
    async () => {
      // message_start, content_block_start, ping, one text delta, content_block_stop, then the overload
      fake.script(['text=Checking;stream-error=529;stream-error-after=5']);
      const events = await streamResponses(stack, { model: ANTHROPIC_MODEL, input: 'hi' });
      const [error, failed] = events.slice(-2);
      assert.equal(error.type, 'error');
      assert.equal(failed.type, 'response.failed');
      assert.equal(failed.response.error.code, 'server_is_overloaded');
      const done = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item);
      assert.deepEqual(
        failed.response.output,
        done,
        'the failed response carries the items the stream finished, as each output_item.done said',
      );
      assert.equal(done.length, 1, 'the ended text block is a finished message item');
      assert.equal(done[0].type, 'message');
      assert.equal(done[0].status, 'completed');
      assert.deepEqual(done[0].content, [{ type: 'output_text', text: 'Checking', annotations: [] }]);
      const doneAt = events.findIndex((e) => e.type === 'response.output_item.done');
      assert.ok(doneAt < events.indexOf(error), 'the item is done before the error event');
    },
  );

  await t.test('a text block the failure cut off mid-way is no finished item', async () => {
    // the failure right after the first delta: the block never ended
    fake.script(['text=Checking the weather;stream-error=529;stream-error-after=4']);
    const events = await streamResponses(stack, { model: ANTHROPIC_MODEL, input: 'hi' });
    assert.ok(events.some((e) => e.type === 'response.output_text.delta'));
    const failed = events.at(-1)!;
    assert.equal(failed.type, 'response.failed');
    assert.deepEqual(failed.response.output, []);
    assert.equal(events.filter((e) => e.type === 'response.output_item.done').length, 0);
  });
});

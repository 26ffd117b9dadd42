/**
 * Translated streams through the real gateway (wire-formats §5.3, §5.4): what a stream that fails after
 * some output still carries, and the parallel-tool switch on its way between the shapes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';

const ANTHROPIC_MODEL = 'anthropic:claude-haiku-4-5';
const OPENAI_MODEL = 'openai:gpt-5-mini';
const OPENROUTER_MODEL = 'openrouter:google/gemini-2.5-flash';

const schema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };
const TOOLS = [
  { name: 'get_weather', input_schema: schema },
  { name: 'get_time', input_schema: schema },
];
/** Two calls asked of the fake: a model that honours "no parallel calls" makes one. */
const TWO_CALLS = 'weather and time in Oslo? [[fake:tool_calls=2]]';

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
  /** The body the fake received. */
  const sent = () => fake.requests[0].body as Record<string, any>;

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

  await t.test('Chat parallel_tool_calls: false reaches Claude as disable_parallel_tool_use', async () => {
    const functions = TOOLS.map((f) => ({
      type: 'function' as const,
      function: { name: f.name, parameters: f.input_schema },
    }));
    for (const [toolChoice, expected] of [
      [undefined, { type: 'auto', disable_parallel_tool_use: true }],
      ['required', { type: 'any', disable_parallel_tool_use: true }],
      [
        { type: 'function', function: { name: 'get_time' } },
        { type: 'tool', name: 'get_time', disable_parallel_tool_use: true },
      ],
    ] as const) {
      fake.reset();
      const completion = await stack.openai.chat.completions
        .stream({
          model: ANTHROPIC_MODEL,
          tools: functions,
          ...(toolChoice ? { tool_choice: toolChoice } : {}),
          parallel_tool_calls: false,
          messages: [{ role: 'user', content: TWO_CALLS }],
        })
        .finalChatCompletion();
      assert.deepEqual(sent().tool_choice, expected);
      assert.equal(completion.choices[0].message.tool_calls?.length, 1, 'one call, as Claude made');
      assert.equal(completion.choices[0].finish_reason, 'tool_calls');
    }
    // without the switch Claude may call both
    fake.reset();
    const parallel = await stack.openai.chat.completions.create({
      model: ANTHROPIC_MODEL,
      tools: functions,
      messages: [{ role: 'user', content: TWO_CALLS }],
    });
    assert.equal(sent().tool_choice, undefined);
    assert.equal(parallel.choices[0].message.tool_calls?.length, 2);
  });

  await t.test(
    'Responses parallel_tool_calls: false reaches Claude as disable_parallel_tool_use',
    async () => {
      const tools = TOOLS.map((f) => ({
        type: 'function' as const,
        name: f.name,
        parameters: f.input_schema,
        strict: false,
      }));
      const response = await stack.openai.responses
        .stream({ model: ANTHROPIC_MODEL, tools, parallel_tool_calls: false, input: TWO_CALLS })
        .finalResponse();
      assert.deepEqual(sent().tool_choice, { type: 'auto', disable_parallel_tool_use: true });
      assert.equal(response.output.filter((i) => i.type === 'function_call').length, 1);
      assert.equal(response.parallel_tool_calls, false, 'the answer echoes the request');
    },
  );

  await t.test(
    'Messages disable_parallel_tool_use reaches OpenAI models as parallel_tool_calls: false',
    async () => {
      for (const model of [OPENAI_MODEL, OPENROUTER_MODEL]) {
        for (const [toolChoice, expected] of [
          [{ type: 'auto', disable_parallel_tool_use: true }, 'auto'],
          [{ type: 'any', disable_parallel_tool_use: true }, 'required'],
        ] as const) {
          fake.reset();
          const message = await stack.anthropic.messages
            .stream({
              model,
              max_tokens: 256,
              tools: TOOLS,
              tool_choice: toolChoice,
              messages: [{ role: 'user', content: TWO_CALLS }],
            })
            .finalMessage();
          const body = sent();
          assert.equal(body.parallel_tool_calls, false, model);
          assert.equal(body.tool_choice, expected, model);
          assert.deepEqual(
            message.content.map((b) => b.type),
            ['tool_use'],
            `${model}: one call, as the model made`,
          );
          assert.equal(message.stop_reason, 'tool_use');
        }
      }
      // without it the request leaves the switch at the API's default
      fake.reset();
      await stack.anthropic.messages.create({
        model: OPENAI_MODEL,
        max_tokens: 256,
        tools: TOOLS,
        tool_choice: { type: 'auto' },
        messages: [{ role: 'user', content: TWO_CALLS }],
      });
      assert.equal(sent().parallel_tool_calls, undefined);
    },
  );
});

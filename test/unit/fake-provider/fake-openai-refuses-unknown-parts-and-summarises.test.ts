import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import OpenAI from 'openai';
import { fakeSdkClients } from '../../fake-provider/sdk-clients.ts';
import { startFakeProvider } from '../../fake-provider/server.ts';

const fake = await startFakeProvider();
after(() => fake.close());

const { openai } = fakeSdkClients(fake);
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** The OpenAI SDK's 400 for a request, with the error body's fields. */
async function refusal(call: Promise<unknown>): Promise<{ message: string; param: unknown; code: unknown }> {
  const err = await call.then(
    () => assert.fail('answered where OpenAI refuses'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof OpenAI.BadRequestError, String(err));
  const body = err.error as { message: string; param: unknown; code: unknown; type: unknown };
  assert.equal(body.type, 'invalid_request_error');
  return { message: body.message, param: body.param, code: body.code };
}

test('Chat Completions refuses a content part of a type it has no schema for, naming its path', async () => {
  // LangChain v1's standard image block, sent as is
  const image = { type: 'image', source_type: 'base64', mime_type: 'image/png', data: PNG.slice(22) };
  const messages = [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, image] }];
  assert.deepEqual(await refusal(openai.chat.completions.create({ model: 'gpt-4o', messages } as never)), {
    message:
      "Invalid value: 'image'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.",
    param: 'messages[0].content[1].type',
    code: 'invalid_value',
  });
  // an image only in a user message
  const img = { type: 'image_url', image_url: { url: PNG } };
  const history = [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: [img] },
    { role: 'user', content: 'q' },
  ];
  const assistant = await refusal(
    openai.chat.completions.create({ model: 'gpt-4o', messages: history } as never),
  );
  assert.equal(
    assistant.message,
    "Invalid 'messages[1]'. Image URLs are only allowed for messages with role 'user', but this message with role 'assistant' contains an image URL.",
  );
  // the valid form is served
  const completion = await openai.chat.completions.create({
    model: 'gpt-4o',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: '[[fake:image-check]]' },
          { type: 'image_url', image_url: { url: PNG } },
        ],
      },
    ],
  });
  assert.equal(completion.choices[0].message.content, 'image-check: 1 image (image/png)');
});

test('the Responses API refuses a Chat Completions part in a message and reads images in tool outputs', async () => {
  const chatImage = { type: 'image_url', image_url: { url: PNG } };
  const input = [{ role: 'user', content: [{ type: 'input_text', text: 'q' }, chatImage] }];
  assert.deepEqual(await refusal(openai.responses.create({ model: 'gpt-5', input } as never)), {
    message:
      "Invalid value: 'image_url'. Supported values are: 'input_text', 'input_image', 'input_audio', 'output_text', 'refusal', 'input_file', 'computer_screenshot', 'summary_text', and 'encrypted_content'.",
    param: 'input[0].content[1].type',
    code: 'invalid_value',
  });
  const call = { type: 'function_call', call_id: 'call_1', name: 'shot', arguments: '{}' };
  const output = (parts: unknown) => [
    { role: 'user', content: 'take a screenshot' },
    call,
    { type: 'function_call_output', call_id: 'call_1', output: parts },
    { role: 'user', content: '[[fake:image-check]]' },
  ];
  // a tool output holds input_text / input_image / input_file parts; an image there reaches the model
  const answer = await openai.responses.create({
    model: 'gpt-5',
    input: output([
      { type: 'input_text', text: 'here' },
      { type: 'input_image', image_url: PNG },
    ]),
  } as never);
  assert.equal(answer.output_text, 'image-check: 1 image (image/png)');
  assert.deepEqual(
    await refusal(openai.responses.create({ model: 'gpt-5', input: output([chatImage]) } as never)),
    {
      message:
        "Invalid value: 'image_url'. Supported values are: 'input_text', 'input_image', and 'input_file'.",
      param: 'input[2].output[0].type',
      code: 'invalid_value',
    },
  );
});

test('the Responses API refuses a tool call without its output and an output answering no call', async () => {
  const call = { type: 'function_call', call_id: 'call_1', name: 'get', arguments: '{}' };
  const output = { type: 'function_call_output', call_id: 'call_2', output: 'ok' };
  const user = { role: 'user', content: 'next' };
  assert.deepEqual(
    await refusal(openai.responses.create({ model: 'gpt-5', input: [user, call, user] } as never)),
    {
      message: 'No tool output found for function call call_1.',
      param: 'input',
      code: null,
    },
  );
  assert.deepEqual(
    await refusal(openai.responses.create({ model: 'gpt-5', input: [user, output] } as never)),
    {
      message: 'No tool call found for function call output with call_id call_2.',
      param: 'input',
      code: null,
    },
  );
  // an output may answer a call of the response it follows
  const first = await openai.responses.create({ model: 'gpt-5', input: 'q' });
  await openai.responses.create({ model: 'gpt-5', previous_response_id: first.id, input: [output] } as never);
});

test('the Responses API summarises reasoning when reasoning.summary asks, streamed and not', async () => {
  const reasoning = { effort: 'low', summary: 'auto' } as const;
  const answer = await openai.responses.create({ model: 'gpt-5', input: 'q', reasoning });
  const item = answer.output.find((o) => o.type === 'reasoning');
  assert.deepEqual(item?.summary, [
    { type: 'summary_text', text: 'The user wants a reply. I will answer briefly.' },
  ]);
  const stream = await openai.responses.create({ model: 'gpt-5', input: 'q', reasoning, stream: true });
  const events: string[] = [];
  let deltas = '';
  let done: unknown;
  for await (const event of stream) {
    events.push(event.type);
    if (event.type === 'response.reasoning_summary_text.delta') deltas += event.delta;
    if (event.type === 'response.output_item.done' && event.item.type === 'reasoning')
      done = event.item.summary;
  }
  assert.deepEqual(
    events.filter((t) => t.includes('reasoning_summary')),
    [
      'response.reasoning_summary_part.added',
      ...Array(9).fill('response.reasoning_summary_text.delta'),
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
    ],
  );
  assert.equal(deltas, 'The user wants a reply. I will answer briefly.');
  assert.deepEqual(done, item?.summary);
  // a summary from a reasoning model asks for reasoning by itself; unasked, the item has none
  const bySummary = await openai.responses.create({
    model: 'gpt-5',
    input: 'q',
    reasoning: { summary: 'detailed' },
  });
  assert.equal(bySummary.output.find((o) => o.type === 'reasoning')?.summary.length, 1);
  const unasked = await openai.responses.create({ model: 'gpt-5', input: 'q', reasoning: { effort: 'low' } });
  assert.deepEqual(unasked.output.find((o) => o.type === 'reasoning')?.summary, []);
  // gpt-5 writes no concise summary; a summary is auto, concise or detailed
  assert.deepEqual(
    await refusal(
      openai.responses.create({ model: 'gpt-5-mini', input: 'q', reasoning: { summary: 'concise' } }),
    ),
    {
      message:
        "Unsupported value: 'concise' is not supported with the 'gpt-5-mini' model. Supported values are: 'detailed'.",
      param: 'reasoning.summary',
      code: 'unsupported_value',
    },
  );
  const none = await refusal(
    openai.responses.create({ model: 'gpt-5.1', input: 'q', reasoning: { summary: 'none' } } as never),
  );
  assert.deepEqual(none, {
    message: "Invalid value: 'none'. Supported values are: 'concise', 'detailed', and 'auto'.",
    param: 'reasoning.summary',
    code: 'invalid_value',
  });
  await openai.responses.create({ model: 'gpt-5.1', input: 'q', reasoning: { summary: 'concise' } });
  // a model that does not reason takes no summary
  const chat = await refusal(
    openai.responses.create({ model: 'gpt-4.1', input: 'q', reasoning: { summary: 'auto' } }),
  );
  assert.equal(chat.message, "Unsupported parameter: 'reasoning.summary' is not supported with this model.");
});

test('the Responses API finds an item named by reference only among stored answers', async () => {
  const reasoning = { effort: 'low' } as const;
  const kept = await openai.responses.create({ model: 'gpt-5', input: 'q', reasoning });
  const refs = kept.output.map((o) => ({ type: 'item_reference', id: o.id }));
  await openai.responses.create({
    model: 'gpt-5',
    input: [{ role: 'user', content: 'q' }, ...refs],
  } as never);
  const unkept = await openai.responses.create({
    model: 'gpt-5',
    input: 'q',
    reasoning,
    store: false,
    include: ['reasoning.encrypted_content'],
  });
  const item = unkept.output.find((o) => o.type === 'reasoning')!;
  const user = { role: 'user', content: 'q' };
  // an unstored reasoning item goes back whole, with its sealed content; by its id alone it is not found
  await openai.responses.create({ model: 'gpt-5', store: false, input: [user, item, user] } as never);
  const { encrypted_content: _, ...byId } = item;
  for (const named of [byId, { type: 'item_reference', id: item.id }]) {
    const err = await openai.responses.create({ model: 'gpt-5', input: [user, named, user] } as never).then(
      () => assert.fail('answered where OpenAI refuses'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenAI.NotFoundError, String(err));
    assert.match(err.message, new RegExp(`Item with id '${item.id}' not found. Items are not persisted`));
  }
});

test('Chat Completions refuses n outside 1..128 as OpenAI does, naming it (the fake made 1e308 choices)', async () => {
  const ask = (n: unknown) =>
    refusal(
      openai.chat.completions.create({
        model: 'gpt-4o',
        n,
        messages: [{ role: 'user', content: 'hi' }],
      } as never),
    );
  assert.deepEqual(await ask(1e308), {
    message: "Invalid 'n': integer above maximum value. Expected a value <= 128, but got 1e+308 instead.",
    param: 'n',
    code: 'integer_above_max_value',
  });
  assert.equal((await ask(0)).code, 'integer_below_min_value');
  assert.equal((await ask(1.5)).code, 'invalid_type');
  const two = await openai.chat.completions.create({
    model: 'gpt-4o',
    n: 2,
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(two.choices.length, 2);
});

/**
 * A call that ends before the provider said what it bills is never recorded at $0: the provider bills the
 * prompt it read and the tokens it generated. An OpenAI stream states its usage only in its last chunk, so a
 * client that cancels (or a connection that breaks) before it leaves the gateway with no count at all; a
 * non-streaming body lost on the way has none either. Such calls carry the input estimate and the output
 * counted from the deltas sent, priced, and marked `usage_estimated` on their event.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type EventRow, readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';

const OPENAI_MODEL = 'openai:gpt-5-mini';
const CLAUDE_MODEL = 'anthropic:claude-haiku-4-5';
const SLOW_REPLY =
  '[[fake:text=one two three four five six seven eight nine ten;drip=100;usage=in:5000,out:300]]';

test('calls that end before the provider states its usage are billed on estimates', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack({ env: { SVC_GATEWAY_MAX_RETRIES: '0' } });
  t.after(() => stack.stop());

  await t.test('an OpenAI stream the client cancels before the usage chunk', async () => {
    const turnId = await cancelAfterFirstWords(stack, OPENAI_MODEL);
    const e = await closingEvent(stack, 'llm.call_completed', turnId);
    assert.equal(e.payload.error_class, 'cancelled');
    assertEstimated(e, 'the cancelled OpenAI stream');
  });

  await t.test(
    'a Claude stream cancelled mid-answer keeps its stated input and counts its output',
    async () => {
      const turnId = await cancelAfterFirstWords(stack, CLAUDE_MODEL);
      const e = await closingEvent(stack, 'llm.call_completed', turnId);
      assert.equal(e.payload.input_tokens, 5000, 'message_start stated the input');
      // message_start says output_tokens 1; the words sent before the cancel are more than that
      assert.ok(
        Number(e.payload.output_tokens) > 1,
        `output counted from the deltas: ${e.payload.output_tokens}`,
      );
      assert.equal(e.payload.usage_estimated, true);
    },
  );

  await t.test('an OpenAI stream that breaks before the usage chunk', async () => {
    const { data, response } = await stack.openai.chat.completions
      .create({
        model: OPENAI_MODEL,
        stream: true,
        messages: [{ role: 'user', content: 'hello there [[fake:text=a longer answer;reset-after=4]]' }],
      })
      .withResponse();
    await assert.rejects(async () => {
      for await (const _ of data);
    });
    const e = await closingEvent(stack, 'llm.call_failed', response.headers.get('svc-request-id')!);
    assert.equal(e.payload.error_class, 'connection_error');
    assertEstimated(e, 'the broken OpenAI stream');
  });

  await t.test('an estimate never bills more output than the request allowed (max_tokens)', async () => {
    // four tokens of three CJK characters each (o200k and Claude's tokenizer have such tokens): weighed by
    // script they read as 12, but the provider can bill no more than the max_tokens of 4
    const { data, response } = await stack.openai.chat.completions
      .create({
        model: OPENAI_MODEL,
        stream: true,
        max_tokens: 4,
        messages: [{ role: 'user', content: 'hi [[fake:text=日本語 日本語 日本語 日本語;reset-after=5]]' }],
      })
      .withResponse();
    let text = '';
    await assert.rejects(async () => {
      for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
    });
    assert.ok(text.length >= 12, `the four words arrived before the break: ${text}`);
    const e = await closingEvent(stack, 'llm.call_failed', response.headers.get('svc-request-id')!);
    assert.equal(e.payload.usage_estimated, true);
    assert.equal(e.payload.output_tokens, 4);
  });

  await t.test('a non-streaming answer whose body is lost on the way', async () => {
    for (const model of [OPENAI_MODEL, CLAUDE_MODEL]) {
      const { response, error } = await stack.openai.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hello there [[fake:reset-after=1]]' }] })
        .withResponse()
        .then((r) => ({ response: r.response, error: undefined }))
        .catch((err: { headers?: Headers }) => ({ response: undefined, error: err }));
      assert.equal(response, undefined, `${model}: the lost body is an error`);
      const turnId = error!.headers!.get('svc-request-id')!;
      const e = await closingEvent(stack, 'llm.call_failed', turnId);
      assert.ok(Number(e.payload.input_tokens) > 0, `${model}: the prompt the provider read is billed`);
      assert.ok(Number(e.payload.cost_usd) > 0, `${model}: priced (${e.payload.cost_usd})`);
      assert.equal(e.payload.usage_estimated, true, model);
    }
  });

  await t.test('a stream that ends normally states the provider usage, not an estimate', async () => {
    const { data, response } = await stack.openai.chat.completions
      .create({
        model: OPENAI_MODEL,
        stream: true,
        messages: [{ role: 'user', content: 'hi [[fake:usage=in:70,out:9]]' }],
      })
      .withResponse();
    for await (const _ of data);
    const e = await closingEvent(stack, 'llm.call_completed', response.headers.get('svc-request-id')!);
    assert.equal(e.payload.input_tokens, 70);
    assert.equal(e.payload.output_tokens, 9);
    assert.equal(e.payload.usage_estimated, undefined);
  });
});

// --- internal ---

/** Streams through the OpenAI SDK and aborts once a few words arrived; returns the turn id. */
async function cancelAfterFirstWords(stack: GatewayStack, model: string): Promise<string> {
  const controller = new AbortController();
  const { data, response } = await stack.openai.chat.completions
    .create(
      { model, stream: true, messages: [{ role: 'user', content: `hello there ${SLOW_REPLY}` }] },
      { signal: controller.signal },
    )
    .withResponse();
  let text = '';
  try {
    for await (const chunk of data) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (text.length >= 12) controller.abort();
    }
  } catch {
    // the SDK may end the aborted stream quietly or throw its abort error: either way the client left
  }
  assert.ok(controller.signal.aborted, 'the client cancelled mid-stream');
  assert.ok(text.length >= 12, 'words arrived before the cancel');
  return response.headers.get('svc-request-id')!;
}

function assertEstimated(e: EventRow, what: string): void {
  assert.ok(Number(e.payload.input_tokens) > 0, `${what}: input from the request's estimate`);
  assert.ok(Number(e.payload.output_tokens) > 0, `${what}: output counted from the deltas sent`);
  assert.ok(Number(e.payload.cost_usd) > 0, `${what}: never $0 (${e.payload.cost_usd})`);
  assert.equal(e.payload.usage_estimated, true, `${what}: marked as estimated`);
}

/** The call's closing event, once the gateway has committed it. */
async function closingEvent(stack: GatewayStack, type: string, turnId: string): Promise<EventRow> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = readEvents(stack.files.db, type).find((e) => e.turn_id === turnId);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${type} for ${turnId}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * DECISIONS §4: the upstream timeout is "600 s total" (SVC_GATEWAY_UPSTREAM_TIMEOUT_MS): one call's attempts
 * together, backoff included, until the head of a stream or the whole body of an answer that is not one.
 * A hanging provider is one attempt answered 504 once that time is spent (not one timeout per retry), a
 * non-streaming body that trickles in without ever idling long enough for the idle timeout is cut at it,
 * so is a stream whose head came but whose first event did not, and a quick failure is still retried inside it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

const TOTAL_MS = 1_000;
const OPENAI_MODEL = 'openai:gpt-5-mini';
const ANTHROPIC_MODEL = 'anthropic:claude-haiku-4-5';

test('the upstream timeout bounds a call with all its attempts', { timeout: 60_000 }, async (t) => {
  const stack = await startGatewayStack({
    env: {
      SVC_GATEWAY_UPSTREAM_TIMEOUT_MS: String(TOTAL_MS),
      SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS: '5000',
      SVC_GATEWAY_MAX_RETRIES: '2',
    },
  });
  t.after(() => stack.stop());
  const { fake } = stack;
  t.beforeEach(() => fake.reset());
  t.afterEach(() => fake.setDefault(undefined));

  const failedCallOf = (turnId: string) => {
    const rows = readEvents(stack.files.db).filter((e) => e.turn_id === turnId);
    assert.equal(rows.filter((e) => e.type === 'llm.call_completed').length, 0, 'no completed call');
    const failed = rows.filter((e) => e.type === 'llm.call_failed');
    assert.equal(failed.length, 1, 'one llm.call_failed');
    return failed[0].payload;
  };

  await t.test(
    'a provider that never answers: one attempt, 504 upstream_timeout when the time is spent',
    async () => {
      fake.setDefault('hang');
      const err = await stack.openai.chat.completions
        .create({ model: OPENAI_MODEL, messages: [{ role: 'user', content: 'hi' }] })
        .then(() => assert.fail('the call succeeded'))
        .catch((e: unknown) => e);
      assert.ok(err instanceof OpenAI.APIError, `not an APIError: ${err}`);
      assert.equal(err.status, 504);
      assert.equal(err.code, 'upstream_timeout');
      assert.equal(err.headers?.get('x-should-retry'), 'false');
      // a timeout per attempt would have retried the hang twice: one attempt is what shows the total bound
      // (no wall-clock bound here: a loaded machine answers late, and tests assert no timings)
      assert.equal(fake.requests.length, 1, 'no attempt after the total time was spent');
      const failed = failedCallOf(err.headers!.get('svc-request-id')!);
      assert.equal(failed.error_class, 'timeout');
      assert.equal(failed.attempts, 1);
    },
  );

  await t.test(
    'a non-streaming body that trickles in past the total time is cut: 504, not a late 200',
    async () => {
      // four body pieces 400 ms apart: no gap near the 5 s idle timeout, 1.6 s in all
      fake.setDefault('drip=400');
      const err = await stack.anthropic.messages
        .create({ model: ANTHROPIC_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
        .then(() => assert.fail('the call succeeded'))
        .catch((e: unknown) => e);
      assert.ok(err instanceof Anthropic.APIError, `not an APIError: ${err}`);
      assert.equal(err.status, 504);
      assert.equal((err.error as { error?: { type?: string } }).error?.type, 'timeout_error');
      assert.equal(fake.requests.length, 1);
      const failed = failedCallOf(err.headers!.get('svc-request-id')!);
      assert.equal(failed.error_class, 'timeout');
      assert.equal(failed.code, 'upstream_timeout');
    },
  );

  await t.test(
    'a stream whose head comes but whose first event does not by the total time is 504, not a 200',
    async () => {
      // the head at once, then silence: shorter than the idle timeout, longer than the call's total time
      fake.setDefault('stall-after=0');
      const err = await stack.anthropic.messages
        .create({
          model: OPENAI_MODEL,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'hi' }],
          stream: true,
        })
        .then(() => assert.fail('the stream was answered 200'))
        .catch((e: unknown) => e);
      assert.ok(err instanceof Anthropic.APIError, `not an APIError: ${err}`);
      assert.equal(err.status, 504);
      assert.equal((err.error as { error?: { type?: string } }).error?.type, 'timeout_error');
      assert.equal(err.headers?.get('x-should-retry'), 'false');
      assert.equal(fake.requests.length, 1, 'no attempt after the total time was spent');
      const failed = failedCallOf(err.headers!.get('svc-request-id')!);
      assert.equal(failed.error_class, 'timeout');
      assert.equal(failed.code, 'upstream_timeout');
    },
  );

  await t.test('a quick failure is still retried within the total time', async () => {
    fake.script(['error=500']);
    const { response } = await stack.openai.chat.completions
      .create({ model: OPENAI_MODEL, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(response.status, 200);
    assert.equal(fake.requests.length, 2, 'the 500 and the retry');
  });

  await t.test('a stream whose head comes in time streams on past the total time', async () => {
    // the head and first frame at once, then a frame every 300 ms: the idle timeout governs from there
    fake.setDefault('drip=300');
    const stream = await stack.openai.chat.completions.create({
      model: OPENAI_MODEL,
      messages: [{ role: 'user', content: 'a longer answer please' }],
      stream: true,
    });
    const started = performance.now();
    let chunks = 0;
    for await (const _ of stream) chunks++;
    assert.ok(chunks > 2, 'the whole stream arrived');
    assert.ok(performance.now() - started > TOTAL_MS, 'it lasted longer than the total time');
  });

  await t.test('a stream that opens with keep-alive comments and starts in time streams on', async () => {
    // OpenRouter's comments for 300 ms, its first event within the total time, then 12 frames 100 ms apart
    fake.setDefault('processing=2;drip=100;long=12000');
    const stream = await stack.openai.chat.completions.create({
      model: 'openrouter:google/gemini-2.5-flash',
      messages: [{ role: 'user', content: 'a longer answer please' }],
      stream: true,
    });
    const started = performance.now();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.ok(text.length >= 12_000, `the whole answer arrived: ${text.length}`);
    assert.ok(performance.now() - started > TOTAL_MS, 'it lasted longer than the total time');
  });
});

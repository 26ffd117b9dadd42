/**
 * Retries do not multiply (issue 17 item 7, wire-formats §4): the official SDKs at their default two retries
 * obey `x-should-retry`, so a 502/504 the gateway answers after its own retries, and a provider spend-limit
 * answer, reach the upstream exactly (1 + gateway retries) times, and once; a 429 or 503 keeps
 * `x-should-retry: true` with a `retry-after` in seconds. OpenRouter's error inside a 200 body counts as the
 * HTTP answer of its status. Upstream calls are counted at the fake provider.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { billedInputTokens } from '../fake-provider/billing.ts';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';

const GATEWAY_RETRIES = 2;
const OPENAI_MODEL = 'openai:gpt-5-mini';
const ANTHROPIC_MODEL = 'anthropic:claude-haiku-4-5';
const OPENROUTER_MODEL = 'openrouter:google/gemini-2.5-flash';

type Shape = 'anthropic' | 'openai';

interface Failure {
  status: number;
  error: Record<string, unknown>;
  headers: Headers;
}

/** One call through an official SDK left at its default retries; resolves with the error it throws. */
async function failingCall(
  stack: GatewayStack,
  shape: Shape,
  model: string,
  sdkRetries?: number,
  stream = false,
) {
  const messages = [{ role: 'user' as const, content: 'hi' }];
  const retries = sdkRetries === undefined ? {} : { maxRetries: sdkRetries };
  try {
    if (shape === 'anthropic') {
      const client = new Anthropic({
        apiKey: stack.token,
        baseURL: stack.gw.url,
        logLevel: 'off',
        ...retries,
      });
      await client.messages.create({ model, max_tokens: 64, messages, stream });
    } else {
      const client = new OpenAI({
        apiKey: stack.token,
        baseURL: `${stack.gw.url}/v1`,
        logLevel: 'off',
        ...retries,
      });
      await client.chat.completions.create({ model, messages, stream });
    }
  } catch (err) {
    assert.ok(err instanceof Anthropic.APIError || err instanceof OpenAI.APIError, `not an APIError: ${err}`);
    const body = err.error as { error?: Record<string, unknown> } & Record<string, unknown>;
    return {
      status: err.status as number,
      error: shape === 'anthropic' ? body.error! : body,
      headers: err.headers!,
    } satisfies Failure;
  }
  assert.fail('the call succeeded');
}

test('the SDKs at default retries do not multiply the gateway retries', { timeout: 120_000 }, async (t) => {
  const stack = await startGatewayStack({
    env: {
      SVC_GATEWAY_MAX_RETRIES: String(GATEWAY_RETRIES),
      SVC_GATEWAY_UPSTREAM_TIMEOUT_MS: '2000',
    },
  });
  t.after(() => stack.stop());
  const { fake } = stack;
  t.beforeEach(() => fake.reset());
  t.afterEach(() => fake.setDefault(undefined));

  const exhausted = [
    {
      shape: 'openai',
      model: OPENAI_MODEL,
      fault: 'error=500',
      status: 502,
      code: 'upstream_error',
      calls: 1 + GATEWAY_RETRIES,
    },
    {
      shape: 'anthropic',
      model: ANTHROPIC_MODEL,
      fault: 'error=500',
      status: 502,
      code: 'upstream_error',
      calls: 1 + GATEWAY_RETRIES,
    },
    {
      shape: 'anthropic',
      model: OPENAI_MODEL,
      fault: 'error=502',
      status: 502,
      code: 'upstream_error',
      calls: 1 + GATEWAY_RETRIES,
    },
    // OpenRouter's error inside a 200 body is the provider's answer of that status: retried, then the same 502
    {
      shape: 'anthropic',
      model: OPENROUTER_MODEL,
      fault: 'error-in-200=502',
      status: 502,
      code: 'upstream_error',
      calls: 1 + GATEWAY_RETRIES,
    },
    // a hang spends the call's whole time (SVC_GATEWAY_UPSTREAM_TIMEOUT_MS is a total): one attempt
    {
      shape: 'openai',
      model: ANTHROPIC_MODEL,
      fault: 'hang',
      status: 504,
      code: 'upstream_timeout',
      calls: 1,
    },
  ] as const;
  for (const row of exhausted) {
    await t.test(
      `an upstream ${row.fault} storm behind the ${row.shape} SDK is ${row.calls} upstream calls, answered ${row.status} x-should-retry false`,
      async () => {
        fake.setDefault(row.fault);
        const f = await failingCall(stack, row.shape, row.model);
        assert.equal(f.status, row.status);
        assert.equal(f.error.code, row.code);
        assert.equal(f.headers.get('x-should-retry'), 'false');
        assert.equal(fake.requests.length, row.calls, 'upstream calls for one user call');
      },
    );
  }

  const spendLimits = [
    { shape: 'openai', model: OPENAI_MODEL, upstreamStatus: 429, upstreamType: 'insufficient_quota' },
    { shape: 'anthropic', model: OPENAI_MODEL, upstreamStatus: 429, upstreamType: 'insufficient_quota' },
    { shape: 'anthropic', model: ANTHROPIC_MODEL, upstreamStatus: 402, upstreamType: 'billing_error' },
    { shape: 'openai', model: OPENROUTER_MODEL, upstreamStatus: 402, upstreamType: undefined },
  ] as const;
  for (const row of spendLimits) {
    await t.test(
      `the ${row.model} spend limit behind the ${row.shape} SDK is one upstream call, answered 502 upstream_auth_failed x-should-retry false`,
      async () => {
        fake.setDefault('spend-limit');
        const f = await failingCall(stack, row.shape, row.model);
        assert.equal(fake.requests.length, 1, 'neither the gateway nor the SDK retried');
        assert.equal(f.status, 502);
        assert.equal(f.error.code, 'upstream_auth_failed');
        assert.equal(f.headers.get('x-should-retry'), 'false');
        assert.match(String(f.error.message), /spend limit|credit/);
        const details = f.error.details as Record<string, unknown>;
        assert.equal(details.error_class, 'authentication');
        assert.equal(details.upstream_status, row.upstreamStatus);
        assert.equal(details.upstream_type, row.upstreamType);
        const failed = readEvents(stack.files.db, 'llm.call_failed').at(-1)!;
        assert.equal(failed.payload.error_class, 'authentication');
        assert.equal(failed.payload.attempts, 1);
      },
    );
  }

  const retryable = [
    { shape: 'openai', model: OPENAI_MODEL, fault: 'error=429', status: 429, hint: undefined },
    {
      shape: 'anthropic',
      model: ANTHROPIC_MODEL,
      fault: 'error=429;retry-after=45',
      status: 429,
      hint: '45',
    },
    { shape: 'anthropic', model: ANTHROPIC_MODEL, fault: 'error=529', status: 503, hint: undefined },
    { shape: 'openai', model: OPENAI_MODEL, fault: 'error=503', status: 503, hint: undefined },
    { shape: 'openai', model: OPENROUTER_MODEL, fault: 'error-in-200=429', status: 429, hint: undefined },
    // streaming, the error is the 200's first event: the same answer as the HTTP 429's
    {
      shape: 'openai',
      model: OPENROUTER_MODEL,
      fault: 'error-in-200=429',
      status: 429,
      hint: undefined,
      stream: true,
    },
  ] as const;
  for (const row of retryable) {
    await t.test(
      `an upstream ${row.fault}${'stream' in row ? ' (streaming)' : ''} is answered ${row.status} with x-should-retry true and retry-after in seconds`,
      async () => {
        fake.setDefault(row.fault);
        const f = await failingCall(stack, row.shape, row.model, 0, 'stream' in row);
        assert.equal(f.status, row.status);
        assert.equal(f.headers.get('x-should-retry'), 'true');
        const after = f.headers.get('retry-after');
        assert.match(after ?? '', /^[1-9][0-9]*$/, 'retry-after is a whole number of seconds');
        if (row.hint) assert.equal(after, row.hint, "the provider's hint is forwarded");
        const ms = Number(f.headers.get('retry-after-ms'));
        assert.ok(ms > 0 && Math.ceil(ms / 1000) === Number(after), 'retry-after-ms agrees with retry-after');
        if (row.fault.startsWith('error-in-200=')) {
          // retried and recorded as the provider's HTTP 429 would be
          assert.equal(fake.requests.length, 1 + GATEWAY_RETRIES, 'the gateway retried it');
          const failed = readEvents(stack.files.db, 'llm.call_failed').at(-1)!;
          assert.equal(failed.payload.error_class, 'rate_limit');
          assert.equal(failed.payload.code, 'upstream_rate_limited');
          assert.equal(failed.payload.status, 429);
          assert.equal(failed.payload.attempts, 1 + GATEWAY_RETRIES);
          if ('stream' in row) {
            // each attempt's error chunk stated the prompt it read: all of them are billed, as stated
            const prompt = billedInputTokens('openai', fake.requests[0]!.body as Record<string, unknown>);
            assert.equal(failed.payload.input_tokens, (1 + GATEWAY_RETRIES) * prompt);
            assert.ok(Number(failed.payload.cost_usd) > 0, 'priced');
            assert.equal(failed.payload.usage_estimated, undefined, 'as stated, not estimated');
            // and the cost OpenRouter stated for each (the fake's FAILED_GENERATION_COST), summed exactly
            assert.equal(failed.payload.upstream_cost_usd, '0.0000375');
          }
        }
      },
    );
  }

  await t.test(
    "OpenRouter's 402 as a stream's first event is its credits' 502, recorded with the status 402",
    async () => {
      fake.setDefault('error-in-200=402');
      const f = await failingCall(stack, 'openai', OPENROUTER_MODEL, 0, true);
      assert.equal(f.status, 502);
      assert.equal(f.error.code, 'upstream_auth_failed');
      assert.equal(f.headers.get('x-should-retry'), 'false');
      assert.match(String(f.error.message), /credit/);
      assert.equal((f.error.details as Record<string, unknown>).upstream_status, 402);
      assert.equal(fake.requests.length, 1, 'not retried');
      const failed = readEvents(stack.files.db, 'llm.call_failed').at(-1)!;
      assert.equal(failed.payload.error_class, 'authentication');
      assert.equal(failed.payload.status, 402);
      const prompt = billedInputTokens('openai', fake.requests[0]!.body as Record<string, unknown>);
      assert.equal(failed.payload.input_tokens, prompt, 'the usage its error chunk states');
    },
  );

  await t.test(
    "OpenRouter's error inside a 200 to a Responses call is retried, and the retry answers",
    async () => {
      fake.script(['error-in-200=503']);
      const { response } = await stack.openai.responses
        .create({ model: OPENROUTER_MODEL, input: 'hi' })
        .withResponse();
      assert.equal(response.status, 200);
      assert.equal(fake.requests.length, 2, 'the 200 holding the error, then the retry');
      const turnId = response.headers.get('svc-request-id');
      const completed = readEvents(stack.files.db, 'llm.call_completed').find((e) => e.turn_id === turnId)!;
      assert.equal(completed.payload.attempts, 2);
    },
  );

  await t.test(
    'a Responses 200 whose response failed is that failure, retried as its stream would be, its usage billed',
    async () => {
      fake.script(['error-in-200=500']);
      const { data, response } = await stack.openai.responses
        .create({ model: OPENAI_MODEL, input: 'hi' })
        .withResponse();
      assert.equal(data.status, 'completed');
      assert.equal(fake.requests.length, 2, 'the failed response, then the retry');
      const turnId = response.headers.get('svc-request-id');
      const completed = readEvents(stack.files.db, 'llm.call_completed').find((e) => e.turn_id === turnId)!;
      assert.equal(completed.payload.attempts, 2);
      // the failed attempt read the same prompt, and its response said so
      assert.equal(completed.payload.input_tokens, 2 * data.usage!.input_tokens);

      fake.reset();
      fake.setDefault('error-in-200=503');
      const failed = await stack.openai.responses.create({ model: OPENAI_MODEL, input: 'hi' }).then(
        () => assert.fail('a failed response answered as a success'),
        (err: InstanceType<typeof OpenAI.APIError>) => err,
      );
      assert.equal(failed.status, 503);
      assert.equal((failed.error as Record<string, unknown>).code, 'upstream_overloaded');
      const turn = failed.headers!.get('svc-request-id');
      assert.equal(
        readEvents(stack.files.db, 'llm.call_completed').find((e) => e.turn_id === turn),
        undefined,
      );
      const event = readEvents(stack.files.db, 'llm.call_failed').find((e) => e.turn_id === turn)!;
      assert.equal(event.payload.error_class, 'overloaded');
      // retried as far as the global retry budget this file has spent allows; every attempt's usage billed
      const attempts = fake.requests.length;
      assert.equal(event.payload.attempts, attempts);
      assert.equal(event.payload.input_tokens, attempts * data.usage!.input_tokens);
    },
  );
});

/**
 * A second SIGTERM/SIGINT while `svc gateway` drains (an operator's second Ctrl-C) cuts the in-flight
 * requests off at once but still ends like a graceful stop: "gateway stopped" is logged, exit 0. It used to
 * fall through to Node's default action: the process died by the signal and flushed nothing.
 *
 * A request whose answer has not begun (a non-streamed call waiting for its provider, a stream whose upstream
 * has not replied yet), in each inbound shape, same wire and translated, is answered 503
 * `service_shutting_down` in its own error shape with `x-should-retry: true` and `retry-after`, which the
 * official SDKs retry (behind a load balancer: on another replica); its events (llm.call_failed cancelled,
 * turn.completed 503) are committed before the exit. Its connection used to be closed with no answer. So is
 * a token count (`POST /v1/messages/count_tokens`) waiting for the provider's count, which writes no event.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readEvents } from '../helpers/gateway-keys.ts';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';

async function waitFor(what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

type Shape = 'messages' | 'chat' | 'responses';

/** The model served on the shape's own wire, and one on another provider's (translated). */
const MODELS: Record<Shape, { same: string; translated: string }> = {
  messages: { same: 'anthropic:claude-haiku-4-5', translated: 'openai:gpt-5-mini' },
  chat: { same: 'openai:gpt-5-mini', translated: 'anthropic:claude-haiku-4-5' },
  responses: { same: 'openai:gpt-5-mini', translated: 'anthropic:claude-haiku-4-5' },
};

/** A request through the shape's official SDK whose upstream never answers; resolves with the error it ended in. */
function hanging(stack: GatewayStack, shape: Shape, model: string, stream: boolean): Promise<unknown> {
  const content = '[[fake:hang]]';
  const sent =
    shape === 'messages'
      ? stack.anthropic.messages.create({
          model,
          max_tokens: 64,
          stream,
          messages: [{ role: 'user', content }],
        })
      : shape === 'chat'
        ? stack.openai.chat.completions.create({ model, stream, messages: [{ role: 'user', content }] })
        : stack.openai.responses.create({ model, stream, input: content });
  return (sent as Promise<unknown>).then(
    () => new Error('answered'),
    (err: unknown) => err,
  );
}

for (const [first, second, same] of [
  ['SIGTERM', 'SIGINT', { stream: false }],
  ['SIGINT', 'SIGINT', { stream: true }],
] as const) {
  test(`${second} after ${first}: requests whose answer has not begun get 503 service_shutting_down, their trace is flushed, exit 0`, {
    timeout: 60_000,
  }, async (t) => {
    const stack = await startGatewayStack();
    t.after(() => stack.stop());
    const { gw, fake } = stack;

    // each shape same wire (streamed in one case, not in the other) and translated (the other way round)
    const shapes = Object.keys(MODELS) as Shape[];
    const cases = shapes.flatMap((shape) => [
      { shape, model: MODELS[shape].same, stream: same.stream },
      { shape, model: MODELS[shape].translated, stream: !same.stream },
    ]);
    const ended = cases.map((c) => hanging(stack, c.shape, c.model, c.stream));
    // and a token count the provider never answers
    const count = stack.anthropic.messages
      .countTokens({ model: MODELS.messages.same, messages: [{ role: 'user', content: '[[fake:hang]]' }] })
      .then(
        () => new Error('answered'),
        (err: unknown) => err,
      );
    await waitFor('the upstream requests', () => fake.requests.length === cases.length + 1);

    gw.child.kill(first);
    await waitFor('the drain to start', () => gw.output().stderr.includes('gateway stopping'));
    const exit = await gw.stop(second);

    assert.equal(exit, 0, `exit ${exit}, signal ${gw.child.signalCode}\n${gw.output().stderr}`);
    assert.match(gw.output().stderr, /second stop signal; cutting off the in-flight requests now/);
    assert.match(gw.output().stderr, /gateway stopped/);
    // the log says who ended the requests: the stop, not the client
    assert.match(gw.output().stderr, /"msg":"request cut off by the stop before its answer"/);
    assert.doesNotMatch(gw.output().stderr, /client disconnected/);
    assert.ok(
      fake.requests.every((r) => r.closedEarlyAt !== undefined),
      'every upstream call was cut',
    );

    const counted = await count;
    assert.ok(counted instanceof Anthropic.APIError, `count_tokens: ${String(counted)}`);
    assert.equal(counted.status, 503, `count_tokens: ${String(counted)}`);
    const { type, code } = (counted.error as { error: { type: string; code: string } }).error;
    assert.deepEqual([type, code], ['overloaded_error', 'service_shutting_down'], 'count_tokens');
    assert.equal(counted.headers?.get('x-should-retry'), 'true', 'count_tokens');
    assert.equal(counted.headers?.get('retry-after'), '1', 'count_tokens');

    const events = readEvents(stack.files.db);
    for (const [i, c] of cases.entries()) {
      const what = `${c.shape} ${c.model} stream=${c.stream}`;
      const err = await ended[i];
      // the SDK raises the gateway's 503 in the shape's own error body (not a dropped connection), and would
      // retry it: x-should-retry true, retry-after
      assert.equal((err as { status?: number }).status, 503, `${what}: ${String(err)}`);
      if (c.shape === 'messages') {
        assert.ok(err instanceof Anthropic.APIError, `${what}: ${String(err)}`);
        const { type, code } = (err.error as { error: { type: string; code: string } }).error;
        assert.deepEqual([type, code], ['overloaded_error', 'service_shutting_down'], what);
      } else {
        assert.ok(err instanceof OpenAI.APIError, `${what}: ${String(err)}`);
        assert.equal(err.code, 'service_shutting_down', what);
      }
      assert.equal(err.headers?.get('x-should-retry'), 'true', what);
      assert.equal(err.headers?.get('retry-after'), '1', what);
      assert.equal(err.headers?.get('connection'), 'close', what);

      // its call closed once, as cancelled by the gateway, and its turn names the answer the client got
      const closing = events.filter(
        (e) => e.turn_id === err.requestID && e.type !== 'route.decided' && e.type !== 'llm.call_started',
      );
      assert.deepEqual(
        closing.map((e) => [
          e.type,
          e.payload.error_class ?? e.payload.status,
          e.payload.code ?? e.payload.error_code,
        ]),
        [
          ['llm.call_failed', 'cancelled', 'service_shutting_down'],
          ['turn.completed', 503, 'service_shutting_down'],
        ],
        what,
      );
    }
  });
}

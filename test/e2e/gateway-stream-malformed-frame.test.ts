/**
 * An upstream stream frame that is not valid JSON (after a 200): the client's stream still ends with an
 * error frame in its own shape (the malformed frame is not an upstream error frame to pass through, and
 * on the same wire it is not forwarded either, so the SDK raises the error frame, not a SyntaxError), the
 * upstream is not read further, and the call closes with one llm.call_failed of class `server_error` (as
 * a non-streaming body that is not JSON) and one turn.completed, on the same wire and across wires.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

const CASES = [
  { shape: 'anthropic', model: 'anthropic:claude-haiku-4-5' },
  { shape: 'anthropic', model: 'openai:gpt-5-mini' },
  { shape: 'openai', model: 'openai:gpt-5-mini' },
  { shape: 'openai', model: 'anthropic:claude-haiku-4-5' },
] as const;

test('a malformed upstream frame mid-stream ends the client stream with an error frame', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  for (const { shape, model } of CASES) {
    await t.test(`${shape} client, ${model} upstream`, async () => {
      stack.fake.reset();
      stack.fake.script(['malformed=2']);
      const res = await fetch(
        `${stack.gw.url}${shape === 'anthropic' ? '/v1/messages' : '/v1/chat/completions'}`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${stack.token}`,
            'anthropic-version': '2023-06-01',
            'content-type': 'application/json',
          },
          body: JSON.stringify({
            model,
            max_tokens: 64,
            stream: true,
            messages: [{ role: 'user', content: 'hi' }],
          }),
        },
      );
      assert.equal(res.status, 200);
      const frames = (await res.text()).trim().split('\n\n');
      // the frame the gateway could not read never reaches the client: an SDK would fail on its JSON
      // (SyntaxError) before it saw the error frame that follows
      for (const frame of frames) {
        const data = frame.slice(frame.indexOf('data: ') + 6);
        if (data !== '[DONE]') assert.doesNotThrow(() => JSON.parse(data), `unreadable frame: ${frame}`);
      }
      const last = frames.at(-1)!;
      const data = JSON.parse(last.slice(last.indexOf('data: ') + 6));
      if (shape === 'anthropic') {
        assert.match(last, /^event: error\ndata: /);
        assert.equal(data.type, 'error');
      }
      assert.equal(data.error.code, 'upstream_error', `last frame: ${last}`);
      const turnId = res.headers.get('svc-request-id');
      const events = readEvents(stack.files.db).filter((e) => e.turn_id === turnId);
      const failed = events.filter((e) => e.type === 'llm.call_failed');
      assert.equal(failed.length, 1, 'one llm.call_failed');
      assert.equal(failed[0].payload.error_class, 'server_error');
      assert.equal(events.filter((e) => e.type === 'llm.call_completed').length, 0);
      assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1);
    });
  }
});

test('a 200 whose body is not JSON answers 502 upstream_error in the client shape and closes the call once', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack({ env: { SVC_GATEWAY_MAX_RETRIES: '0' } });
  t.after(() => stack.stop());
  for (const { shape, model } of CASES) {
    await t.test(`${shape} client, ${model} upstream`, async () => {
      stack.fake.reset();
      stack.fake.script(['malformed']);
      const res = await fetch(
        `${stack.gw.url}${shape === 'anthropic' ? '/v1/messages' : '/v1/chat/completions'}`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${stack.token}`,
            'anthropic-version': '2023-06-01',
            'content-type': 'application/json',
          },
          body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }),
        },
      );
      assert.equal(res.status, 502);
      const body = (await res.json()) as { type?: string; error: { code: string; message: string } };
      assert.equal(body.error.code, 'upstream_error');
      if (shape === 'anthropic') assert.equal(body.type, 'error');
      // V8's reason, not its excerpt of the body (`..."malformed": oops}" is not valid JSON`): an answer
      // holds the conversation's text, which reaches no error message
      assert.match(body.error.message, /not valid JSON: Unexpected token 'o'$/, body.error.message);
      const turnId = res.headers.get('svc-request-id');
      const events = readEvents(stack.files.db).filter((e) => e.turn_id === turnId);
      const failed = events.filter((e) => e.type === 'llm.call_failed');
      assert.equal(failed.length, 1);
      assert.equal(failed[0].payload.error_class, 'server_error');
      assert.equal(failed[0].payload.message, body.error.message);
      assert.equal(events.filter((e) => e.type === 'llm.call_completed').length, 0);
      assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1);
    });
  }
});

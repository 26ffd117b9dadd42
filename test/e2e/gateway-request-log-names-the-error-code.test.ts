/**
 * The gateway's request log line (README §Gateway: one JSON line per request on stdout) names the error
 * code of a failed answer (`error_code`, the `code` its error body carries: `upstream_rate_limited`,
 * `quota_exceeded`, `invalid_token`…) besides its status, and `null` for an answer that did not fail; a
 * stream that fails after its 200 keeps status 200 and names its failure. It never carries the prompt or
 * the token.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type GatewayStack, startGatewayStack } from '../helpers/gateway-stack.ts';
import { requestLogLine } from '../helpers/svc.ts';

const MODEL = 'openai:gpt-5-mini';

async function chat(stack: GatewayStack, token: string, content: string): Promise<Response> {
  return fetch(`${stack.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content }] }),
  });
}

test('the request log line carries the error code of a failed answer or stream, null otherwise', {
  timeout: 60_000,
}, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const capped = await stack.issue(['--daily-cap-usd', '0.000001']);

  const cases = [
    { token: stack.token, prompt: 'say hi', status: 200, code: null },
    // a retry-after above 30 s is not waited for: 429 at once
    {
      token: stack.token,
      prompt: 'secret [[fake:error=429;retry-after=60]]',
      status: 429,
      code: 'upstream_rate_limited',
    },
    { token: capped.token, prompt: 'secret over the cap', status: 429, code: 'quota_exceeded' },
    { token: 'gw_not-a-real-token', prompt: 'secret', status: 401, code: 'invalid_token' },
  ];
  for (const c of cases) {
    const res = await chat(stack, c.token, c.prompt);
    assert.equal(res.status, c.status, await res.clone().text());
    const body = (await res.json()) as { error?: { code: string } };
    assert.equal(body.error?.code ?? null, c.code, 'the body carries the code the log names');
    const requestId = res.headers.get('svc-request-id');
    assert.ok(requestId);
    const line = await requestLogLine(stack.gw, requestId);
    assert.equal(line.status, c.status, JSON.stringify(line));
    assert.equal(line.error_code, c.code, JSON.stringify(line));
  }

  // a stream whose upstream resets after its 200: the error reaches the client as a frame in its shape, and
  // the log line, written when the stream ends, names its code (same wire and translated alike)
  for (const c of [
    { model: MODEL, prompt: 'secret [[fake:reset-after=3]]', code: 'upstream_error' },
    { model: 'anthropic:claude-haiku-4-5', prompt: 'secret [[fake:reset-after=3]]', code: 'upstream_error' },
    { model: MODEL, prompt: 'secret, a stream that ends well', code: null },
  ]) {
    const res = await fetch(`${stack.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: c.model, stream: true, messages: [{ role: 'user', content: c.prompt }] }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    if (c.code) assert.match(text, new RegExp(`"code":"${c.code}"`), 'the stream ends with its error frame');
    else assert.match(text, /data: \[DONE\]/);
    const requestId = res.headers.get('svc-request-id');
    assert.ok(requestId);
    const line = await requestLogLine(stack.gw, requestId);
    assert.equal(line.status, 200, JSON.stringify(line));
    assert.equal(line.error_code, c.code, JSON.stringify(line));
  }
  const { stdout } = stack.gw.output();
  assert.doesNotMatch(stdout, /secret|gw_not-a-real-token/, 'no prompt and no token in the request log');
});

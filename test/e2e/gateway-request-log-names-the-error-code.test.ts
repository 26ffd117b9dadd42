/**
 * The gateway's request log line (README §Gateway: one JSON line per request on stdout) names the error
 * code of a failed answer (`error_code`, the `code` its error body carries: `upstream_rate_limited`,
 * `quota_exceeded`, `invalid_token`…) besides its status, and `null` for an answer that did not fail; a
 * stream that fails after its 200 keeps status 200 and names its failure. It never carries the prompt or
 * the token. A provider's refusal of the gateway's key that arrives inside a 200 stream (OpenAI quotes a
 * masked fragment of the key) is told in the gateway's words, in the answer, the events and the logs alike.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
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

let stack: GatewayStack;
before(async () => {
  stack = await startGatewayStack();
});
after(() => stack.stop());

test('the request log line carries the error code of a failed answer or stream, null otherwise', {
  timeout: 60_000,
}, async () => {
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

test("a provider refusing the gateway's key inside a 200 stream: its words about the key reach no client, event or log", {
  timeout: 30_000,
}, async () => {
  // the fake's keys are sk-ant-test, sk-openai-test and sk-or-test; each refusal quotes a masked fragment
  const cases = [
    // OpenAI's in-stream error {code: invalid_api_key}, on the same wire
    { path: '/v1/chat/completions', model: MODEL, fault: 'stream-error=401', quoted: 'sk-opena****test' },
    // OpenRouter's error chunk {code: 401}, translated to Messages
    {
      path: '/v1/messages',
      model: 'openrouter:openai/gpt-4o-mini',
      fault: 'stream-error=401',
      quoted: 'sk-or-****test',
    },
    // Anthropic's authentication_error event as the stream's first event, translated to Chat Completions
    {
      path: '/v1/chat/completions',
      model: 'anthropic:claude-haiku-4-5',
      fault: 'stream-error=401;stream-error-after=0',
      quoted: 'sk-ant-****test',
    },
  ];
  for (const c of cases) {
    const content = `[[fake:${c.fault};message=Incorrect API key provided: ${c.quoted}. Find your key at x]]`;
    const res = await fetch(`${stack.gw.url}${c.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: c.model,
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content }],
      }),
    });
    const answer = await res.text();
    assert.match(answer, /upstream_auth_failed/, answer);
    assert.match(answer, /the provider refused the gateway's provider key/, answer);
    assert.doesNotMatch(answer, /\*\*\*\*|Incorrect API key/, `${c.model}: the answer quotes no key`);
    const turnId = res.headers.get('svc-request-id');
    assert.ok(turnId);
    await requestLogLine(stack.gw, turnId);
    let failed = readEvents(stack.files.db, 'llm.call_failed').find((e) => e.turn_id === turnId);
    while (!failed) {
      await new Promise((r) => setTimeout(r, 20)); // the trace writer commits in batches
      failed = readEvents(stack.files.db, 'llm.call_failed').find((e) => e.turn_id === turnId);
    }
    assert.equal(failed.payload.error_class, 'authentication');
    assert.doesNotMatch(
      JSON.stringify(failed.payload),
      /\*\*\*\*|Incorrect API key/,
      `${c.model}: the event`,
    );
  }
  const { stdout, stderr } = stack.gw.output();
  assert.doesNotMatch(stdout + stderr, /\*\*\*\*|Incorrect API key/, 'the logs quote no key');
});

/**
 * The fake provider sends the fields the real APIs always send: an Anthropic message's `container` (null
 * without a code execution container, wire-formats §1.7) and OpenAI's `obfuscation` padding on streamed
 * deltas, which only `stream_options.include_obfuscation: false` turns off (wire-formats §2.7).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createFakeProvider } from '../../fake-provider/server.ts';

async function post(path: string, body: Record<string, unknown>): Promise<Response> {
  const fake = createFakeProvider();
  const res = await fake.fetch(`http://fake${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer k',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  return res;
}

/** The JSON data of each SSE event (not `[DONE]`). */
async function events(res: Response): Promise<Record<string, any>[]> {
  return (await res.text())
    .split('\n\n')
    .flatMap((f) => f.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]'))
    .map((l) => JSON.parse(l.slice(6)));
}

test('an Anthropic message says container: null, streaming (message_start) and not', async () => {
  const body = { model: 'claude-x', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };
  const message = (await (await post('/v1/messages', body)).json()) as Record<string, unknown>;
  assert.equal(message.container, null);
  assert.ok('container' in message);
  const [start] = await events(await post('/v1/messages', { ...body, stream: true }));
  assert.equal(start.type, 'message_start');
  assert.ok('container' in start.message && start.message.container === null);
});

test('OpenAI Chat chunks carry obfuscation padding unless include_obfuscation is false', async () => {
  const body = {
    model: 'gpt-x',
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'hi' }],
  };
  const chunks = await events(await post('/v1/chat/completions', body));
  const deltas = chunks.filter((c) => c.choices.length > 0);
  assert.ok(deltas.length > 2);
  for (const c of deltas) assert.equal(typeof c.obfuscation, 'string', JSON.stringify(c));
  const plain = await events(
    await post('/v1/chat/completions', {
      ...body,
      stream_options: { include_usage: true, include_obfuscation: false },
    }),
  );
  assert.ok(plain.every((c) => !('obfuscation' in c)));
  // OpenRouter does not pad
  const router = await events(await post('/api/v1/chat/completions', body));
  assert.ok(router.every((c) => !('obfuscation' in c)));
});

test('OpenAI Responses delta events carry obfuscation padding unless include_obfuscation is false', async () => {
  const body = {
    model: 'gpt-x',
    stream: true,
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }],
    input: 'hi [[fake:text=Checking now;tool_call]]',
  };
  const all = await events(await post('/v1/responses', body));
  const deltas = all.filter((e) => String(e.type).endsWith('.delta'));
  assert.deepEqual(
    [...new Set(deltas.map((e) => e.type))],
    ['response.output_text.delta', 'response.function_call_arguments.delta'],
  );
  for (const e of deltas) assert.equal(typeof e.obfuscation, 'string', JSON.stringify(e));
  assert.ok(
    all.filter((e) => !String(e.type).endsWith('.delta')).every((e) => !('obfuscation' in e)),
    'only delta events are padded',
  );
  const plain = await events(
    await post('/v1/responses', { ...body, stream_options: { include_obfuscation: false } }),
  );
  assert.ok(plain.every((e) => !('obfuscation' in e)));
});

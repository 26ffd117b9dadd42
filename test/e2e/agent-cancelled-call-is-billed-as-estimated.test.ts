/**
 * An agent turn cancelled while an OpenAI-wire model streams: OpenAI states usage only in its last chunk,
 * so the call ends with no count from the provider, which still bills the prompt it read and the words it
 * generated. The closing event carries the input estimate and the output counted from the deltas, priced
 * and marked `usage_estimated`, as the gateway records such calls; never $0.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { attach, type Frame } from '../helpers/ws-client.ts';

const fake = await startFakeProvider();
after(() => fake.close());

test('a turn cancelled mid-stream bills its OpenAI call on the input estimate and the words sent', async (t) => {
  const server = await startAgentServer(t, {
    env: { OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.openaiBaseUrl },
  });
  const created = await server.api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const sid = created.body.id;
  assert.equal(
    (await server.api('PATCH', `/sessions/${sid}`, { active_model: 'openai:gpt-5-mini' })).status,
    200,
  );
  const stream = await attach(server, sid);
  t.after(() => stream.close());
  stream.send({ type: 'subscribe', filter: 'preset:full', since: null, snapshot: false });
  await stream.next((f) => f.type === 'subscribe_ack');
  fake.script([{ text: 'one two three four five six seven eight nine ten eleven twelve', dripMs: 100 }]);
  const prompt = 'summarise the repository layout for me in a few words '.repeat(20);
  const turn = (
    await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: prompt }] })
  ).body.turn_id as string;
  const ofTurn = (type: string) => (f: Frame) =>
    f.type === 'event' && f.event.turn_id === turn && f.event.type === type;
  // a word has streamed (one frame per 100 ms), the rest of the answer has not
  await stream.next((f) => ofTurn('text.delta')(f) && f.event.payload.text.trim() !== '');
  assert.equal((await server.api('POST', `/sessions/${sid}/turns/${turn}/cancel`, {})).status, 202);
  const closing = (await stream.next((f) => ofTurn('llm.call_completed')(f) || ofTurn('llm.call_failed')(f)))
    .event;
  assert.equal(closing.type, 'llm.call_failed');
  const cut = (await stream.next(ofTurn('message.complete'))).event.payload;
  assert.equal(cut.stop_reason, 'cancelled', 'cancelled mid-answer');
  const p = closing.payload;
  assert.ok(Number(p.input_tokens) >= 200, `input from the request's estimate: ${p.input_tokens}`);
  assert.ok(Number(p.output_tokens) > 0, `output counted from the deltas: ${p.output_tokens}`);
  assert.ok(Number(p.cost_usd) > 0, `never $0: ${p.cost_usd}`);
  assert.equal(p.usage_estimated, true);
});

/**
 * An agent turn cancelled while an OpenAI-wire model streams: OpenAI states usage only in its last chunk,
 * so the call ends with no count from the provider, which still bills the prompt it read and the words it
 * generated. The closing event carries the input estimate and the output counted from the deltas, priced
 * and marked `usage_estimated`, as the gateway records such calls; never $0. A call that fails before its answer
 * began but that the provider billed all the same (OpenRouter's error chunk opening a 200 stream states the
 * prompt it read) counts in the turn's and the session's cost as on its llm.call_failed.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { attach, type Frame } from '../helpers/ws-client.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const server = await startAgentServer(
  { after },
  {
    env: {
      ...fakeProviderEnv(fake, ['openai', 'openrouter']),
    },
  },
);

test('a turn cancelled mid-stream bills its OpenAI call on the input estimate and the words sent', async (t) => {
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

test('a call that failed before its answer began but was billed counts in the turn and session cost', async (t) => {
  const created = await server.api('POST', '/sessions', {
    workspace_path: server.workspace,
    initial_active_model: 'openrouter:google/gemini-2.5-flash',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const sid = created.body.id;
  const stream = await attach(server, sid);
  t.after(() => stream.close());
  stream.send({ type: 'subscribe', filter: 'preset:full', since: null, snapshot: false });
  await stream.next((f) => f.type === 'subscribe_ack');
  // OpenRouter's 200 whose first event is the error chunk (a 400: not retried), stating the prompt it read
  const turn = (
    await server.api('POST', `/sessions/${sid}/turns`, {
      content: [{ type: 'text', text: 'hi [[fake:error-in-200=400]]' }],
    })
  ).body.turn_id as string;
  const ofTurn = (type: string) => (f: Frame) =>
    f.type === 'event' && f.event.turn_id === turn && f.event.type === type;
  const failed = (await stream.next(ofTurn('llm.call_failed'))).event.payload;
  const ended = (await stream.next(ofTurn('turn.completed'))).event.payload;
  assert.ok(Number(failed.cost_usd) > 0, `the provider's bill is on the call: ${failed.cost_usd}`);
  assert.equal(ended.status, 'failed');
  // before: 0.000000, the call's bill missing from the turn and the session
  assert.equal(ended.cost_usd, failed.cost_usd, 'the turn costs what its call was billed');
  const session = (await server.api('GET', `/sessions/${sid}`)).body;
  assert.equal(session.cost_so_far_usd, Number(failed.cost_usd), 'the session counts it too');
});

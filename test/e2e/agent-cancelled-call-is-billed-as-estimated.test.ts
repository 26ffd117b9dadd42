/**
 * An agent turn cancelled while an OpenAI-wire model streams: OpenAI states usage only in its last chunk,
 * so the call ends with no count from the provider, which still bills the prompt it read and the words it
 * generated. The closing event carries the input estimate and the output counted from the deltas, priced
 * and marked `usage_estimated`, as the gateway records such calls; never $0.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer } from '../helpers/agent-server.ts';

const fake = await startFakeProvider();
after(() => fake.close());

async function waitFor<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const found = await read();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function events(server: AgentServer, sid: string, types: string) {
  return (await server.api('GET', `/sessions/${sid}/events?types=${types}`)).body.events as Array<{
    type: string;
    turn_id: string;
    payload: Record<string, unknown>;
  }>;
}

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
  fake.script([{ text: 'one two three four five six seven eight nine ten eleven twelve', dripMs: 100 }]);
  const prompt = 'summarise the repository layout for me in a few words '.repeat(20);
  const turn = (
    await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: prompt }] })
  ).body.turn_id as string;
  await waitFor('the call to start', async () =>
    (await events(server, sid, 'llm.call_started')).find((e) => e.turn_id === turn),
  );
  await new Promise((r) => setTimeout(r, 600)); // a few words drip out (one frame per 100 ms)
  assert.equal((await server.api('POST', `/sessions/${sid}/turns/${turn}/cancel`, {})).status, 202);
  const closing = await waitFor('the call closing event', async () =>
    (await events(server, sid, 'llm.call_completed,llm.call_failed')).find((e) => e.turn_id === turn),
  );
  const p = closing.payload;
  assert.ok(Number(p.input_tokens) >= 200, `input from the request's estimate: ${p.input_tokens}`);
  assert.ok(Number(p.output_tokens) > 0, `output counted from the deltas: ${p.output_tokens}`);
  assert.ok(Number(p.cost_usd) > 0, `never $0: ${p.cost_usd}`);
  assert.equal(p.usage_estimated, true);
});

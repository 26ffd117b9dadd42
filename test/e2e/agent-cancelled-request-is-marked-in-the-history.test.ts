/**
 * spec 2: "A cancelled turn is never resumed; the next user message starts a fresh turn". The cancelled
 * turn's prompt stays in the conversation, but its partial answer is left out, so the model saw the old
 * request as unanswered (merged with the new one) and took it up again. The history now says it was
 * cancelled where the partial answer was. A turn that failed (a provider error on its first call, or on a
 * later one after its tools ran) likewise leaves its request unanswered: the history notes it ended
 * without an answer before the next prompt.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer } from '../helpers/agent-server.ts';

const fake = await startFakeProvider();
after(() => fake.close());

async function idle(server: AgentServer, sid: string) {
  for (let i = 0; i < 400; i++) {
    if ((await server.api('GET', `/sessions/${sid}`)).body.current_turn_id === null) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the turn never ended');
}

test('after a cancelled turn the model is told that request was cancelled, before the new one', async (t) => {
  const server = await startAgentServer(t, {
    env: fakeProviderEnv(fake, ['anthropic']),
  });
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  for (const [i, step] of [
    { hang: true },
    { toolUses: [{ name: 'run_command', input: { command: 'sleep 5' } }] },
  ].entries()) {
    fake.script([step]);
    const turn = (
      await server.api('POST', `/sessions/${sid}/turns`, {
        content: [{ type: 'text', text: `request ${i}` }],
      })
    ).body.turn_id;
    await new Promise((r) => setTimeout(r, 300)); // the call hangs / the confirmation waits
    assert.equal((await server.api('POST', `/sessions/${sid}/turns/${turn}/cancel`, {})).status, 202);
    await idle(server, sid);
  }
  fake.script([{ text: 'fresh answer' }]);
  await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'what is 2+2' }] });
  await idle(server, sid);
  const sent = fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: any }> };
  const texts = sent.messages.flatMap((m) =>
    (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content)
      .filter((b: { type: string }) => b.type === 'text')
      .map((b: { text: string }) => `${m.role}: ${b.text}`),
  );
  const marker = /^user: \[The user cancelled the request above before it was finished/;
  assert.equal(texts[0], 'user: request 0');
  assert.match(texts[1], marker);
  assert.equal(texts[2], 'user: request 1');
  assert.match(texts[3], marker);
  assert.equal(texts[4], 'user: what is 2+2');
  assert.equal(texts.length, 5, texts.join('\n'));
  // what the model was sent is valid: no tool_use of the cancelled turn without its result
  assert.equal(JSON.stringify(sent.messages).includes('tool_use'), false);
});

test('a turn a killed server left open is marked cancelled in the history as well, once recovered', async (t) => {
  const env = fakeProviderEnv(fake, ['anthropic']);
  const first = await startAgentServer(t, { env });
  const sid = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body.id;
  fake.script([{ toolUses: [{ name: 'write_file', input: { path: 'x.txt', content: 'x' } }] }]);
  await first.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'the lost request' }],
  });
  for (let i = 0; i < 400; i++) {
    const events = (await first.api('GET', `/sessions/${sid}/events?types=tool.confirmation_requested`)).body
      .events;
    if (events.length > 0) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(await first.svc.stop('SIGKILL'), null);
  const second = await startAgentServer(t, { env, home: first.home });
  fake.script([{ text: 'fresh answer' }]);
  await second.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'something else' }] });
  await idle(second, sid);
  const sent = JSON.stringify(fake.requests.at(-1)!.body);
  const lost = sent.indexOf('the lost request');
  const note = sent.indexOf('[The user cancelled the request above');
  assert.ok(lost >= 0 && note > lost && sent.indexOf('something else') > note, sent.slice(0, 2000));
});

test('after a failed turn the model is told that request ended without an answer, before the new one', async (t) => {
  const server = await startAgentServer(t, {
    env: {
      ...fakeProviderEnv(fake, ['anthropic']),
      SVC_GATEWAY_MAX_RETRIES: '0',
    },
  });
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const steps = [[{ error: 500 }], [{ toolUses: [{ name: 'list_files', input: {} }] }, { error: 500 }]];
  for (const [i, script] of steps.entries()) {
    fake.script(script);
    await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: `request ${i}` }] });
    await idle(server, sid);
  }
  const ends = (await server.api('GET', `/sessions/${sid}/events?types=turn.completed`)).body.events;
  assert.deepEqual(
    ends.map((e: { payload: { status: string } }) => e.payload.status),
    ['failed', 'failed'],
  );
  fake.script([{ text: 'fresh answer' }]);
  await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'what is 2+2' }] });
  await idle(server, sid);
  const sent = fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: any }> };
  const blocks = sent.messages.flatMap((m) =>
    (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content).map(
      (b: { type: string; text?: string }) => `${m.role}: ${b.type === 'text' ? b.text : b.type}`,
    ),
  );
  const note = 'user: [The request above ended without an answer; do not take it up again unless asked.]';
  assert.deepEqual(blocks, [
    'user: request 0',
    note,
    'user: request 1',
    'assistant: tool_use',
    'user: tool_result',
    note,
    'user: what is 2+2',
  ]);
});

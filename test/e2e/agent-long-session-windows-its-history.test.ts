/**
 * A session whose history outgrew every model's context used to be bricked: each later turn was refused 503
 * routing_failed context_too_small, since the whole history went to the model. Now the model's view leaves
 * out the oldest exchanges with one note, so the turn runs; the stored history keeps everything.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { LEFT_OUT_NOTE } from '#src/agent/sessions/history-window.ts';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer } from '../helpers/agent-server.ts';

const fake = await startFakeProvider();
after(() => fake.close());

// ~75,000 estimated tokens each (characters / 4): three of them are past the default model's 200,000
const bulky = (name: string) => `${name} ${'lorem ipsum '.repeat(25_000)}`;

async function turn(server: AgentServer, sid: string, text: string, reply: string) {
  fake.script([{ text: reply }]);
  const res = await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text }] });
  assert.equal(res.status, 202, JSON.stringify(res.body).slice(0, 400));
  for (let i = 0; i < 800; i++) {
    const events = (await server.api('GET', `/sessions/${sid}/events?limit=1000`)).body.events as Array<{
      type: string;
      turn_id: string;
      payload: { status?: string };
    }>;
    const end = events.find((e) => e.turn_id === res.body.turn_id && e.type === 'turn.completed');
    if (end) return end.payload;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the turn never ended');
}

test('a session past every model context keeps working: the oldest turns are left out of the model view', async (t) => {
  const server = await startAgentServer(t, {
    env: fakeProviderEnv(fake, ['anthropic']),
  });
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  assert.equal((await turn(server, sid, bulky('FIRST-PROMPT'), 'first answer')).status, 'completed');
  const firstSent = JSON.stringify(fake.requests.at(-1)!.body);
  assert.equal(firstSent.includes(LEFT_OUT_NOTE), false, 'a history that fits goes whole');
  assert.equal((await turn(server, sid, bulky('SECOND-PROMPT'), 'second answer')).status, 'completed');
  // the history is now past 200,000 estimated tokens: this turn used to be refused before it started
  const third = await turn(server, sid, bulky('THIRD-PROMPT'), 'third answer');
  assert.equal(third.status, 'completed');

  const sent = fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
  const view = JSON.stringify(sent.messages);
  assert.equal(view.includes('THIRD-PROMPT'), true);
  assert.equal(view.includes('FIRST-PROMPT'), false);
  assert.equal(view.includes('first answer'), false);
  assert.equal(view.split(LEFT_OUT_NOTE).length - 1, 1, 'one note where the older turns were');
  assert.equal(sent.messages[0].role, 'user');

  // only the model's view changed: the REST history has every message of the three turns
  const stored = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages as Array<{
    role: string;
    status: string;
    content: Array<{ text?: string }>;
  }>;
  assert.deepEqual(
    stored.map((m) => [m.role, m.status]),
    [
      ['user', 'completed'],
      ['assistant', 'completed'],
      ['user', 'completed'],
      ['assistant', 'completed'],
      ['user', 'completed'],
      ['assistant', 'completed'],
    ],
  );
  assert.equal(stored[0].content[0].text?.startsWith('FIRST-PROMPT'), true);
  assert.equal(JSON.stringify(stored).includes(LEFT_OUT_NOTE), false);
});

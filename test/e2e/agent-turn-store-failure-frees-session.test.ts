/**
 * A turn submission whose user message the store refuses (a full disk; here a trigger that aborts every
 * insert into messages, a real SQLite failure) is answered 500 and leaves the session as it was: it used to
 * keep the session claimed by a turn that never started, so every later turn got 409 turn_in_flight and the
 * turn could not be cancelled (404 turn_not_found) until the server restarted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer, withStore } from '../helpers/agent-server.ts';

test('a turn the store cannot record leaves its session free for the next one', async (t) => {
  const fake = await startFakeProvider();
  t.after(() => fake.close());
  const server = await startAgentServer(t, {
    env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: fake.anthropicBaseUrl },
  });
  const created = await server.api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(created.status, 201);
  const sid = created.body.id as string;
  const turn = (text: string) =>
    server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text }] });

  withStore(server.db, (db) =>
    db.exec(`CREATE TRIGGER refuse_messages BEFORE INSERT ON messages
             BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`),
  );
  const refused = await turn('hi');
  assert.equal(refused.status, 500, JSON.stringify(refused.body));
  const session = await server.api('GET', `/sessions/${sid}`);
  assert.equal(session.body.current_turn_id, null, 'no turn holds the session');
  assert.equal(session.body.current_turn_status, null);
  assert.equal(session.body.turn_count, 0);

  withStore(server.db, (db) => db.exec('DROP TRIGGER refuse_messages'));
  const next = await turn('hi again');
  assert.equal(next.status, 202, JSON.stringify(next.body));
});

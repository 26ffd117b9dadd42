/**
 * spec 2: a PATCH during a turn queues the swap for the turn boundary, and a confirmation answered with
 * scope `session` holds for the rest of the session. Both lived only in svc serve's memory: after kill -9
 * and a restart the session kept its old model and asked again for a tool the user had allowed. The queued
 * swap is now kept in the session row (applied when recovery ends the dead turn) and the session answers
 * are read back from the trace's tool.confirmation_resolved events. A session's workspace root (the real
 * path when it was created) was pinned in memory only, so a workspace folder swapped for a symlink while
 * the server was down moved the session there; it is now kept in the session row.
 */
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer, withStore } from '../helpers/agent-server.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const env = fakeProviderEnv(fake, ['anthropic']);

function types(server: AgentServer, turnId: string): string[] {
  return withStore(server.db, (db) =>
    (
      db.prepare('SELECT type FROM events WHERE turn_id = ? ORDER BY id').all(turnId) as { type: string }[]
    ).map((r) => r.type),
  );
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(check(), `${what}: not reached within 10 s`);
}

async function turn(server: AgentServer, sid: string, text: string): Promise<string> {
  const res = await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text }] });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body.turn_id;
}

test('a model swap queued during a turn the server was killed in applies after the restart', async (t) => {
  const first = await startAgentServer(t, { env });
  const sid = (
    await first.api('POST', '/sessions', {
      workspace_path: first.workspace,
      initial_active_model: 'anthropic:claude-sonnet-4-5',
    })
  ).body.id;
  fake.script([{ toolUses: [{ name: 'write_file', input: { path: 'a.txt', content: 'x' } }] }]);
  const running = await turn(first, sid, 'write it');
  await until(() => types(first, running).includes('tool.confirmation_requested'), 'the confirmation');
  const patched = await first.api('PATCH', `/sessions/${sid}`, {
    active_model: 'anthropic:claude-haiku-4-5',
  });
  assert.equal(patched.body.swap_queued, true, JSON.stringify(patched.body));
  const ws = join(first.home, 'swapped-ws');
  mkdirSync(ws);
  const other = (await first.api('POST', '/sessions', { workspace_path: ws })).body.id;
  assert.equal(await first.svc.stop('SIGKILL'), null);
  // while the server is down, the workspace folder is swapped for a symlink to another place
  const elsewhere = join(first.home, 'elsewhere');
  mkdirSync(elsewhere);
  writeFileSync(join(elsewhere, 'secret.txt'), 'not for the agent\n');
  renameSync(ws, `${ws}.orig`);
  symlinkSync(elsewhere, ws);
  const second = await startAgentServer(t, { env, home: first.home });
  const session = (await second.api('GET', `/sessions/${sid}`)).body;
  assert.equal(session.current_turn_id, null);
  assert.equal(session.active_model, 'anthropic:claude-haiku-4-5');

  fake.script([{ toolUses: [{ name: 'read_file', input: { path: 'secret.txt' } }] }, { text: 'done' }]);
  const read = await turn(second, other, 'read it');
  await until(() => types(second, read).includes('turn.completed'), 'the turn after the restart');
  const ends = withStore(second.db, (db) =>
    db
      .prepare(
        "SELECT type, json_extract(payload, '$.error_class') AS error_class FROM events WHERE turn_id = ? AND type IN ('tool.completed', 'tool.failed')",
      )
      .all(read),
  );
  assert.deepEqual(
    ends.map((e) => ({ ...e })),
    [{ type: 'tool.failed', error_class: 'outside_workspace' }],
  );
});

test('a tool allowed with scope session before a kill -9 runs without asking after the restart', async (t) => {
  const first = await startAgentServer(t, { env });
  const sid = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body.id;
  fake.script([
    { toolUses: [{ name: 'write_file', input: { path: 'a.txt', content: 'a' } }] },
    { text: 'written' },
  ]);
  const one = await turn(first, sid, 'write a');
  await until(() => types(first, one).includes('tool.confirmation_requested'), 'the confirmation');
  const asked = (await first.api('GET', `/sessions/${sid}/events?types=tool.confirmation_requested`)).body
    .events[0];
  const answer = await first.api(
    'POST',
    `/sessions/${sid}/turns/${one}/confirmations/${asked.payload.request_id}`,
    { decision: 'allow', scope: 'session' },
  );
  assert.equal(answer.body.applied, true, JSON.stringify(answer.body));
  await until(() => types(first, one).includes('turn.completed'), 'the first turn');
  assert.equal(await first.svc.stop('SIGKILL'), null);
  const second = await startAgentServer(t, { env, home: first.home });
  fake.script([
    { toolUses: [{ name: 'write_file', input: { path: 'b.txt', content: 'b' } }] },
    { text: 'written again' },
  ]);
  const two = await turn(second, sid, 'write b');
  await until(() => types(second, two).includes('turn.completed'), 'the second turn');
  const seen = types(second, two);
  assert.ok(!seen.includes('tool.confirmation_requested'), seen.join(', '));
  assert.ok(seen.includes('tool.completed'), seen.join(', '));
});

/**
 * README "Agent tools": a tool call the model got wrong is that call's failure (`tool.failed` with a class,
 * the model gets the reason and goes on), never the turn's. A run_command whose command held a NUL byte or
 * was over Linux's 128 KiB bound on one argument made spawn() throw, which ended the whole turn as
 * `failed` / `internal_error` with no tool.failed and the call's row left running. The input schemas say
 * `additionalProperties: false` but a misspelt field (`recursiv`) was silently ignored. A timed-out
 * command's output went into the `tool.failed` event's message, where `tool.completed` carries no output;
 * it now goes to the model only.
 */
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { attach } from '../helpers/ws-client.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const server = await startAgentServer({ after }, { env: fakeProviderEnv(fake, ['anthropic']) });
const isEvent = (type: string, turnId: string) => (f: { type: string; event?: any }) =>
  f.type === 'event' && f.event.type === type && f.event.turn_id === turnId;

test('bad tool input is tool.failed invalid_input naming the field, and the turn completes', async () => {
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const c = await attach(server, sid);
  after(() => c.close());
  c.send({ type: 'subscribe', filter: 'preset:full', since: null });
  await c.next((f) => f.type === 'subscribe_ack');
  const longCommand = `echo ${'a'.repeat(140 * 1024)}`;
  fake.script([
    { toolUses: [{ name: 'run_command', input: { command: 'echo one\u0000two' } }] },
    { toolUses: [{ name: 'run_command', input: { command: longCommand } }] },
    { toolUses: [{ name: 'run_command', input: { command: 'echo started; sleep 30', timeout_ms: 300 } }] },
    { toolUses: [{ name: 'list_files', input: { recursiv: true } }] },
    { text: 'done' },
  ]);
  const turn = (
    await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'go' }] })
  ).body;
  const asked = await c.next(isEvent('tool.confirmation_requested', turn.turn_id));
  const answer = await server.api(
    'POST',
    `/sessions/${sid}/turns/${turn.turn_id}/confirmations/${asked.event.payload.request_id}`,
    { decision: 'allow', scope: 'session' },
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const end = await c.next(isEvent('turn.completed', turn.turn_id));
  assert.equal(end.event.payload.status, 'completed', JSON.stringify(end.event.payload));

  const failed = c
    .events()
    .filter((e) => e.turn_id === turn.turn_id && e.type === 'tool.failed')
    .map((e) => e.payload);
  assert.deepEqual(
    failed.map((p) => [p.tool_name, p.error_class]),
    [
      ['run_command', 'invalid_input'],
      ['run_command', 'invalid_input'],
      ['run_command', 'timeout'],
      ['list_files', 'invalid_input'],
    ],
  );
  assert.match(failed[0].message, /`command`: contains a NUL byte/);
  assert.match(failed[1].message, /`command`: .*128 KiB/);
  assert.match(failed[3].message, /`recursiv`: is not a field/);
  // the event says what happened; what the command printed is the model's alone
  assert.equal(failed[2].message, 'command timed out after 300 ms; its process group was killed');
  const results = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages.flatMap(
    (m: { content: Array<{ type: string; content?: string }> }) =>
      m.content.filter((b) => b.type === 'tool_result').map((b) => b.content),
  );
  assert.equal(results.length, 4);
  assert.match(results[2], /^timeout: command timed out after 300 ms.*\nstarted\n$/s);
});

test('a write, edit or command that cannot run fails at once, without asking the user first', async () => {
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const c = await attach(server, sid);
  after(() => c.close());
  c.send({ type: 'subscribe', filter: 'preset:full', since: null });
  await c.next((f) => f.type === 'subscribe_ack');
  fake.script([
    {
      toolUses: [
        { name: 'write_file', input: { path: '../escaped.txt', content: 'x' } },
        { name: 'edit_file', input: { path: 'a.txt', old_string: 'a' } },
        { name: 'edit_file', input: { path: 'no-such-file.txt', old_string: 'a', new_string: 'b' } },
        { name: 'run_command', input: { command: '' } },
      ],
    },
    { text: 'done' },
  ]);
  const turn = (
    await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'go' }] })
  ).body;
  // before: the first call was put to the user, and the turn waited for the answer
  const first = await c.next(
    (f) =>
      isEvent('tool.confirmation_requested', turn.turn_id)(f) || isEvent('turn.completed', turn.turn_id)(f),
  );
  assert.equal(first.event.type, 'turn.completed');
  assert.equal(first.event.payload.status, 'completed');
  const failed = c
    .events()
    .filter((e) => e.turn_id === turn.turn_id && e.type === 'tool.failed')
    .map((e) => [e.payload.tool_name, e.payload.error_class]);
  assert.deepEqual(failed, [
    ['write_file', 'outside_workspace'],
    ['edit_file', 'invalid_input'],
    ['edit_file', 'not_found'],
    ['run_command', 'invalid_input'],
  ]);
});

test('a workspace folder replaced by a symlink after the session began: its tools refuse the new place as outside_workspace', async () => {
  const ws = join(server.home, 'swapped-ws');
  const elsewhere = join(server.home, 'elsewhere');
  mkdirSync(ws);
  mkdirSync(elsewhere);
  writeFileSync(join(elsewhere, 'secret.txt'), 'not for the agent\n');
  const sid = (await server.api('POST', '/sessions', { workspace_path: ws })).body.id;
  renameSync(ws, `${ws}.orig`);
  symlinkSync(elsewhere, ws);
  const c = await attach(server, sid);
  after(() => c.close());
  c.send({ type: 'subscribe', filter: 'preset:full', since: null });
  await c.next((f) => f.type === 'subscribe_ack');
  fake.script([{ toolUses: [{ name: 'read_file', input: { path: 'secret.txt' } }] }, { text: 'done' }]);
  const turn = (
    await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'go' }] })
  ).body;
  await c.next(isEvent('turn.completed', turn.turn_id));
  const ends = c
    .events()
    .filter((e) => e.turn_id === turn.turn_id && (e.type === 'tool.failed' || e.type === 'tool.completed'));
  assert.deepEqual(
    ends.map((e) => [e.type, e.payload.error_class]),
    [['tool.failed', 'outside_workspace']],
  );
  const messages = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  assert.doesNotMatch(JSON.stringify(messages), /not for the agent/);
});

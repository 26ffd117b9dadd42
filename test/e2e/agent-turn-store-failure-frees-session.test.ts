/**
 * A turn submission whose user message the store refuses (here a trigger that aborts every insert into
 * messages, a real SQLite failure) is answered 500 and leaves the session as it was: it used to keep the
 * session claimed by a turn that never started, so every later turn got 409 turn_in_flight and the turn could
 * not be cancelled (404 turn_not_found) until the server restarted.
 *
 * A store whose disk refuses writes while a turn runs (a full disk; here the server's file size limit
 * lowered with prlimit, which SQLite meets as it does a full disk: its write refused and rolled back) used
 * to stop svc serve ('unexpected error outside a request; stopping'): the turn's answer could not be stored,
 * nor then its end. The turn now waits for the store as for a PostgreSQL outage and ends once there is room,
 * and a request that needs a write meanwhile is 503 store_unavailable (it was 500 internal_error). So does a
 * write lock another process holds past the busy timeout (an operator's sqlite3 left in a transaction).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer, withStore } from '../helpers/agent-server.ts';
import { attach } from '../helpers/ws-client.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const server = await startAgentServer(
  { after },
  {
    env: {
      ...fakeProviderEnv(fake, ['anthropic']),
      // a lock held elsewhere is given up on soon (the trace writer's retries, then the turn's own write)
      SVC_SQLITE_BUSY_TIMEOUT_MS: '50',
    },
  },
);
const text = (t: string) => [{ type: 'text', text: t }];

test('a turn the store cannot record leaves its session free for the next one', async () => {
  const created = await server.api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(created.status, 201);
  const sid = created.body.id as string;
  const turn = (t: string) => server.api('POST', `/sessions/${sid}/turns`, { content: text(t) });

  withStore(server.db, (db) =>
    db.exec(`CREATE TRIGGER refuse_messages BEFORE INSERT ON messages
             BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END`),
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

test('a disk that refuses writes mid-turn: the turn waits and ends once there is room; the server runs on', async (t) => {
  const pid = server.svc.child.pid!;
  const fileSizeLimit = (limit: string) =>
    execFileSync('prlimit', ['--pid', String(pid), `--fsize=${limit}`]);
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
  } catch {
    t.skip('prlimit (util-linux) is not installed');
    return;
  }
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const c = await attach(server, sid);
  t.after(() => c.close());
  c.send({ type: 'subscribe', filter: 'preset:full', since: null });
  await c.next((f) => f.type === 'subscribe_ack');
  fake.script([{ hold: true, text: 'kept once there was room' }]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('go') })).body;
  await c.next((f) => f.type === 'event' && f.event.type === 'llm.call_started');
  fileSizeLimit('1:unlimited'); // every write past the first byte of a file fails (EFBIG: SQLITE_IOERR_WRITE)
  t.after(() => fileSizeLimit('unlimited:unlimited'));
  while (fake.release() === 0) await new Promise((r) => setTimeout(r, 10));

  const said = await stderrLine(/the turn waits for it|stopping/);
  assert.match(said, /the trace store cannot be written; the turn waits for it/);
  const refused = await server.api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(refused.status, 503, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, 'store_unavailable');
  assert.equal(refused.headers.get('retry-after'), '1');
  assert.equal(server.svc.child.exitCode, null, 'the server runs on');

  fileSizeLimit('unlimited:unlimited');
  const end = await c.next(
    (f) => f.type === 'event' && f.event.type === 'turn.completed' && f.event.turn_id === turn.turn_id,
  );
  assert.equal(end.event.payload.status, 'completed');
  const session = (await server.api('GET', `/sessions/${sid}`)).body;
  assert.equal(session.current_turn_id, null);
  assert.equal(session.turn_count, 1);
  const messages = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  assert.deepEqual(
    messages.map((m: { role: string; content: Array<{ text?: string }> }) => [m.role, m.content[0]?.text]),
    [
      ['user', 'go'],
      ['assistant', 'kept once there was room'],
    ],
  );
});

test('a write lock another process holds past the busy timeout: 503 meanwhile, and the turn ends once it is released', async (t) => {
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const c = await attach(server, sid);
  t.after(() => c.close());
  c.send({ type: 'subscribe', filter: 'preset:full', since: null });
  await c.next((f) => f.type === 'subscribe_ack');
  fake.script([
    { toolUses: [{ name: 'write_file', input: { path: 'locked.txt', content: 'x' } }] },
    { text: 'written once the lock was released' },
  ]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('go') })).body;
  const asked = await c.next((f) => f.type === 'event' && f.event.type === 'tool.confirmation_requested');
  const from = server.svc.output().stderr.length;
  const lock = new DatabaseSync(server.db);
  t.after(() => lock.isOpen && lock.close());
  lock.exec('BEGIN IMMEDIATE');
  // the tool runs, and its end is the turn's next write
  const confirmation = `/sessions/${sid}/turns/${turn.turn_id}/confirmations/${asked.event.payload.request_id}`;
  assert.equal((await server.api('POST', confirmation, { decision: 'allow' })).status, 200);

  const refused = await server.api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(refused.status, 503, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, 'store_unavailable');
  assert.match(refused.body.error.message, /another process holds its write lock/);
  const said = await stderrLine(/the turn waits for it|stopping/, from);
  assert.match(said, /the trace store cannot be written; the turn waits for it.*database is locked/);
  lock.exec('COMMIT');
  lock.close();
  const end = await c.next(
    (f) => f.type === 'event' && f.event.type === 'turn.completed' && f.event.turn_id === turn.turn_id,
  );
  assert.equal(end.event.payload.status, 'completed');
  const messages = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  assert.equal(messages.at(-1).content[0].text, 'written once the lock was released');
  assert.equal(server.svc.child.exitCode, null, 'the server runs on');
});

// --- internal ---

/** Resolves with the server's first stderr line after offset `from` (as written or still to come) matching `pattern`. */
function stderrLine(pattern: RegExp, from = 0): Promise<string> {
  return new Promise((resolve) => {
    const check = () => {
      const line = server.svc
        .output()
        .stderr.slice(from)
        .split('\n')
        .find((l) => pattern.test(l));
      if (line === undefined) return;
      server.svc.child.stderr?.off('data', check);
      resolve(line);
    };
    server.svc.child.stderr?.on('data', check);
    check();
  });
}

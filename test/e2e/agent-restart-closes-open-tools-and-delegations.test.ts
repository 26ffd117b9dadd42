/**
 * spec 2's cancellation sequences end every tool a cancelled turn opened (`tool.failed` cancelled, before
 * `turn.cancelled`) and every delegation (`delegate.failed` cancelled_by_user). A turn a killed server left
 * open was closed at the next start by `bus.gap_detected` and `turn.cancelled` alone, so its `tool.called`
 * and `delegate.started` stayed open in the trace forever; recovery now closes them the same way.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer, withStore } from '../helpers/agent-server.ts';
import { attach } from '../helpers/ws-client.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const env = fakeProviderEnv(fake, ['anthropic']);

type Row = {
  id: string;
  type: string;
  actor: string;
  turn_id: string;
  parent_event_id: string | null;
  payload: any;
};

function rows(server: AgentServer, where: string, ...args: string[]): Row[] {
  return withStore(server.db, (db) =>
    (
      db
        .prepare(
          `SELECT id, type, actor, turn_id, parent_event_id, payload FROM events WHERE ${where} ORDER BY id`,
        )
        .all(...args) as Row[]
    ).map((r) => ({ ...r, payload: JSON.parse(r.payload) })),
  );
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(check(), `${what}: not reached within 10 s`);
}

test('a kill -9 right after a client was sent the opening events loses none of them: they are stored, and the gap names the call', async (t) => {
  // the opening events (turn.started, route.decided, llm.call_started) were committed up to 250 ms late, while
  // the socket had them at once: a kill in that window left the client with events the store never had
  const first = await startAgentServer(t, { env });
  const sid = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body.id;
  const stream = await attach(first, sid);
  stream.send({ type: 'subscribe', filter: 'preset:full', since: null, snapshot: false });
  await stream.next((f) => f.type === 'subscribe_ack');
  fake.script([{ hang: true }]);
  const calls = fake.requests.length;
  const turn = (
    await first.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'hang' }] })
  ).body.turn_id;
  const call = (await stream.next((f) => f.type === 'event' && f.event.type === 'llm.call_started')).event;
  // the hang step is taken before the kill (the event is sent as the call begins), so no later test gets it
  await until(() => fake.requests.length > calls, 'the call reaching the provider');
  // one request answered after it: the server has finished the event-loop turn it published the call in
  // (the commit the README promises), while the old 250 ms wait had not run out
  assert.equal((await first.api('GET', '/health')).status, 200);
  assert.equal(await first.svc.stop('SIGKILL'), null);
  const second = await startAgentServer(t, { env, home: first.home });
  await until(
    () => rows(second, "turn_id = ? AND type = 'turn.cancelled'", turn).length > 0,
    'turn.cancelled',
  );
  const sent = stream.events().map((e) => `${e.type} ${e.id}`);
  const stored = rows(second, 'turn_id = ?', turn);
  assert.deepEqual(
    stored.filter((e) => e.id <= call.id).map((e) => `${e.type} ${e.id}`),
    sent.filter((e) => !e.startsWith('message.')),
  );
  const gap = stored.find((e) => e.type === 'bus.gap_detected')!;
  assert.deepEqual(gap.payload.llm_call_started_ids, [call.id]);
  assert.equal(await second.svc.stop(), 0);
});

test('a tool waiting for its confirmation when the server was killed gets its request resolved, then tool.failed cancelled before turn.cancelled', async (t) => {
  const first = await startAgentServer(t, { env });
  const sid = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body.id;
  fake.script([{ toolUses: [{ name: 'write_file', input: { path: 'x.txt', content: 'x' } }] }]);
  const turn = (
    await first.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'write it' }] })
  ).body.turn_id;
  await until(
    () => rows(first, "turn_id = ? AND type = 'tool.confirmation_requested'", turn).length > 0,
    'the confirmation request',
  );
  assert.equal(await first.svc.stop('SIGKILL'), null);
  const second = await startAgentServer(t, { env, home: first.home });
  await until(
    () => rows(second, "turn_id = ? AND type = 'turn.cancelled'", turn).length > 0,
    'turn.cancelled',
  );
  const events = rows(second, 'turn_id = ?', turn);
  const called = events.find((e) => e.type === 'tool.called')!;
  const tail = events.slice(events.findIndex((e) => e.type === 'bus.gap_detected'));
  assert.deepEqual(
    tail.map((e) => e.type),
    ['bus.gap_detected', 'tool.confirmation_resolved', 'tool.failed', 'turn.cancelled'],
  );
  // the request nobody answered is resolved as a live cancel resolves it (no dangling confirmation)
  const asked = events.find((e) => e.type === 'tool.confirmation_requested')!;
  assert.equal(tail[1].parent_event_id, asked.id);
  assert.deepEqual(tail[1].payload, {
    request_id: asked.payload.request_id,
    tool_use_id: called.payload.tool_use_id,
    tool_name: 'write_file',
    decision: 'deny',
    scope: 'once',
    timed_out: false,
    cancelled: true,
  });
  const failed = tail[2];
  assert.equal(failed.parent_event_id, called.id);
  assert.equal(failed.payload.tool_use_id, called.payload.tool_use_id);
  assert.equal(failed.payload.tool_name, 'write_file');
  assert.equal(failed.payload.error_class, 'cancelled');
  assert.equal(typeof failed.payload.latency_ms, 'number');
  assert.match(failed.payload.message, /server_restart/);
  assert.equal(await second.svc.stop(), 0);
  // a third start adds nothing: the turn is closed
  const third = await startAgentServer(t, { env, home: first.home });
  await until(() => /agent server listening/.test(third.svc.output().stderr), 'the third start');
  assert.equal(rows(third, "turn_id = ? AND type = 'tool.failed'", turn).length, 1);
});

test('a delegation whose worker was mid-call when the server was killed: the worker turn ends, then delegate.failed, tool.failed, turn.cancelled', async (t) => {
  const first = await startAgentServer(t, { env });
  const sid = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body.id;
  fake.script([{ toolUses: [{ name: 'delegate', input: { task: 'count the files' } }] }, { hang: true }]);
  const calls = fake.requests.length;
  const turn = (
    await first.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'delegate' }] })
  ).body.turn_id;
  await until(
    () => rows(first, "turn_id = ? AND type = 'delegate.started'", turn).length > 0,
    'delegate.started',
  );
  const started = rows(first, "turn_id = ? AND type = 'delegate.started'", turn)[0];
  const worker = started.payload.worker_session_id as string;
  await until(
    () => rows(first, "session_id = ? AND type = 'llm.call_started'", worker).length > 0,
    "the worker's model call",
  );
  // the worker's hang step is taken before the kill, so no later test gets it
  await until(() => fake.requests.length >= calls + 2, "the worker's call reaching the provider");
  assert.equal(await first.svc.stop('SIGKILL'), null);
  const second = await startAgentServer(t, { env, home: first.home });
  await until(
    () => rows(second, "turn_id = ? AND type = 'turn.cancelled'", turn).length > 0,
    'turn.cancelled',
  );
  const workerEnd = rows(second, "session_id = ? AND type = 'turn.cancelled'", worker);
  assert.equal(workerEnd.length, 1);
  const planner = rows(second, 'turn_id = ?', turn);
  const recovered = planner.filter((e) => e.id > workerEnd[0].id).map((e) => e.type);
  // the worker's turn closes first, as a live cancel would order it
  assert.deepEqual(recovered, ['bus.gap_detected', 'delegate.failed', 'tool.failed', 'turn.cancelled']);
  const failed = planner.find((e) => e.type === 'delegate.failed')!;
  assert.equal(failed.parent_event_id, started.id);
  assert.equal(failed.payload.worker_session_id, worker);
  assert.equal(failed.payload.tool_use_id, started.payload.tool_use_id);
  assert.equal(failed.payload.failure_mode, 'cancelled_by_user');
  assert.match(failed.payload.message, /server_restart/);
  assert.equal(failed.payload.cost_usd, '0.000000');
  const tool = planner.find((e) => e.type === 'tool.failed')!;
  assert.equal(tool.payload.tool_name, 'delegate');
  assert.equal(tool.payload.error_class, 'cancelled');
});

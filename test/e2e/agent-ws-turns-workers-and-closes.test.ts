/**
 * The WebSocket stream around turns (spec 2 §WebSocket stream, §States, item 6): the `cancel` frame does
 * what REST cancel does, worker sessions are hidden by default and interleaved on request (live and in
 * replay) or attached to directly, DELETE of a session closes its sockets with 1000 after the turn's end
 * event, and shutdown closes them with 1001 after the cancelled turns' events.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer } from '../helpers/agent-server.ts';
import { attach, type StreamClient } from '../helpers/ws-client.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const provider = fakeProviderEnv(fake, ['anthropic']);
const server = await startAgentServer({ after }, { env: provider });

const text = (t: string) => [{ type: 'text', text: t }];
const slowWords = () => ({ text: Array.from({ length: 200 }, (_, i) => `w${i}`).join(' '), dripMs: 20 });
const isEvent = (type: string, turnId?: string) => (f: { type: string; event?: any }) =>
  f.type === 'event' && f.event.type === type && (turnId === undefined || f.event.turn_id === turnId);

async function session(on: AgentServer): Promise<string> {
  return (await on.api('POST', '/sessions', { workspace_path: on.workspace })).body.id;
}

async function subscribed(on: AgentServer, sid: string, filter: unknown = 'preset:full', since?: string) {
  const c = await attach(on, sid);
  c.send({ type: 'subscribe', filter, since: since ?? null });
  await c.next((f) => f.type === 'subscribe_ack');
  return c;
}

async function done(...clients: StreamClient[]) {
  for (const c of clients) {
    c.close();
    await c.closed;
  }
}

test('the cancel frame cancels like REST: message.complete cancelled, llm.call_failed, turn.cancelled with the reason', async () => {
  const sid = await session(server);
  const c = await subscribed(server, sid);
  fake.script([slowWords()]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('talk') })).body;
  await c.next(isEvent('text.delta', turn.turn_id));
  c.send({ type: 'cancel', turn_id: turn.turn_id, reason: 'changed my mind' });
  const cancelled = await c.next(isEvent('turn.cancelled', turn.turn_id));
  assert.equal(cancelled.event.payload.reason, 'changed my mind');
  const types = c
    .events()
    .filter((e) => e.turn_id === turn.turn_id)
    .map((e) => e.type);
  assert.deepEqual(types.slice(-3), ['message.complete', 'llm.call_failed', 'turn.cancelled']);
  const complete = c.events().find((e) => e.type === 'message.complete')!;
  assert.equal(complete.payload.stop_reason, 'cancelled');
  // the REST cancel's errors, as error frames
  let from = c.frames.length;
  c.send({ type: 'cancel', turn_id: turn.turn_id });
  assert.equal((await c.next((f) => f.type === 'error', from)).code, 'turn_already_completed');
  from = c.frames.length;
  c.send({ type: 'cancel', turn_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' });
  assert.equal((await c.next((f) => f.type === 'error', from)).code, 'turn_not_found');
  // frames are answered in the order received: the cancel's lookup finishes before the next frame's answer
  from = c.frames.length;
  c.send({ type: 'cancel', turn_id: '01ARZ3NDEKTSV4RRFFQ69G5FAW' });
  c.send({ type: 'cancel' });
  const first = await c.next((f) => f.type === 'error', from);
  const second = await c.next((f) => f.type === 'error', c.frames.indexOf(first) + 1);
  assert.deepEqual([first.code, second.code], ['turn_not_found', 'invalid_frame']);
  await done(c);
});

test('a cancel sent as soon as turn.started arrives (socket or REST) cancels the turn, even while it is routed', async () => {
  const sid = await session(server);
  const c = await subscribed(server, sid);
  for (const via of ['socket', 'rest', 'socket', 'rest', 'socket', 'rest']) {
    const from = c.frames.length;
    const posted = server.api('POST', `/sessions/${sid}/turns`, { content: text('wait [[fake:hang]]') });
    const turnId = (await c.next(isEvent('turn.started'), from)).event.turn_id;
    if (via === 'socket') c.send({ type: 'cancel', turn_id: turnId, reason: 'at once' });
    else {
      const res = await server.api('POST', `/sessions/${sid}/turns/${turnId}/cancel`, { reason: 'at once' });
      assert.equal(res.status, 202, JSON.stringify(res.body));
    }
    // the turn was registered before turn.started went out: never turn_already_completed for a live turn
    const end = await c.next((f) => f.type === 'error' || isEvent('turn.cancelled', turnId)(f), from);
    assert.equal(end.type, 'event', `${via}: ${JSON.stringify(end)}`);
    assert.equal(end.event.payload.reason, 'at once');
    assert.equal((await posted).status, 202);
    // its answer, empty when the cancel came before the model call, is kept cancelled for the history's note
    const msgs = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
    const answer = msgs.find((m: any) => m.turn_id === turnId && m.role === 'assistant');
    assert.equal(answer?.status, 'cancelled', JSON.stringify(msgs.at(-1)));
  }
  await done(c);
});

test("message.complete names a provider's refusal, pause or context-window stop in spec 2's stop reasons; turn.completed keeps the provider's", async () => {
  const sid = await session(server);
  const c = await subscribed(server, sid);
  const cases = [
    ['refusal', 'end_turn'],
    ['pause_turn', 'end_turn'],
    ['model_context_window_exceeded', 'max_tokens'],
  ];
  for (const [provider, spec] of cases) {
    fake.script([`stop=${provider}`]);
    const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('answer') })).body;
    const ended = await c.next(isEvent('turn.completed', turn.turn_id));
    const complete = c.events().find((e) => e.type === 'message.complete' && e.turn_id === turn.turn_id)!;
    assert.equal(complete.payload.stop_reason, spec, provider);
    assert.equal(ended.event.payload.stop_reason, provider);
  }
  await done(c);
});

test('worker sessions: hidden by default, interleaved with include_worker_sessions live and in replay, attachable directly', async () => {
  const sid = await session(server);
  const plain = await subscribed(server, sid);
  const all = await subscribed(server, sid, { include_worker_sessions: true });
  fake.script([
    { toolUses: [{ name: 'delegate', input: { task: 'count the files', model: 'haiku' } }] },
    { text: 'two files' },
    { text: 'the worker says two files' },
  ]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('delegate') })).body;
  await all.next(isEvent('turn.completed', turn.turn_id));
  await plain.next(isEvent('turn.completed', turn.turn_id));
  const started = plain.events().find((e) => e.type === 'delegate.started')!;
  const worker = started.payload.worker_session_id as string;

  // the parent's default view: its own events only, the delegate tool call and delegate.* among them
  assert.ok(plain.events().every((e) => e.session_id === sid));
  const planner = plain.events().map((e) => e.type);
  for (const t of ['tool.called', 'delegate.started', 'delegate.completed', 'tool.completed'])
    assert.ok(planner.includes(t), t);
  // interleaved: the worker's events between delegate.started and delegate.completed, in id order
  const ids = all.events().map((e) => e.id);
  assert.deepEqual(ids, [...ids].sort());
  const workerEvents = all.events().filter((e) => e.session_id === worker);
  assert.ok(workerEvents.some((e) => e.type === 'text.delta'));
  assert.deepEqual(
    all
      .events()
      .filter((e) => e.session_id === sid)
      .map((e) => e.id),
    plain.events().map((e) => e.id),
  );
  const at = (type: string, session: string) =>
    ids.indexOf(all.events().find((e) => e.type === type && e.session_id === session)!.id);
  assert.ok(at('delegate.started', sid) < at('turn.started', worker));
  assert.ok(at('turn.completed', worker) < at('delegate.completed', sid));

  // replay with workers: the persisted events of both sessions after the planner's turn.started
  const first = plain.events()[0].id;
  const replay = await subscribed(server, sid, { include_worker_sessions: true }, first);
  const persisted = all
    .events()
    .filter((e) => e.id > first && !/^(text|thinking|message|tool\.use)/.test(e.type));
  await replay.next((f) => f.type === 'event' && f.event.id === persisted.at(-1)!.id);
  assert.deepEqual(
    replay.events().map((e) => e.id),
    persisted.map((e) => e.id),
  );
  // direct attach to the worker session by the id delegate.started named
  const direct = await subscribed(server, worker, 'preset:full', first);
  const workerPersisted = persisted.filter((e) => e.session_id === worker);
  await direct.next((f) => f.type === 'event' && f.event.id === workerPersisted.at(-1)!.id);
  assert.deepEqual(
    direct.events().map((e) => e.id),
    workerPersisted.map((e) => e.id),
  );
  await done(plain, all, replay, direct);
});

test('a worker session ends with its turn: a socket attached to it closes with 1000 session_ended after its end', async () => {
  const sid = await session(server);
  const planner = await subscribed(server, sid);
  fake.script([
    { toolUses: [{ name: 'delegate', input: { task: 'count the files' } }] },
    { text: Array.from({ length: 40 }, (_, i) => `v${i}`).join(' '), dripMs: 20 },
    { text: 'done' },
  ]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('delegate it') })).body;
  const started = await planner.next(isEvent('delegate.started', turn.turn_id));
  const worker = started.event.payload.worker_session_id as string;
  const direct = await subscribed(server, worker);
  const closed = await direct.closed;
  assert.equal(closed.code, 1000);
  assert.equal(JSON.parse(closed.reason).code, 'session_ended');
  assert.equal(direct.events().at(-1)!.type, 'turn.completed');
  await planner.next(isEvent('turn.completed', turn.turn_id));
  assert.equal(planner.ws.readyState, planner.ws.OPEN); // the planner's own socket stays
  await done(planner);
});

test('DELETE of a session closes its sockets with 1000 session_ended, after the cancelled turn ended', async () => {
  const sid = await session(server);
  const c = await subscribed(server, sid);
  fake.script([slowWords()]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('talk') })).body;
  await c.next(isEvent('text.delta', turn.turn_id));
  assert.equal((await server.api('DELETE', `/sessions/${sid}`)).status, 200);
  const closed = await c.closed;
  assert.equal(closed.code, 1000);
  assert.equal(JSON.parse(closed.reason).code, 'session_ended');
  assert.equal(c.events().at(-1)!.type, 'turn.cancelled');
});

test('a subscription to a session that already ended gets its replay or snapshot, then 1000 session_ended', async () => {
  const sid = await session(server);
  const live = await subscribed(server, sid);
  fake.script([{ text: 'before the end' }]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('hello') })).body;
  const end = await live.next(isEvent('turn.completed', turn.turn_id));
  await done(live);
  assert.equal((await server.api('DELETE', `/sessions/${sid}`)).status, 200);
  for (const sub of [{ since: null }, { snapshot: true }]) {
    const c = await attach(server, sid);
    c.send({ type: 'subscribe', filter: 'preset:full', ...sub });
    const closed = await c.closed;
    assert.equal(closed.code, 1000, JSON.stringify(sub));
    assert.equal(JSON.parse(closed.reason).code, 'session_ended');
    assert.equal(c.frames[0].type, 'subscribe_ack');
    if ('snapshot' in sub) assert.equal(c.frames[1].type, 'snapshot');
  }
  // a reconnect with since gets what it missed, then the close
  const again = await attach(server, sid);
  again.send({ type: 'subscribe', filter: 'preset:full', since: turn.turn_id });
  await again.closed;
  assert.equal(again.events().at(-1)!.id, end.event.id);
});

test('shutdown cancels the running turn, delivers its end, then closes every socket with 1001', async (t) => {
  const doomed = await startAgentServer(t, { env: provider });
  const sid = await session(doomed);
  const c = await subscribed(doomed, sid);
  const idle = await subscribed(doomed, await session(doomed));
  fake.script([slowWords()]);
  const turn = (await doomed.api('POST', `/sessions/${sid}/turns`, { content: text('talk') })).body;
  await c.next(isEvent('text.delta', turn.turn_id));
  const exit = doomed.svc.stop('SIGTERM');
  const [closed, idleClosed] = await Promise.all([c.closed, idle.closed]);
  assert.equal(closed.code, 1001);
  assert.equal(JSON.parse(closed.reason).code, 'service_shutting_down');
  assert.equal(idleClosed.code, 1001);
  const end = c.events().at(-1)!;
  assert.equal(end.type, 'turn.cancelled');
  assert.equal(end.payload.reason, 'server_shutdown');
  assert.equal(await exit, 0);
});

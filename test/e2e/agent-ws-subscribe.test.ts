/**
 * The `subscribe` frame of the WebSocket stream (spec 2 §WebSocket stream) against the real `svc serve`:
 * frame errors never end the socket, invalid_filter names the string, presets expand in the ack, the
 * snapshot frame, each subscribe_error code, the actors filter, and streaming-only events live only.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { encodeTime, monotonicFactory } from 'ulidx';
import { CHAT_PRESET_TYPES } from '#src/agent/ws/filter.ts';
import { EVENT_TYPES, isPersisted } from '#src/events/catalog.ts';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer, withStore } from '../helpers/agent-server.ts';
import { attach, type StreamClient } from '../helpers/ws-client.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const server = await startAgentServer({ after }, { env: fakeProviderEnv(fake, ['anthropic']) });

const clients: StreamClient[] = [];
after(async () => {
  for (const c of clients) {
    c.close();
    await c.closed;
  }
});

async function session(): Promise<string> {
  return (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
}

async function connect(sid: string): Promise<StreamClient> {
  const c = await attach(server, sid);
  clients.push(c);
  return c;
}

/** Submits a turn and resolves with its id once `client` saw its end. */
async function runTurn(sid: string, client: StreamClient, prompt = 'hello'): Promise<string> {
  const res = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: prompt }],
  });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  await client.next(
    (f) => f.type === 'event' && f.event.type === 'turn.completed' && f.event.turn_id === res.body.turn_id,
  );
  return res.body.turn_id;
}

test('frame errors get an error frame and the socket lives on: JSON, type, binary, order, fields', async () => {
  const c = await connect(await session());
  const errorAfter = async (send: () => void) => {
    const from = c.frames.length;
    send();
    return c.next((f) => f.type === 'error', from);
  };
  assert.equal((await errorAfter(() => c.send('{not json'))).code, 'invalid_frame');
  assert.equal((await errorAfter(() => c.send('[1,2]'))).code, 'invalid_frame');
  const unknown = await errorAfter(() => c.send({ type: 'launch', x: 1 }));
  assert.equal(unknown.code, 'unknown_frame_type');
  assert.match(unknown.message, /"launch"/);
  assert.equal((await errorAfter(() => c.ws.send(Buffer.from([1, 2, 3])))).code, 'invalid_frame');
  const early = await errorAfter(() => c.send({ type: 'cancel', turn_id: 'T' }));
  assert.equal(early.code, 'subscribe_required');
  const badSince = await errorAfter(() =>
    c.send({ type: 'subscribe', filter: 'preset:chat', since: 'yesterday' }),
  );
  assert.equal(badSince.code, 'invalid_frame');
  assert.match(badSince.message, /since/);
  c.send({ type: 'subscribe', filter: 'preset:chat' });
  await c.next((f) => f.type === 'subscribe_ack');
  assert.equal((await errorAfter(() => c.send({ type: 'subscribe' }))).code, 'already_subscribed');
  const from = c.frames.length;
  c.send({ type: 'ping', nonce: 'n-1' });
  assert.deepEqual(await c.next((f) => f.type === 'pong', from), { type: 'pong', nonce: 'n-1' });
});

test('an unknown preset or event type is invalid_filter naming the string, and the client may subscribe again', async () => {
  const c = await connect(await session());
  c.send({ type: 'subscribe', filter: 'preset:everything' });
  let err = await c.next((f) => f.type === 'subscribe_error');
  assert.equal(err.code, 'invalid_filter');
  assert.match(err.message, /preset:everything/);
  const from = c.frames.length;
  c.send({ type: 'subscribe', filter: { event_types: ['turn.started', 'turn.exploded'] } });
  err = await c.next((f) => f.type === 'subscribe_error', from);
  assert.equal(err.code, 'invalid_filter');
  assert.match(err.message, /turn\.exploded/);
  c.send({ type: 'subscribe', filter: { event_types: ['turn.started', 'text.delta'] } });
  const ack = await c.next((f) => f.type === 'subscribe_ack');
  assert.deepEqual(ack.resolved_filter, {
    event_types: ['turn.started', 'text.delta'],
    actors: null,
    include_worker_sessions: false,
  });
});

test('a filter of the wrong shape is invalid_filter naming the field; null event_types means every type, like null actors', async () => {
  const c = await connect(await session());
  const bad: [unknown, RegExp][] = [
    [42, /filter/],
    [['preset:chat'], /filter/],
    [{ event_types: 'text.delta' }, /event_types/],
    [{ event_types: [7] }, /event_types/],
    [{ actors: 'tool' }, /actors/],
    [{ include_worker_sessions: 'yes' }, /include_worker_sessions/],
    [{ event_type: ['text.delta'] }, /event_type/],
  ];
  for (const [filter, names] of bad) {
    const from = c.frames.length;
    c.send({ type: 'subscribe', filter });
    const err = await c.next((f) => f.type === 'subscribe_error' || f.type === 'error', from);
    assert.equal(err.type, 'subscribe_error', JSON.stringify(filter));
    assert.equal(err.code, 'invalid_filter', JSON.stringify(filter));
    assert.match(err.message, names, JSON.stringify(filter));
  }
  c.send({ type: 'subscribe', filter: { event_types: null, actors: null, include_worker_sessions: true } });
  const ack = await c.next((f) => f.type === 'subscribe_ack');
  assert.deepEqual(ack.resolved_filter, {
    event_types: [...EVENT_TYPES],
    actors: null,
    include_worker_sessions: true,
  });
});

test('presets are expanded in the ack: preset:chat its list, preset:full (or no filter, absent or null) every catalog type', async () => {
  const sid = await session();
  const chat = await connect(sid);
  chat.send({ type: 'subscribe', filter: 'preset:chat', since: null, snapshot: false });
  const ack = await chat.next((f) => f.type === 'subscribe_ack');
  for (const t of ['text.delta', 'tool.use_start', 'route.decided', 'turn.cancelled', 'delegate.failed'])
    assert.ok(ack.resolved_filter.event_types.includes(t), t);
  assert.deepEqual(ack, {
    type: 'subscribe_ack',
    resolved_filter: { event_types: [...CHAT_PRESET_TYPES], actors: null, include_worker_sessions: false },
    since: null,
    snapshot: false,
    replay_event_count: 0,
  });
  const full = await connect(sid);
  full.send({ type: 'subscribe', filter: 'preset:full' });
  const fullAck = await full.next((f) => f.type === 'subscribe_ack');
  assert.deepEqual(fullAck.resolved_filter.event_types, EVENT_TYPES);
  // no filter, absent or null (as `since: null` is no cursor), is every type, as preset:full
  for (const frame of [{ type: 'subscribe', filter: null, since: null }, { type: 'subscribe' }]) {
    const c = await connect(sid);
    c.send(frame);
    const got = await c.next((f) => f.type === 'subscribe_ack' || f.type === 'subscribe_error');
    assert.deepEqual(got.resolved_filter, fullAck.resolved_filter, JSON.stringify(frame));
  }
});

test('snapshot: the session, its 50 most recent messages and snapshot_at_event_id; only newer events follow', async () => {
  const sid = await session();
  withStore(server.db, (db) => {
    const ids = monotonicFactory();
    const insert = db.prepare(
      `INSERT INTO messages (id, session_id, turn_id, role, content, created_at) VALUES (?, ?, NULL, 'user', ?, '2026-01-01T00:00:00.000000Z')`,
    );
    for (let i = 0; i < 60; i++)
      insert.run(ids(Date.now() - 60_000), sid, JSON.stringify([{ type: 'text', text: `m${i}` }]));
  });
  const c = await connect(sid);
  c.send({ type: 'subscribe', filter: 'preset:chat', snapshot: true });
  const ack = await c.next((f) => f.type === 'subscribe_ack');
  assert.equal(ack.snapshot, true);
  const snap = await c.next((f) => f.type === 'snapshot');
  assert.deepEqual(Object.keys(snap.session).sort(), [
    'active_model',
    'cost_so_far_usd',
    'current_turn_id',
    'current_turn_status',
    'id',
    'routing_policy_version',
    'turn_count',
    'workspace_path',
  ]);
  assert.equal(snap.session.id, sid);
  assert.equal(snap.messages.length, 50);
  assert.equal(snap.messages[0].content[0].text, 'm10');
  assert.equal(snap.messages.at(-1).content[0].text, 'm59');
  assert.match(snap.snapshot_at_event_id, /^[0-9A-Z]{26}$/);
  fake.script([{ text: 'after the snapshot' }]);
  await runTurn(sid, c);
  const events = c.events();
  assert.ok(events.length > 0);
  assert.ok(events.every((e) => e.id > snap.snapshot_at_event_id));
  assert.equal(events[0].type, 'turn.started');
});

test('snapshot: a turn run between the accept and the subscribe is in the snapshot and none of its events follow it', async () => {
  const sid = await session();
  const c = await connect(sid); // accepted: the connection's queue starts here
  fake.script([{ text: 'before the subscribe' }]);
  const first = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'one' }],
  });
  assert.equal(first.status, 202);
  for (let i = 0; i < 200; i++) {
    const s = (await server.api('GET', `/sessions/${sid}`)).body;
    if (s.turn_count === 1 && s.current_turn_id === null) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  c.send({ type: 'subscribe', filter: 'preset:full', snapshot: true });
  const snap = await c.next((f) => f.type === 'snapshot');
  assert.equal(snap.session.turn_count, 1);
  assert.equal(snap.session.current_turn_id, null);
  assert.deepEqual(
    snap.messages.map((m: { role: string }) => m.role),
    ['user', 'assistant'],
  );
  const stored = (await server.api('GET', `/sessions/${sid}/events?types=turn.completed`)).body.events;
  assert.ok(snap.snapshot_at_event_id >= stored[0].id, 'the fence covers the turn the snapshot shows');
  fake.script([{ text: 'after the subscribe' }]);
  const second = await runTurn(sid, c, 'two');
  const events = c.events();
  assert.ok(events.length > 0);
  assert.ok(
    events.every((e) => e.turn_id === second),
    JSON.stringify(events.map((e) => [e.type, e.turn_id])),
  );
});

test('subscribe_error: cursor_expired past retention, replay_too_large above 10,000, session_not_found when gone', async () => {
  const sid = await session();
  const c = await connect(sid);
  const old = `${encodeTime(Date.now() - 91 * 24 * 3600 * 1000, 10)}0000000000000000`;
  c.send({ type: 'subscribe', filter: 'preset:full', since: old });
  assert.equal((await c.next((f) => f.type === 'subscribe_error')).code, 'cursor_expired');
  const ids = monotonicFactory();
  const since = ids(Date.now() - 3_600_000);
  withStore(server.db, (db) => {
    db.exec('BEGIN');
    const insert = db.prepare(
      `INSERT INTO events (id, timestamp, timestamp_us, session_id, turn_id, type, actor, payload, parent_event_id, sensitivity) VALUES (?, '2026-01-01T00:00:00.000000Z', 0, ?, NULL, 'tool.completed', 'tool', '{}', NULL, 'private')`,
    );
    for (let i = 0; i < 10_001; i++) insert.run(ids(Date.now() - 60_000), sid);
    db.exec('COMMIT');
  });
  let from = c.frames.length;
  c.send({ type: 'subscribe', filter: 'preset:full', since });
  const big = await c.next((f) => f.type === 'subscribe_error', from);
  assert.equal(big.code, 'replay_too_large');
  // a narrower filter replays what it lets through
  from = c.frames.length;
  c.send({
    type: 'subscribe',
    filter: { event_types: ['turn.started', 'tool.completed'], actors: ['user'] },
    since,
  });
  assert.equal((await c.next((f) => f.type === 'subscribe_ack', from)).replay_event_count, 0);

  // removed behind the server's back (another process on the same store): the subscribe finds it gone
  const goneId = await session();
  const gone = await connect(goneId);
  withStore(server.db, (db) => db.prepare('DELETE FROM sessions WHERE id = ?').run(goneId));
  gone.send({ type: 'subscribe', filter: 'preset:chat' });
  assert.equal((await gone.next((f) => f.type === 'subscribe_error')).code, 'session_not_found');
});

test('a since cursor this server never gave out (an id of the future) replays nothing and loses no live event', async () => {
  const sid = await session();
  const watcher = await connect(sid);
  watcher.send({ type: 'subscribe', filter: 'preset:full' });
  const future = await connect(sid);
  const ahead = `${encodeTime(Date.now() + 365 * 24 * 3600 * 1000, 10)}0000000000000000`;
  future.send({ type: 'subscribe', filter: 'preset:full', since: ahead });
  const ack = await future.next((f) => f.type === 'subscribe_ack');
  assert.equal(ack.replay_event_count, 0);
  await watcher.next((f) => f.type === 'subscribe_ack');
  fake.script([{ text: 'still here' }]);
  const turnId = await runTurn(sid, watcher);
  // frames of one connection keep their order: once the pong is in, every event queued before it is too
  const from = future.frames.length;
  future.send({ type: 'ping', nonce: 'after the turn' });
  await future.next((f) => f.type === 'pong', from);
  assert.deepEqual(
    future.events().map((e) => e.id),
    watcher.events().map((e) => e.id),
  );
  assert.ok(future.events().some((e) => e.type === 'turn.completed' && e.turn_id === turnId));
});

test('a reconnect opened before the old socket dropped: since = an event published after its accept is not sent again', async () => {
  const sid = await session();
  const old = await connect(sid);
  old.send({ type: 'subscribe', filter: 'preset:full' });
  await old.next((f) => f.type === 'subscribe_ack');
  const fresh = await connect(sid); // accepted now: its queue holds every event that follows
  fake.script([{ text: 'seen on the old socket' }]);
  const turnId = await runTurn(sid, old);
  const last = old.events().at(-1)!;
  assert.equal(last.turn_id, turnId);
  fresh.send({ type: 'subscribe', filter: 'preset:full', since: last.id });
  await fresh.next((f) => f.type === 'subscribe_ack');
  fake.script([{ text: 'only this one' }]);
  const next = await runTurn(sid, fresh);
  const ids = fresh.events().map((e) => e.id);
  assert.ok(
    ids.every((id) => id > last.id),
    `events at or below since ${last.id} were sent again: ${fresh.events().filter((e) => e.id <= last.id).length}`,
  );
  assert.ok(fresh.events().some((e) => e.type === 'turn.completed' && e.turn_id === next));
});

test('the actors filter passes only those actors; streaming-only events come live and are never replayed', async () => {
  const sid = await session();
  const live = await connect(sid);
  live.send({ type: 'subscribe', filter: 'preset:full' });
  const users = await connect(sid);
  users.send({ type: 'subscribe', filter: { actors: ['user'] } });
  await Promise.all([live, users].map((c) => c.next((f) => f.type === 'subscribe_ack')));
  fake.script([{ text: 'one two three four' }]);
  const turnId = await runTurn(sid, live);
  const seen = live.events().filter((e) => e.turn_id === turnId);
  assert.ok(seen.some((e) => e.type === 'text.delta'));
  assert.ok(seen.some((e) => e.type === 'message.complete'));
  await users.next((f) => f.type === 'event' && f.event.type === 'turn.started');
  assert.ok(users.events().every((e) => e.actor === 'user'));

  const replay = await connect(sid);
  replay.send({ type: 'subscribe', filter: 'preset:full', since: seen[0].id });
  const ack = await replay.next((f) => f.type === 'subscribe_ack');
  const persisted = seen.slice(1).filter((e) => isPersisted(e.type as never));
  assert.equal(ack.replay_event_count, persisted.length);
  await replay.next((f) => f.type === 'event' && f.event.id === persisted.at(-1)!.id);
  assert.deepEqual(
    replay.events().map((e) => e.id),
    persisted.map((e) => e.id),
  );
});

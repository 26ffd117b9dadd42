import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startAgentServer, withStore } from '../helpers/agent-server.ts';

const server = await startAgentServer({ after });
const { api } = server;

async function sessionWith(messages: number, events: Array<[turn: string, type: string]>) {
  const { id } = (await api('POST', '/sessions', { workspace_path: server.workspace })).body as {
    id: string;
  };
  const msgIds: string[] = [];
  const eventIds: string[] = [];
  withStore(server.db, (db) => {
    const tag = id.slice(-8);
    for (let i = 0; i < messages; i++) {
      const mid = `01HIST${tag}M${String(i).padStart(3, '0')}`;
      db.prepare(
        `INSERT INTO messages (id, session_id, turn_id, role, content, metadata, status, created_at)
         VALUES (?, ?, 'T', ?, ?, '{"k":1}', ?, '2026-01-01T00:00:00.000000Z')`,
      ).run(
        mid,
        id,
        i % 2 ? 'assistant' : 'user',
        JSON.stringify([{ type: 'text', text: `m${i}` }]),
        i === 1 ? 'cancelled' : 'completed',
      );
      msgIds.push(mid);
    }
    events.forEach(([turn, type], i) => {
      const eid = `01HJST${tag}E${String(i).padStart(11, '0')}`; // a ULID, as event ids are
      db.prepare(
        `INSERT INTO events (id, timestamp, timestamp_us, session_id, turn_id, type, actor, payload, parent_event_id, sensitivity)
         VALUES (?, '2026-01-01T00:00:00.000001Z', 1, ?, ?, ?, 'agent', '{"n":1}', NULL, 'private')`,
      ).run(eid, id, turn, type);
      eventIds.push(eid);
    });
  });
  return { id, msgIds, eventIds };
}

const ids = (list: Array<{ id: string }>) => list.map((m) => m.id);

test('messages: the newest page by default, then before/after cursors, in canonical form with status', async () => {
  const s = await sessionWith(7, []);
  let res = await api('GET', `/sessions/${s.id}/messages?limit=3`);
  assert.equal(res.status, 200);
  assert.deepEqual(ids(res.body.messages), s.msgIds.slice(4));
  assert.deepEqual([res.body.has_more_before, res.body.has_more_after], [true, false]);
  const first = res.body.messages[0];
  assert.deepEqual(first.content, [{ type: 'text', text: 'm4' }]);
  assert.deepEqual(first.metadata, { k: 1 });
  assert.equal(first.role, 'user');
  assert.equal(first.created_at, '2026-01-01T00:00:00.000000Z');
  res = await api('GET', `/sessions/${s.id}/messages?limit=3&before=${s.msgIds[4]}`);
  assert.deepEqual(ids(res.body.messages), s.msgIds.slice(1, 4));
  assert.deepEqual([res.body.has_more_before, res.body.has_more_after], [true, true]);
  assert.equal(res.body.messages[0].status, 'cancelled');
  res = await api('GET', `/sessions/${s.id}/messages?limit=3&after=${s.msgIds[4]}`);
  assert.deepEqual(ids(res.body.messages), s.msgIds.slice(5));
  assert.deepEqual([res.body.has_more_before, res.body.has_more_after], [true, false]);
  res = await api('GET', `/sessions/${s.id}/messages`);
  assert.equal(res.body.messages.length, 7);
});

test('messages: limits are 1..1000 (default 50) and an unknown session is 404', async () => {
  const s = await sessionWith(60, []);
  assert.equal((await api('GET', `/sessions/${s.id}/messages`)).body.messages.length, 50);
  // DECISIONS §5: the events' limits (max 1000) hold for messages too
  assert.equal((await api('GET', `/sessions/${s.id}/messages?limit=1000`)).body.messages.length, 60);
  for (const q of ['limit=0', 'limit=1001', 'limit=x']) {
    const res = await api('GET', `/sessions/${s.id}/messages?${q}`);
    assert.equal(res.status, 400, q);
    assert.equal(res.body.error.details.field, 'limit');
  }
  const res = await api('GET', '/sessions/sess_nope/messages');
  assert.equal(res.status, 404);
  assert.equal(res.body.error.code, 'session_not_found');
});

test('messages: a before/after that is no message of the session is 400 validation_error naming it', async () => {
  const s = await sessionWith(3, []);
  const other = await sessionWith(1, []);
  for (const [field, value] of [
    ['before', 'zzz'],
    ['after', 'zzz'],
    ['before', '01ARZ3NDEKTSV4RRFFQ69G5FAV'], // a well-formed id no message has
    ['after', other.msgIds[0]], // another session's message
    ['before', s.msgIds[0].toLowerCase()],
  ]) {
    const res = await api('GET', `/sessions/${s.id}/messages?${field}=${encodeURIComponent(value)}`);
    assert.equal(res.status, 400, `${field}=${value}`);
    assert.equal(res.body.error.code, 'validation_error');
    assert.equal(res.body.error.details.field, field);
    assert.match(res.body.error.message, new RegExp(`^${field}: `));
  }
  // the session is checked first: an unknown session stays 404
  const res = await api('GET', '/sessions/sess_nope/messages?before=zzz');
  assert.equal(res.status, 404);
  // the cursors of the session's own messages still page
  const page = await api('GET', `/sessions/${s.id}/messages?after=${s.msgIds[0]}&before=${s.msgIds[2]}`);
  assert.equal(page.status, 200);
  assert.deepEqual(ids(page.body.messages), [s.msgIds[1]]);
});

test('events: envelopes oldest first, filtered by types and turn_id, paged by the after cursor', async () => {
  const s = await sessionWith(0, [
    ['T1', 'turn.started'],
    ['T1', 'route.decided'],
    ['T1', 'turn.completed'],
    ['T2', 'turn.started'],
    ['T2', 'turn.cancelled'],
  ]);
  let res = await api('GET', `/sessions/${s.id}/events?limit=2`);
  assert.equal(res.status, 200);
  assert.deepEqual(ids(res.body.events), s.eventIds.slice(0, 2));
  assert.equal(res.body.next_cursor, s.eventIds[1]);
  assert.deepEqual(Object.keys(res.body.events[0]).sort(), [
    'actor',
    'id',
    'parent_event_id',
    'payload',
    'sensitivity',
    'session_id',
    'timestamp',
    'timestamp_us',
    'turn_id',
    'type',
  ]);
  assert.deepEqual(res.body.events[0].payload, { n: 1 });
  res = await api('GET', `/sessions/${s.id}/events?after=${res.body.next_cursor}`);
  assert.deepEqual(ids(res.body.events), s.eventIds.slice(2));
  assert.equal(res.body.next_cursor, null);
  res = await api('GET', `/sessions/${s.id}/events?types=turn.started,turn.cancelled`);
  assert.deepEqual(ids(res.body.events), [s.eventIds[0], s.eventIds[3], s.eventIds[4]]);
  res = await api('GET', `/sessions/${s.id}/events?turn_id=T2`);
  assert.deepEqual(ids(res.body.events), s.eventIds.slice(3));
});

test('events: an after that is no event id, or an event of another session, is 400 validation_error naming it', async () => {
  const s = await sessionWith(0, [
    ['T1', 'turn.started'],
    ['T1', 'turn.completed'],
  ]);
  const other = await sessionWith(0, [['T9', 'turn.started']]);
  for (const cursor of ['zzz', '', s.eventIds[0].toLowerCase(), `${s.eventIds[0]}0`, other.eventIds[0]]) {
    const res = await api('GET', `/sessions/${s.id}/events?after=${encodeURIComponent(cursor)}`);
    assert.equal(res.status, 400, cursor);
    assert.equal(res.body.error.code, 'validation_error');
    assert.equal(res.body.error.details.field, 'after');
  }
  // an id that is stored nowhere (a streaming-only event's, received over the WebSocket) is a position
  const streamed = s.eventIds[0].replace(/E0+$/, `D${'Z'.repeat(11)}`); // just below the first event
  const res = await api('GET', `/sessions/${s.id}/events?after=${streamed}`);
  assert.equal(res.status, 200);
  assert.deepEqual(ids(res.body.events), s.eventIds);
});

test('events: unknown types and limits outside 1..1000 are validation errors naming the parameter', async () => {
  const s = await sessionWith(0, []);
  let res = await api('GET', `/sessions/${s.id}/events?types=turn.started,turn.exploded`);
  assert.equal(res.status, 400);
  assert.equal(res.body.error.details.field, 'types');
  assert.match(res.body.error.message, /turn\.exploded/);
  res = await api('GET', `/sessions/${s.id}/events?limit=1001`);
  assert.equal(res.body.error.details.field, 'limit');
  assert.equal((await api('GET', `/sessions/${s.id}/events?limit=1000`)).status, 200);
  assert.equal((await api('GET', '/sessions/sess_nope/events')).status, 404);
});

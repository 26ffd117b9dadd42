/**
 * GET /analytics/turns/{id} and /analytics/sessions queries: a turn's events in id order with in_flight
 * derived (a terminator, or a restart's gap event, ends it), its messages from start to end (or to now),
 * 404 turn_not_found for an id without events; sessions by recency or stored cost, limited.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { querySessions, queryTurn } from '#src/analytics/index.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { formatUs } from '#src/lib/time.ts';
import type { SqliteStore as Store } from '#src/store/open.ts';
import { BASE_US, HOUR_US, seed, tempStore } from '../../helpers/analytics-events.ts';

const at = (us: number) => formatUs(BASE_US + us);

function addSession(store: Store, id: string, cost: string, updatedUs: number, turns = 1) {
  store.db
    .prepare(
      `INSERT INTO sessions (id, workspace_path, active_model, created_at, updated_at, routing_policy_version, turn_count, cost_so_far_usd)
       VALUES (?, '/w', 'anthropic:claude-sonnet-4-5', ?, ?, 'v1', ?, ?)`,
    )
    .run(id, at(0), at(updatedUs), turns, cost);
}

function addMessage(
  store: Store,
  id: string,
  session: string,
  turn: string | null,
  role: string,
  us: number,
) {
  store.db
    .prepare(
      `INSERT INTO messages (id, session_id, turn_id, role, content, metadata, created_at) VALUES (?, ?, ?, ?, ?, '{}', ?)`,
    )
    .run(id, session, turn, role, JSON.stringify([{ type: 'text', text: id }]), at(us));
}

const turnEvent =
  (type: string, turn: string, us: number, session: string | null = 'sess_1') =>
  (id: string) => ({
    id,
    timestamp_us: BASE_US + us,
    type,
    actor: 'agent',
    session_id: session,
    turn_id: turn,
    payload: { n: us },
  });

test('a finished turn lists its events and the messages from its start to its end', async (t) => {
  const store = await tempStore(t);
  addSession(store, 'sess_1', '0.5', 10);
  addMessage(store, 'm0', 'sess_1', null, 'user', 5); // an earlier turn's
  addMessage(store, 'm1', 'sess_1', 'turn_a', 'user', 99); // stored just before turn.started
  addMessage(store, 'm2', 'sess_1', null, 'assistant', 150);
  addMessage(store, 'm3', 'sess_1', null, 'assistant', 300); // after the turn ended
  seed(store, [
    turnEvent('turn.started', 'turn_a', 100),
    turnEvent('route.decided', 'turn_a', 110),
    turnEvent('turn.completed', 'turn_a', 200),
    turnEvent('turn.started', 'turn_b', 250),
  ]);
  const d = await queryTurn(store.kysely, 'turn_a', BASE_US + HOUR_US);
  assert.equal(d.turn_id, 'turn_a');
  assert.equal(d.session_id, 'sess_1');
  assert.equal(d.in_flight, false);
  assert.deepEqual(
    d.events.map((e) => [e.type, e.actor, e.timestamp, e.payload]),
    [
      ['turn.started', 'agent', at(100), { n: 100 }],
      ['route.decided', 'agent', at(110), { n: 110 }],
      ['turn.completed', 'agent', at(200), { n: 200 }],
    ],
  );
  assert.deepEqual(
    d.messages.map((m) => [m.id, m.role, m.content, m.metadata, m.created_at]),
    [
      ['m1', 'user', [{ type: 'text', text: 'm1' }], {}, at(99)],
      ['m2', 'assistant', [{ type: 'text', text: 'm2' }], {}, at(150)],
    ],
  );
});

test('a turn without a terminator is in flight up to now; a gap event ends it', async (t) => {
  const store = await tempStore(t);
  addSession(store, 'sess_1', '0', 10);
  addMessage(store, 'm1', 'sess_1', null, 'assistant', 500);
  seed(store, [turnEvent('turn.started', 'turn_open', 100), turnEvent('turn.started', 'turn_crashed', 100)]);
  const open = await queryTurn(store.kysely, 'turn_open', BASE_US + 1000);
  assert.equal(open.in_flight, true);
  assert.deepEqual(
    open.messages.map((m) => m.id),
    ['m1'],
  );
  seed(
    store,
    [turnEvent('bus.gap_detected', 'turn_crashed', 600), turnEvent('turn.cancelled', 'turn_open', 700)],
    '01MORE',
  );
  assert.equal((await queryTurn(store.kysely, 'turn_crashed', BASE_US + 1000)).in_flight, false);
  assert.equal((await queryTurn(store.kysely, 'turn_open', BASE_US + 1000)).in_flight, false);
});

test('a gateway turn has no session and no messages; an unknown id is 404 turn_not_found', async (t) => {
  const store = await tempStore(t);
  seed(store, [
    turnEvent('turn.started', 'turn_gw', 1, null),
    turnEvent('turn.completed', 'turn_gw', 2, null),
  ]);
  const d = await queryTurn(store.kysely, 'turn_gw', BASE_US + 10);
  assert.deepEqual([d.session_id, d.in_flight, d.events.length, d.messages], [null, false, 2, []]);
  await assert.rejects(
    queryTurn(store.kysely, 'turn_nope', BASE_US),
    (err) => isSvcError(err) && err.code === 'turn_not_found' && err.status === 404,
  );
});

test('sessions are listed by recency or by stored cost, up to the limit', async (t) => {
  const store = await tempStore(t);
  addSession(store, 'sess_a', '0.9', 30, 3);
  addSession(store, 'sess_b', '10.25', 10, 1);
  addSession(store, 'sess_c', '2', 20, 2);
  const recency = await querySessions(store.kysely, { order: 'recency', limit: 25 });
  assert.deepEqual(
    recency.map((s) => s.id),
    ['sess_a', 'sess_c', 'sess_b'],
  );
  assert.deepEqual(recency[0], {
    id: 'sess_a',
    workspace_path: '/w',
    active_model: 'anthropic:claude-sonnet-4-5',
    cost_usd: 0.9,
    turn_count: 3,
    created_at: at(0),
    updated_at: at(30),
  });
  const cost = await querySessions(store.kysely, { order: 'cost', limit: 2 });
  assert.deepEqual(
    cost.map((s) => [s.id, s.cost_usd]),
    [
      ['sess_b', 10.25],
      ['sess_c', 2],
    ],
  );
});

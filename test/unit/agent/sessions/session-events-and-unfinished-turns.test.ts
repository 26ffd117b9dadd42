import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import { findUnfinishedTurns, listEvents } from '#src/agent/sessions/events.ts';
import { beginTurn, createSession } from '#src/agent/sessions/store.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { formatUs } from '#src/lib/time.ts';
import { openStore } from '#src/store/open.ts';
import type { Database } from '#src/store/schema.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-sevents-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
const newId = createIdFactory();
let clockUs = Date.UTC(2026, 0, 1) * 1000;
function tickUs(): number {
  clockUs += 1000;
  return clockUs;
}
let n = 0;

async function open(t: { after: (fn: () => Promise<void>) => void }) {
  const store = await openStore(join(tmp, `s${++n}`, 'svc.db'));
  t.after(() => store.close());
  return store.kysely;
}

async function newSession(db: Kysely<Database>) {
  return createSession(db, {
    id: newId('sess_'),
    workspace_path: '/w',
    active_model: 'anthropic:claude-sonnet-4-5',
    routing_policy_version: 'v',
    now: formatUs(tickUs()),
  });
}

async function event(db: Kysely<Database>, sessionId: string | null, turnId: string | null, type: string) {
  const at = tickUs();
  const id = newId();
  await db
    .insertInto('events')
    .values({
      id,
      timestamp: formatUs(at),
      timestamp_us: at,
      session_id: sessionId,
      turn_id: turnId,
      type,
      actor: 'agent',
      payload: JSON.stringify({ n: at }),
      parent_event_id: null,
      sensitivity: 'private',
    })
    .execute();
  return id;
}

test('events of a session page by id cursor, filtered by type list and turn id', async (t) => {
  const db = await open(t);
  const s = await newSession(db);
  const other = await newSession(db);
  const [t1, t2] = [newId(), newId()];
  const ids = [
    await event(db, s.id, t1, 'turn.started'),
    await event(db, s.id, t1, 'route.decided'),
    await event(db, s.id, t1, 'turn.completed'),
    await event(db, s.id, t2, 'turn.started'),
    await event(db, s.id, t2, 'turn.completed'),
  ];
  await event(db, other.id, newId(), 'turn.started');
  const first = await listEvents(db, s.id, { limit: 2 });
  assert.deepEqual(
    first.events.map((e) => e.id),
    ids.slice(0, 2),
  );
  assert.equal(first.next_cursor, ids[1]);
  assert.equal(typeof first.events[0].payload, 'object');
  assert.equal(first.events[0].session_id, s.id);
  const rest = await listEvents(db, s.id, { limit: 10, after: first.next_cursor ?? undefined });
  assert.deepEqual(
    rest.events.map((e) => e.id),
    ids.slice(2),
  );
  assert.equal(rest.next_cursor, null);
  const ends = await listEvents(db, s.id, { limit: 10, types: ['turn.completed', 'route.decided'] });
  assert.deepEqual(
    ends.events.map((e) => e.type),
    ['route.decided', 'turn.completed', 'turn.completed'],
  );
  const second = await listEvents(db, s.id, { limit: 10, turn_id: t2 });
  assert.deepEqual(
    second.events.map((e) => e.id),
    ids.slice(3),
  );
});

test('unfinished turns are agent turns started and never ended, or still held by their session', async (t) => {
  const db = await open(t);
  const s = await newSession(db);
  const held = await newSession(db);
  const [done, cancelled, open1, heldTurn] = [newId(), newId(), newId(), newId()];
  await event(db, s.id, done, 'turn.started');
  await event(db, s.id, done, 'turn.completed');
  await event(db, s.id, cancelled, 'turn.started');
  await event(db, s.id, cancelled, 'turn.cancelled');
  const started = await event(db, s.id, open1, 'turn.started');
  await event(db, null, newId(), 'turn.started'); // gateway traffic has no session: not ours to close
  await beginTurn(db, held.id, heldTurn, formatUs(clockUs));
  assert.deepEqual(await findUnfinishedTurns(db), [
    { session_id: s.id, turn_id: open1, started_event_id: started },
    { session_id: held.id, turn_id: heldTurn, started_event_id: null },
  ]);
});

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { appendMessage } from '#src/agent/sessions/messages.ts';
import {
  addSessionCost,
  beginTurn,
  clearTurn,
  createSession,
  endSession,
  finishTurn,
  getSession,
  listSessions,
  purgeSession,
  setActiveModel,
} from '#src/agent/sessions/store.ts';
import { insertToolCall } from '#src/agent/sessions/tool-calls.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { formatUs } from '#src/lib/time.ts';
import { openStore, type Store } from '#src/store/open.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-sessions-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const newId = createIdFactory();
let clockUs = Date.UTC(2026, 0, 1) * 1000;
function tickUs(): number {
  clockUs += 1000;
  return clockUs;
}
const now = () => formatUs(tickUs());

async function fresh(t: { after: (fn: () => Promise<void>) => void }): Promise<Store> {
  const store = await openStore(join(tmp, `s${++n}`, 'svc.db'));
  t.after(() => store.close());
  return store;
}

function session(extra: Partial<Parameters<typeof createSession>[1]> = {}) {
  return {
    id: newId('sess_'),
    workspace_path: '/w/a',
    active_model: 'anthropic:claude-sonnet-4-5',
    routing_policy_version: 'abc',
    now: now(),
    ...extra,
  };
}

test('a created session reads back with zero turns, zero cost and no turn in flight', async (t) => {
  const { kysely: db } = await fresh(t);
  const created = await createSession(db, session());
  assert.equal(created.turn_count, 0);
  assert.equal(created.cost_so_far_usd, '0');
  assert.equal(created.current_turn_id, null);
  assert.equal(created.is_worker, 0);
  assert.equal(created.created_at, created.updated_at);
  assert.deepEqual(await getSession(db, created.id), created);
  assert.equal(await getSession(db, 'sess_missing'), undefined);
});

test('only one turn holds a session; finishing counts it, adds its cost exactly and frees the session', async (t) => {
  const { kysely: db } = await fresh(t);
  const s = await createSession(db, session());
  const t1 = newId();
  assert.equal(await beginTurn(db, s.id, t1, now()), true);
  assert.equal(await beginTurn(db, s.id, newId(), now()), false);
  const held = await getSession(db, s.id);
  assert.equal(held?.current_turn_id, t1);
  assert.equal(held?.current_turn_status, 'in_flight');
  assert.equal(await finishTurn(db, s.id, { turnId: newId(), costDelta: '1', now: now() }), false);
  const finishedAt = now();
  assert.equal(await finishTurn(db, s.id, { turnId: t1, costDelta: '0.1', now: finishedAt }), true);
  const t2 = newId();
  assert.equal(await beginTurn(db, s.id, t2, now()), true);
  assert.equal(await finishTurn(db, s.id, { turnId: t2, costDelta: '0.2', now: now() }), true);
  const after = await getSession(db, s.id);
  assert.equal(after?.turn_count, 2);
  assert.equal(after?.cost_so_far_usd, '0.300000'); // 0.1 + 0.2 in floats is 0.30000000000000004
  assert.equal(after?.current_turn_id, null);
  assert.equal(after?.current_turn_status, null);
  assert.ok((after?.updated_at ?? '') > finishedAt);
});

test('a thousand roll-ups of one micro-dollar sum to exactly 0.001000', async (t) => {
  const { kysely: db } = await fresh(t);
  const s = await createSession(db, session());
  for (let i = 0; i < 1000; i++) await addSessionCost(db, s.id, '0.000001');
  assert.equal((await getSession(db, s.id))?.cost_so_far_usd, '0.001000');
  await assert.rejects(
    addSessionCost(db, 'sess_none', '1'),
    (e) => isSvcError(e) && e.code === 'session_not_found',
  );
});

test('an ended session refuses new turns and keeps its first ended_at', async (t) => {
  const { kysely: db } = await fresh(t);
  const s = await createSession(db, session());
  const endedAt = now();
  const ended = await endSession(db, s.id, endedAt);
  assert.equal(ended?.ended_at, endedAt);
  assert.equal(ended?.disposition, 'completed');
  assert.equal((await endSession(db, s.id, now()))?.ended_at, endedAt);
  assert.equal(await beginTurn(db, s.id, newId(), now()), false);
  assert.equal(await endSession(db, 'sess_none', now()), undefined);
});

test('clearTurn frees a session only for the turn that holds it, without counting it', async (t) => {
  const { kysely: db } = await fresh(t);
  const s = await createSession(db, session());
  const turn = newId();
  await beginTurn(db, s.id, turn, now());
  assert.equal(await clearTurn(db, s.id, newId()), false);
  assert.equal(await clearTurn(db, s.id, turn), true);
  const row = await getSession(db, s.id);
  assert.equal(row?.current_turn_id, null);
  assert.equal(row?.turn_count, 0);
});

test('setActiveModel changes the model and bumps updated_at; sticky changes only when given', async (t) => {
  const { kysely: db } = await fresh(t);
  const s = await createSession(db, session({ sticky: true }));
  assert.equal(s.sticky, 1);
  const at = now();
  await setActiveModel(db, s.id, 'openai:gpt-5-mini', at);
  const row = await getSession(db, s.id);
  assert.equal(row?.active_model, 'openai:gpt-5-mini');
  assert.equal(row?.updated_at, at);
  assert.equal(row?.sticky, 1);
  await setActiveModel(db, s.id, 'openai:gpt-5-mini', now(), false);
  assert.equal((await getSession(db, s.id))?.sticky, 0);
  await setActiveModel(db, s.id, 'anthropic:claude-sonnet-4-5', now(), true);
  assert.equal((await getSession(db, s.id))?.sticky, 1);
});

test('sessions list most recent first, filtered by workspace and worker flag, paged by an opaque cursor', async (t) => {
  const { kysely: db } = await fresh(t);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++)
    ids.push((await createSession(db, session({ workspace_path: i % 2 ? '/w/b' : '/w/a' }))).id);
  const worker = await createSession(db, session({ is_worker: true, parent_session_id: ids[0] }));
  const expected = [worker.id, ...[...ids].reverse()];
  const seen: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listSessions(db, { limit: 2, cursor });
    seen.push(...page.sessions.map((s) => s.id));
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  assert.deepEqual(seen, expected);
  const exact = await listSessions(db, { limit: 6 });
  assert.equal(exact.sessions.length, 6);
  assert.equal(exact.next_cursor, null);
  const b = await listSessions(db, { limit: 10, workspace: '/w/b' });
  assert.deepEqual(
    b.sessions.map((s) => s.id),
    [ids[3], ids[1]],
  );
  const workers = await listSessions(db, { limit: 10, is_worker: true });
  assert.deepEqual(
    workers.sessions.map((s) => s.id),
    [worker.id],
  );
  const planners = await listSessions(db, { limit: 10, is_worker: false });
  assert.equal(planners.sessions.length, 5);
  await assert.rejects(
    listSessions(db, { limit: 2, cursor: 'garbage' }),
    (e) => isSvcError(e) && e.code === 'validation_error' && e.details?.field === 'cursor',
  );
});

test('purge removes the session, its worker sessions, their messages, tool calls and events only', async (t) => {
  const { kysely: db } = await fresh(t);
  const parent = await createSession(db, session());
  const worker = await createSession(db, session({ is_worker: true, parent_session_id: parent.id }));
  const other = await createSession(db, session());
  for (const s of [parent, worker, other]) {
    const turn = newId();
    const msg = await appendMessage(db, {
      id: newId(),
      session_id: s.id,
      turn_id: turn,
      role: 'user',
      content: [{ type: 'text', text: 'hi' }],
      created_at: now(),
    });
    await insertToolCall(db, {
      id: newId(),
      session_id: s.id,
      turn_id: turn,
      message_id: msg.id,
      tool_use_id: 'toolu_1',
      tool_name: 'read_file',
      input: { path: 'a' },
      started_at: now(),
    });
    const at = tickUs();
    await db
      .insertInto('events')
      .values({
        id: newId(),
        timestamp: formatUs(at),
        timestamp_us: at,
        session_id: s.id,
        turn_id: turn,
        type: 'turn.started',
        actor: 'agent',
        payload: '{}',
        parent_event_id: null,
        sensitivity: 'private',
      })
      .execute();
  }
  assert.deepEqual(await purgeSession(db, parent.id), [parent.id, worker.id]);
  const count = async (table: 'sessions' | 'messages' | 'tool_calls' | 'events') =>
    (
      await db
        .selectFrom(table)
        .select(({ fn }) => fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n;
  assert.equal(await count('sessions'), 1);
  assert.equal(await count('messages'), 1);
  assert.equal(await count('tool_calls'), 1);
  assert.equal(await count('events'), 1);
  assert.equal((await getSession(db, other.id))?.id, other.id);
  assert.deepEqual(await purgeSession(db, parent.id), []);
});

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import { listEvents } from '#src/agent/sessions/events.ts';
import { appendMessage, listMessages } from '#src/agent/sessions/messages.ts';
import {
  findUnfinishedTurns,
  freeUnfinishedTurns,
  publishRecoveredTurns,
} from '#src/agent/sessions/recover.ts';
import { beginTurn, createSession, finishTurn, getSession } from '#src/agent/sessions/store.ts';
import { finishToolCall, insertToolCall, listToolCalls } from '#src/agent/sessions/tool-calls.ts';
import { createBus } from '#src/events/bus.ts';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { formatUs } from '#src/lib/time.ts';
import { openStore, type Store } from '#src/store/open.ts';
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

async function openFull(t: { after: (fn: () => Promise<void>) => void }) {
  const store = await openStore(join(tmp, `s${++n}`, 'svc.db'));
  t.after(() => store.close());
  return store;
}

async function open(t: { after: (fn: () => Promise<void>) => void }) {
  return (await openFull(t)).kysely;
}

/** A full store with one session whose turn has begun (the row claims it, turn.started is stored). */
async function startedTurn(t: { after: (fn: () => Promise<void>) => void }) {
  const store = await openFull(t);
  const db = store.kysely;
  const s = await newSession(db);
  const turn = newId();
  await beginTurn(db, s.id, turn, formatUs(tickUs()));
  await event(db, s.id, turn, 'turn.started');
  return { store, db, s, turn };
}

/** What a restart publishes for the turns recovery freed, written to `store` through the trace writer. */
async function publishRecovery(store: Store, turns: Parameters<typeof publishRecoveredTurns>[1]) {
  const bus = createBus({ newId, clock: { nowUs: tickUs }, log: silentLogger });
  const writer = createTraceWriter({ store, log: silentLogger });
  bus.subscribe(writer.subscriber);
  await publishRecoveredTurns(bus, turns);
  await writer.stop();
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

async function event(
  db: Kysely<Database>,
  sessionId: string | null,
  turnId: string | null,
  type: string,
  parent: string | null = null,
  payload: Record<string, unknown> = {},
) {
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
      payload: JSON.stringify({ n: at, ...payload }),
      parent_event_id: parent,
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
  const closedCall = await event(db, s.id, open1, 'llm.call_started');
  await event(db, s.id, open1, 'llm.call_completed', closedCall);
  const openCall = await event(db, s.id, open1, 'llm.call_started');
  await event(db, null, newId(), 'turn.started'); // gateway traffic has no session: not ours to close
  await beginTurn(db, held.id, heldTurn, formatUs(clockUs));
  const found = await findUnfinishedTurns(db);
  assert.deepEqual(
    found.map((f) => [f.session_id, f.turn_id, f.started_event_id, f.open_call_ids, f.gap_reported]),
    [
      [s.id, open1, started, [openCall], false],
      [held.id, heldTurn, null, [], false],
    ],
  );
  assert.match(found[0].first_event_at, /Z$/);
});

test('recovery frees the session, cancels leftovers and publishes the gap then turn.cancelled', async (t) => {
  const store = await openFull(t);
  const db = store.kysely;
  const s = await newSession(db);
  const turn = newId();
  await beginTurn(db, s.id, turn, formatUs(tickUs()));
  const started = await event(db, s.id, turn, 'turn.started');
  const call = await event(db, s.id, turn, 'llm.call_started');
  const msg = await appendMessage(db, {
    id: newId(),
    session_id: s.id,
    turn_id: turn,
    role: 'assistant',
    content: [{ type: 'text', text: 'partial' }],
    status: 'in_progress',
    created_at: formatUs(tickUs()),
  });
  await insertToolCall(db, {
    id: newId(),
    session_id: s.id,
    turn_id: turn,
    message_id: msg.id,
    tool_use_id: 'toolu_1',
    tool_name: 'run_command',
    input: { command: 'sleep 100' },
    started_at: formatUs(tickUs()),
  });
  const turns = await freeUnfinishedTurns(db, formatUs(tickUs()), () => newId());
  assert.equal(turns.length, 1);
  assert.equal((await getSession(db, s.id))?.current_turn_id, null);
  assert.equal((await listMessages(db, s.id, { limit: 10 })).messages[0].status, 'cancelled');
  const [tool] = await listToolCalls(db, s.id);
  assert.deepEqual([tool.status, tool.error_class], ['cancelled', 'cancelled']);

  await publishRecovery(store, turns);
  const rows = await db
    .selectFrom('events')
    .select(['type', 'parent_event_id', 'payload', 'session_id'])
    .where('turn_id', '=', turn)
    .where('type', 'in', ['bus.gap_detected', 'turn.cancelled'])
    .orderBy('id')
    .execute();
  assert.deepEqual(
    rows.map((r) => [r.type, r.parent_event_id, r.session_id]),
    [
      ['bus.gap_detected', call, s.id],
      ['turn.cancelled', started, s.id],
    ],
  );
  assert.deepEqual(JSON.parse(rows[0].payload).llm_call_started_ids, [call]);
  assert.equal(JSON.parse(rows[0].payload).reason, 'process_ended');
  assert.equal(JSON.parse(rows[1].payload).reason, 'server_restart');
  assert.deepEqual(await findUnfinishedTurns(db), []);
});

test('a tool whose row was closed before its end event was committed is closed in the trace with the row’s outcome, not as cancelled', async (t) => {
  const { store, db, s, turn } = await startedTurn(t);
  const closeRow = async (useId: string, name: string, outcome: 'completed' | 'failed', output: string) => {
    const id = newId();
    await insertToolCall(db, {
      id,
      session_id: s.id,
      turn_id: turn,
      message_id: null,
      tool_use_id: useId,
      tool_name: name,
      input: {},
      started_at: formatUs(tickUs()),
    });
    const called = await event(db, s.id, turn, 'tool.called', null, { tool_use_id: useId, tool_name: name });
    // the process dies here: the row holds the outcome, the end event never reached the store
    await finishToolCall(db, id, {
      output,
      status: outcome,
      error_class: outcome === 'failed' ? 'not_found' : null,
      completed_at: formatUs(tickUs() + 250_000),
    });
    return called;
  };
  const ran = await closeRow('toolu_ok', 'read_file', 'completed', 'héllo');
  const missing = await closeRow('toolu_bad', 'read_file', 'failed', 'no such file: x.txt');
  const turns = await freeUnfinishedTurns(db, formatUs(tickUs()), () => newId());
  assert.deepEqual(
    (await listToolCalls(db, s.id)).map((c) => c.status),
    ['completed', 'failed'],
  );
  await publishRecovery(store, turns);
  const ends = (
    await db
      .selectFrom('events')
      .select(['type', 'parent_event_id', 'payload'])
      .where('turn_id', '=', turn)
      .where('type', 'in', ['tool.completed', 'tool.failed'])
      .orderBy('id')
      .execute()
  ).map((r) => ({ type: r.type, parent: r.parent_event_id, ...JSON.parse(r.payload) }));
  assert.equal(ends.length, 2);
  assert.deepEqual(
    [ends[0].type, ends[0].parent, ends[0].tool_use_id, ends[0].tool_name, ends[0].output_bytes],
    ['tool.completed', ran, 'toolu_ok', 'read_file', 6],
  );
  assert.ok(ends[0].latency_ms >= 250, `latency_ms runs to the row's completed_at: ${ends[0].latency_ms}`);
  assert.deepEqual(
    [ends[1].type, ends[1].parent, ends[1].tool_use_id, ends[1].error_class, ends[1].message],
    ['tool.failed', missing, 'toolu_bad', 'not_found', 'no such file: x.txt'],
  );
});

test('recovery rolls the crashed turn’s stamped costs, its workers’ included, into the session exactly', async (t) => {
  const store = await openFull(t);
  const db = store.kysely;
  const planner = await newSession(db);
  const worker = await createSession(db, {
    id: newId('sess_'),
    workspace_path: '/w',
    active_model: 'anthropic:claude-haiku-4-5',
    routing_policy_version: 'v',
    is_worker: true,
    parent_session_id: planner.id,
    now: formatUs(tickUs()),
  });
  const [turn, workerTurn] = [newId(), newId()];
  await beginTurn(db, planner.id, turn, formatUs(tickUs()));
  await event(db, planner.id, turn, 'turn.started');
  await event(db, planner.id, turn, 'route.decided', null, { chosen_model: 'anthropic:claude-sonnet-4-5' });
  for (const cost of ['0.1', '0.2']) {
    const call = await event(db, planner.id, turn, 'llm.call_started');
    await event(db, planner.id, turn, 'llm.call_completed', call, { cost_usd: cost });
  }
  await event(db, planner.id, turn, 'delegate.started', null, { worker_session_id: worker.id });
  await beginTurn(db, worker.id, workerTurn, formatUs(tickUs()));
  await event(db, worker.id, workerTurn, 'turn.started');
  const wCall = await event(db, worker.id, workerTurn, 'llm.call_started');
  await event(db, worker.id, workerTurn, 'llm.call_completed', wCall, { cost_usd: '0.000003' });
  const wCut = await event(db, worker.id, workerTurn, 'llm.call_started');
  await event(db, worker.id, workerTurn, 'llm.call_failed', wCut, { cost_usd: '0.000004' });
  // a turn whose session was already settled (the process died before its end event): not counted twice
  const settled = await newSession(db);
  const settledTurn = newId();
  await beginTurn(db, settled.id, settledTurn, formatUs(tickUs()));
  await event(db, settled.id, settledTurn, 'turn.started');
  const sCall = await event(db, settled.id, settledTurn, 'llm.call_started');
  await event(db, settled.id, settledTurn, 'llm.call_completed', sCall, { cost_usd: '0.5' });
  await finishTurn(db, settled.id, { turnId: settledTurn, costDelta: '0.5', now: formatUs(tickUs()) });

  const turns = await freeUnfinishedTurns(db, formatUs(tickUs()), () => newId());
  assert.equal(turns.length, 3);
  const p = (await getSession(db, planner.id))!;
  assert.deepEqual([p.cost_so_far_usd, p.turn_count, p.current_turn_id], ['0.300007', 1, null]);
  const w = (await getSession(db, worker.id))!;
  assert.deepEqual([w.cost_so_far_usd, w.turn_count], ['0.000007', 1]);
  assert.notEqual(w.ended_at, null, 'a recovered worker ends, as after a live delegation');
  assert.equal(p.ended_at, null);
  const again = (await getSession(db, settled.id))!;
  assert.deepEqual([again.cost_so_far_usd, again.turn_count], ['0.500000', 1]);
  await freeUnfinishedTurns(db, formatUs(tickUs()), () => newId()); // a start that died before publishing the recovery
  assert.equal(
    (await getSession(db, planner.id))!.cost_so_far_usd,
    '0.300007',
    'a second start adds nothing',
  );

  await publishRecovery(store, turns);
  const row = await db
    .selectFrom('events')
    .select('payload')
    .where('turn_id', '=', turn)
    .where('type', '=', 'turn.cancelled')
    .executeTakeFirstOrThrow();
  assert.deepEqual(JSON.parse(row.payload), {
    reason: 'server_restart',
    session_id: planner.id,
    turn_id: turn,
    cost_usd: '0.300007',
    model: 'anthropic:claude-sonnet-4-5',
    steps: 2,
  });
});

test('recovery’s tool.completed carries truncated from the row, as the live path writes it', async (t) => {
  const { store, db, s, turn } = await startedTurn(t);
  for (const [useId, truncated] of [
    ['toolu_cut', true],
    ['toolu_whole', false],
  ] as const) {
    const id = newId();
    await insertToolCall(db, {
      id,
      session_id: s.id,
      turn_id: turn,
      message_id: null,
      tool_use_id: useId,
      tool_name: 'read_file',
      input: {},
      started_at: formatUs(tickUs()),
    });
    await event(db, s.id, turn, 'tool.called', null, { tool_use_id: useId, tool_name: 'read_file' });
    // the process dies after closing the row, before tool.completed is committed
    await finishToolCall(db, id, {
      output: 'x',
      status: 'completed',
      error_class: null,
      completed_at: formatUs(tickUs()),
      truncated,
    });
  }
  const turns = await freeUnfinishedTurns(db, formatUs(tickUs()), () => newId());
  await publishRecovery(store, turns);
  const ends = (
    await db
      .selectFrom('events')
      .select(['payload'])
      .where('turn_id', '=', turn)
      .where('type', '=', 'tool.completed')
      .orderBy('id')
      .execute()
  ).map((r) => JSON.parse(r.payload) as { tool_use_id: string; truncated?: boolean });
  assert.deepEqual(
    ends.map((e) => [e.tool_use_id, e.truncated]),
    [
      ['toolu_cut', true],
      ['toolu_whole', false],
    ],
  );
});

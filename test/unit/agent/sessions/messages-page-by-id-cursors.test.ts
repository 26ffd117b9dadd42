import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  appendMessage,
  CANCELLED_NOTE,
  listMessages,
  sessionHistory,
  setMessageStatus,
  UNANSWERED_NOTE,
} from '#src/agent/sessions/messages.ts';
import { createSession } from '#src/agent/sessions/store.ts';
import { finishToolCall, insertToolCall, listToolCalls } from '#src/agent/sessions/tool-calls.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { formatUs } from '#src/lib/time.ts';
import { openStore } from '#src/store/open.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-messages-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
const newId = createIdFactory();
let clockUs = Date.UTC(2026, 0, 1) * 1000;
function tickUs(): number {
  clockUs += 1000;
  return clockUs;
}
const now = () => formatUs(tickUs());
let n = 0;

async function sessionWithMessages(t: { after: (fn: () => Promise<void>) => void }, count: number) {
  const store = await openStore(join(tmp, `s${++n}`, 'svc.db'));
  t.after(() => store.close());
  const db = store.kysely;
  const s = await createSession(db, {
    id: newId('sess_'),
    workspace_path: '/w',
    active_model: 'anthropic:claude-sonnet-4-5',
    routing_policy_version: 'v',
    now: now(),
  });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const row = await appendMessage(db, {
      id: newId(),
      session_id: s.id,
      turn_id: null,
      role: i % 2 ? 'assistant' : 'user',
      content: [{ type: 'text', text: `m${i}` }],
      created_at: now(),
    });
    ids.push(row.id);
  }
  return { db, sessionId: s.id, ids };
}

test('with no cursor the newest `limit` messages come back oldest first, with older ones flagged', async (t) => {
  const { db, sessionId, ids } = await sessionWithMessages(t, 5);
  const page = await listMessages(db, sessionId, { limit: 2 });
  assert.deepEqual(
    page.messages.map((m) => m.id),
    ids.slice(3),
  );
  assert.equal(page.has_more_before, true);
  assert.equal(page.has_more_after, false);
  const all = await listMessages(db, sessionId, { limit: 50 });
  assert.equal(all.messages.length, 5);
  assert.equal(all.has_more_before, false);
  assert.deepEqual(all.messages[0].content, [{ type: 'text', text: 'm0' }]);
  assert.deepEqual(all.messages[0].metadata, {});
  assert.equal(all.messages[0].status, 'completed');
  assert.equal(all.messages[1].role, 'assistant');
});

test('before pages backwards and after pages forwards, each flagging the other side', async (t) => {
  const { db, sessionId, ids } = await sessionWithMessages(t, 6);
  const older = await listMessages(db, sessionId, { before: ids[4], limit: 2 });
  assert.deepEqual(
    older.messages.map((m) => m.id),
    [ids[2], ids[3]],
  );
  assert.deepEqual([older.has_more_before, older.has_more_after], [true, true]);
  const oldest = await listMessages(db, sessionId, { before: ids[2], limit: 2 });
  assert.deepEqual(
    oldest.messages.map((m) => m.id),
    [ids[0], ids[1]],
  );
  assert.deepEqual([oldest.has_more_before, oldest.has_more_after], [false, true]);
  const newer = await listMessages(db, sessionId, { after: ids[1], limit: 3 });
  assert.deepEqual(
    newer.messages.map((m) => m.id),
    [ids[2], ids[3], ids[4]],
  );
  assert.deepEqual([newer.has_more_before, newer.has_more_after], [true, true]);
  const tail = await listMessages(db, sessionId, { after: ids[3], limit: 3 });
  assert.deepEqual(
    tail.messages.map((m) => m.id),
    [ids[4], ids[5]],
  );
  assert.deepEqual([tail.has_more_before, tail.has_more_after], [true, false]);
  const between = await listMessages(db, sessionId, { after: ids[0], before: ids[5], limit: 2 });
  assert.deepEqual(
    between.messages.map((m) => m.id),
    [ids[3], ids[4]],
  );
  assert.deepEqual([between.has_more_before, between.has_more_after], [true, true]);
});

test('an empty session has no messages on either side', async (t) => {
  const { db, sessionId } = await sessionWithMessages(t, 0);
  assert.deepEqual(await listMessages(db, sessionId, { limit: 50 }), {
    messages: [],
    has_more_before: false,
    has_more_after: false,
  });
});

test('the history sent to the model is every completed message in order; a cancelled answer is a note, a refused prompt left out', async (t) => {
  const { db, sessionId, ids } = await sessionWithMessages(t, 5);
  await setMessageStatus(db, ids[1], 'cancelled');
  await setMessageStatus(db, ids[2], 'completed', [{ type: 'text', text: 'final' }]);
  await setMessageStatus(db, ids[4], 'cancelled'); // a user prompt refused at submission
  assert.deepEqual(await sessionHistory(db, sessionId), [
    { role: 'user', content: [{ type: 'text', text: 'm0' }] },
    { role: 'user', content: [{ type: 'text', text: CANCELLED_NOTE }] },
    { role: 'user', content: [{ type: 'text', text: 'final' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'm3' }] },
  ]);
  const page = await listMessages(db, sessionId, { limit: 50 });
  assert.equal(page.messages[1].status, 'cancelled');
});

test('a prompt after a turn that ended unanswered (at the step limit, on its tool results) gets a note first', async (t) => {
  const { db, sessionId } = await sessionWithMessages(t, 0);
  const [first, second] = [newId(), newId()];
  const add = (turn: string, role: 'user' | 'assistant', content: any[]) =>
    appendMessage(db, {
      id: newId(),
      session_id: sessionId,
      turn_id: turn,
      role,
      content,
      created_at: now(),
    });
  await add(first, 'user', [{ type: 'text', text: 'list the files' }]);
  await add(first, 'assistant', [{ type: 'tool_use', id: 'toolu_1', name: 'list_files', input: {} }]);
  await add(first, 'user', [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' }]);
  await add(second, 'user', [{ type: 'text', text: 'what is 2+2' }]);
  assert.deepEqual(
    (await sessionHistory(db, sessionId)).map((m) => m.content[0]),
    [
      { type: 'text', text: 'list the files' },
      { type: 'tool_use', id: 'toolu_1', name: 'list_files', input: {} },
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' },
      { type: 'text', text: UNANSWERED_NOTE },
      { type: 'text', text: 'what is 2+2' },
    ],
  );
});

test('a tool call is opened running and closed with its output, status and error class', async (t) => {
  const { db, sessionId, ids } = await sessionWithMessages(t, 1);
  const turn = newId();
  const call = await insertToolCall(db, {
    id: newId(),
    session_id: sessionId,
    turn_id: turn,
    message_id: ids[0],
    tool_use_id: 'toolu_1',
    tool_name: 'read_file',
    input: { path: 'README.md' },
    started_at: now(),
  });
  assert.equal(call.status, 'running');
  assert.equal(call.input, '{"path":"README.md"}');
  const done = now();
  await finishToolCall(db, call.id, {
    output: 'no such file',
    status: 'failed',
    error_class: 'not_found',
    completed_at: done,
  });
  const [row] = await listToolCalls(db, sessionId, turn);
  assert.equal(row.output, 'no such file');
  assert.equal(row.status, 'failed');
  assert.equal(row.error_class, 'not_found');
  assert.equal(row.completed_at, done);
});

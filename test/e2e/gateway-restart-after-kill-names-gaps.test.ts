/**
 * After kill -9 the calls that were in flight never get their closing events (issue 17 item 8). The next
 * gateway start names each such turn once in a `bus.gap_detected` (parent: the unclosed llm.call_started),
 * so nothing reads it as in flight forever; a second restart does not name it again, and calls that
 * finished are never named.
 */
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { type RunningSvc, startSvc } from '../helpers/svc.ts';

const MODEL = 'openai:gpt-5-mini';

interface Row {
  id: string;
  type: string;
  turn_id: string | null;
  parent_event_id: string | null;
  actor: string;
  payload: string;
}

function query(dbPath: string, sql: string, ...params: string[]): Row[] {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    return db.prepare(sql).all(...params) as unknown as Row[];
  } finally {
    db.close();
  }
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a restart after kill -9 names the calls left in flight once in bus.gap_detected', {
  timeout: 90_000,
}, async (t) => {
  const stack = await startGatewayStack();
  const restarted: RunningSvc[] = [];
  t.after(async () => {
    for (const gw of restarted) await gw.stop();
    await stack.stop();
  });
  const db = stack.files.db;
  const chat = (url: string) =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });

  const finished = await chat(stack.gw.url);
  assert.equal(finished.status, 200);
  const finishedTurn = finished.headers.get('svc-request-id')!;

  stack.fake.setDefault('hang');
  const hanging = chat(stack.gw.url).catch(() => undefined); // the gateway dies under it
  const started = await waitFor('the hanging call to be committed as started', () =>
    query(db, "SELECT * FROM events WHERE type = 'llm.call_started' AND turn_id != ?", finishedTurn).at(0),
  );
  stack.gw.child.kill('SIGKILL');
  await stack.gw.stop();
  await hanging;
  stack.fake.setDefault(undefined);
  assert.deepEqual(
    query(db, "SELECT * FROM events WHERE turn_id = ? AND type != 'route.decided'", started.turn_id!).map(
      (r) => r.type,
    ),
    ['llm.call_started'],
    'the killed call has no closing event',
  );

  const second = await startSvc(['gateway', '--port', '{port}'], { env: stack.files.env });
  restarted.push(second);
  const gaps = query(db, "SELECT * FROM events WHERE type = 'bus.gap_detected'");
  assert.equal(gaps.length, 1, 'one gap event, committed before the gateway listens');
  const [gap] = gaps;
  assert.equal(gap.turn_id, started.turn_id);
  assert.equal(gap.parent_event_id, started.id);
  assert.equal(gap.actor, 'gateway');
  const payload = JSON.parse(gap.payload);
  assert.equal(payload.reason, 'process_ended');
  assert.equal(payload.turn_id, started.turn_id);
  assert.deepEqual(payload.llm_call_started_ids, [started.id]);
  // the next start scans from this one: the watermark moved past the named turn once its gap was stored
  const [meta] = query(db, "SELECT value AS id FROM store_meta WHERE key = 'gateway_gap_scan_from_us'");
  const [startedAt] = query(db, 'SELECT timestamp_us AS id FROM events WHERE id = ?', started.id);
  assert.ok(
    Number(meta.id) > Number(startedAt.id),
    `watermark ${meta.id} after the killed call ${startedAt.id}`,
  );

  // the gateway still serves, and a graceful stop leaves nothing open
  assert.equal((await chat(second.url)).status, 200);
  assert.equal(await second.stop(), 0);

  const third = await startSvc(['gateway', '--port', '{port}'], { env: stack.files.env });
  restarted.push(third);
  assert.equal(query(db, "SELECT * FROM events WHERE type = 'bus.gap_detected'").length, 1, 'named once');

  // nothing is in flight: every started call has a closing event or a gap naming its turn
  const open = query(
    db,
    `SELECT s.* FROM events s WHERE s.type = 'llm.call_started' AND NOT EXISTS (
       SELECT 1 FROM events c WHERE c.turn_id = s.turn_id
         AND c.type IN ('llm.call_completed', 'llm.call_failed', 'bus.gap_detected'))`,
  );
  assert.deepEqual(open, []);
  const openTurns = query(
    db,
    `SELECT DISTINCT s.turn_id FROM events s WHERE s.type = 'route.decided' AND NOT EXISTS (
       SELECT 1 FROM events c WHERE c.turn_id = s.turn_id
         AND c.type IN ('turn.completed', 'turn.cancelled', 'bus.gap_detected'))`,
  );
  assert.deepEqual(openTurns, []);
});

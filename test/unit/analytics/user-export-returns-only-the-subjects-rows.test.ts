/**
 * runUserExport: exactly the subject's rows (any type, ascending id, never a prefix-sharing neighbour),
 * the doc-3 fields in order with the stored payload text untouched, read page by page, and one
 * analytics.user_exported audit event after the last row with the realised counts and window.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  countUserEvents,
  EXPORT_FIELDS,
  resolveWindow,
  runUserExport,
  type UserExportDeps,
} from '#src/analytics/index.ts';
import { createBus } from '#src/events/bus.ts';
import type { EventInput } from '#src/events/envelope.ts';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { openStore, type SqliteStore } from '#src/store/open.ts';
import { BASE_US, callPayload, insertEvents, seqId } from '../../helpers/event-rows.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-export-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;

/** A fresh store with a bus recording what it stamps (the export stores it) and what it delivers. */
async function setup(t: { after: (fn: () => unknown) => void }) {
  const store = await openStore(join(tmp, `s${++n}.db`));
  t.after(() => store.close());
  const published: EventInput[] = [];
  const delivered: string[] = [];
  const real = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const deps: UserExportDeps = {
    store,
    bus: {
      stamp(input) {
        published.push(input as EventInput);
        return real.stamp(input);
      },
      deliverStored(event) {
        delivered.push(event.id);
      },
    },
  };
  return { store, deps, published, delivered };
}

async function exportAll(deps: UserExportDeps, userId: string, window = resolveWindow({})) {
  const chunks: string[] = [];
  const summary = await runUserExport(deps, { userId, window }, (c) => {
    chunks.push(c);
  });
  const text = chunks.join('');
  const lines = text === '' ? [] : text.trimEnd().split('\n');
  return { summary, text, chunks, rows: lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const USERS = ['u1', 'u10', 'u1_', 'U1', 'xu1', 'u1-x'];

function seedMixed(store: SqliteStore): void {
  const types = ['llm.call_completed', 'llm.call_failed', 'gateway.key_issued', 'quota.alert', 'tool.called'];
  insertEvents(store.db, 120, (i) => ({
    id: seqId(1000 - i), // inserted in descending id order: the export must sort
    timestamp_us: BASE_US + i,
    type: types[i % types.length],
    session_id: i % 3 === 0 ? `sess_${i}` : null,
    turn_id: `turn_${i}`,
    parent_event_id: i % 4 === 0 ? seqId(5000 + i) : null,
    sensitivity: i % 5 === 4 ? 'private' : 'pseudonymous',
    payload: callPayload(USERS[i % USERS.length], { seq: i }),
  }));
  // events with no user, and a user id only in free text or another field
  insertEvents(store.db, 5, (i) => ({
    id: seqId(2000 + i),
    timestamp_us: BASE_US + 500 + i,
    payload: { note: 'mentions u1 in text', team_id: 'u1', user_id: i % 2 ? null : undefined },
  }));
}

test('the export holds every row of the subject and none of u10, u1_, U1 or other neighbours', async (t) => {
  const { store, deps } = await setup(t);
  seedMixed(store);
  const { rows } = await exportAll(deps, 'u1');
  assert.equal(rows.length, 20);
  for (const r of rows) assert.equal((r.payload as { user_id: string }).user_id, 'u1');
  const ids = rows.map((r) => r.id as string);
  assert.deepEqual(ids, [...ids].sort(), 'ascending id');
  assert.equal(new Set(rows.map((r) => r.type)).size, 5, 'every event type of the subject');
  for (const other of USERS.slice(1)) {
    const o = await exportAll(deps, other);
    assert.equal(o.rows.length, 20, other);
    for (const r of o.rows) assert.equal((r.payload as { user_id: string }).user_id, other);
  }
  assert.equal((await exportAll(deps, 'u')).rows.length, 0);
  assert.equal((await exportAll(deps, 'nobody')).rows.length, 0);
});

test('each line has the fields of doc 3 in order, with the stored payload text passed through byte for byte', async (t) => {
  const { store, deps } = await setup(t);
  const payload =
    '{"user_id":"u1","cost_usd":"0.000001230","big":12345678901234567890,"f":1.50,"e":1e-7,"s":"é\\u00e9\\n\\"q\\"","nested":{"user_id":"other"}}';
  insertEvents(store.db, 1, () => ({
    id: seqId(1),
    timestamp_us: BASE_US + 123_456,
    session_id: 'sess_1',
    turn_id: 'turn_1',
    parent_event_id: seqId(0),
    type: 'tool.called',
    actor: 'tool',
    sensitivity: 'private',
    payload,
  }));
  const { text, rows, summary } = await exportAll(deps, 'u1');
  assert.equal(rows.length, 1);
  assert.deepEqual(Object.keys(rows[0]), [...EXPORT_FIELDS]);
  assert.deepEqual(rows[0], {
    id: seqId(1),
    timestamp: '2026-01-01T00:00:00.123456Z',
    session_id: 'sess_1',
    turn_id: 'turn_1',
    parent_event_id: seqId(0),
    type: 'tool.called',
    actor: 'tool',
    sensitivity: 'private',
    payload: JSON.parse(payload),
  });
  assert.ok(text.includes(`"payload":${payload}}\n`), 'payload text embedded unchanged');
  assert.equal((rows[0].payload as { cost_usd: string }).cost_usd, '0.000001230');
  assert.equal(summary.byteCount, Buffer.byteLength(text));
});

test('from includes and to excludes; open ends mean all time', async (t) => {
  const { store, deps } = await setup(t);
  insertEvents(store.db, 10, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i * 1_000_000,
    payload: callPayload('u1'),
  }));
  const at = (s: number) => `2026-01-01T00:00:0${s}Z`;
  const ids = async (from?: string, to?: string) =>
    (await exportAll(deps, 'u1', resolveWindow({ from, to }))).rows
      .filter((r) => r.type !== 'analytics.user_exported') // the audit records of the earlier calls
      .map((r) => r.id);
  assert.deepEqual(await ids(at(2), at(5)), [seqId(2), seqId(3), seqId(4)]);
  assert.deepEqual(await ids(at(8)), [seqId(8), seqId(9)]);
  assert.deepEqual(await ids(undefined, at(1)), [seqId(0)]);
  assert.deepEqual(await ids(at(3), at(3)), []);
  assert.equal((await ids()).length, 10);
  const w = resolveWindow({ from: at(2), to: at(5) });
  assert.equal(await countUserEvents(store, { userId: 'u1', window: w }), 3);
});

test('rows are read in pages: rows committed after the first page was handed over still arrive, in order', async (t) => {
  const { store, deps } = await setup(t);
  insertEvents(store.db, 25, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i,
    payload: callPayload('u1', { i }),
  }));
  let calls = 0;
  const seen: string[] = [];
  const summary = await runUserExport(
    { ...deps, pageSize: 10 },
    { userId: 'u1', window: resolveWindow({}) },
    (chunk) => {
      calls++;
      if (calls === 1) {
        // a later row arrives while the export is under way: a buffered export would miss it
        insertEvents(store.db, 1, () => ({
          id: seqId(99),
          timestamp_us: BASE_US + 99,
          payload: callPayload('u1'),
        }));
      }
      for (const line of chunk.trimEnd().split('\n')) seen.push(JSON.parse(line).id);
    },
  );
  assert.equal(calls, 3, 'one chunk per page of 10');
  assert.equal(summary.rowCount, 26);
  assert.deepEqual(seen, [...Array.from({ length: 25 }, (_, i) => seqId(i)), seqId(99)]);
});

test('one analytics.user_exported event follows the last row, with row count, byte count and window', async (t) => {
  const { store, deps, published } = await setup(t);
  insertEvents(store.db, 7, (i) => ({ id: seqId(i), timestamp_us: BASE_US + i, payload: callPayload('u1') }));
  const order: string[] = [];
  const recording: UserExportDeps = {
    ...deps,
    bus: {
      ...deps.bus,
      stamp(input) {
        order.push(`event:${input.type}`);
        return deps.bus.stamp(input);
      },
    },
  };
  const window = resolveWindow({ from: '2026-01-01T00:00:00Z' });
  let bytes = 0;
  const summary = await runUserExport(recording, { userId: 'u1', window }, (c) => {
    order.push('chunk');
    bytes += Buffer.byteLength(c);
  });
  assert.deepEqual(order, ['chunk', 'event:analytics.user_exported']);
  assert.equal(published.length, 1);
  assert.deepEqual(published[0].payload, {
    user_id: 'u1',
    row_count: 7,
    byte_count: bytes,
    window: { start: '2026-01-01T00:00:00.000000Z', end: null },
  });
  assert.equal(published[0].actor, 'operator');
  assert.equal(summary.rowCount, 7);
  assert.equal(summary.byteCount, bytes);

  // an empty export is audited too
  const empty = await exportAll(deps, 'nobody');
  assert.equal(empty.chunks.length, 0);
  assert.equal(published.length, 2);
  assert.equal((published[1].payload as { row_count: number }).row_count, 0);
});

test('a sink that fails ends the export without an audit event', async (t) => {
  const { store, deps, published } = await setup(t);
  insertEvents(store.db, 3, (i) => ({ id: seqId(i), timestamp_us: BASE_US + i, payload: callPayload('u1') }));
  await assert.rejects(
    runUserExport(deps, { userId: 'u1', window: resolveWindow({}) }, () => {
      throw new Error('EPIPE');
    }),
    /EPIPE/,
  );
  assert.equal(published.length, 0);
});

test('ids with SQL, LIKE or JSON-path metacharacters are refused before the store is read', async (t) => {
  const { store, deps, published } = await setup(t);
  insertEvents(store.db, 2, (i) => ({ id: seqId(i), timestamp_us: BASE_US + i, payload: callPayload('u1') }));
  for (const bad of [
    "u1' OR '1'='1",
    'u1%',
    'u_%',
    '$.user_id',
    'u1"',
    'u1.x',
    '*',
    '',
    'a'.repeat(201),
    'u1\n',
  ]) {
    await assert.rejects(
      runUserExport(deps, { userId: bad, window: resolveWindow({}) }, () => assert.fail('no rows')),
      (err) => isSvcError(err) && err.code === 'invalid_user_id' && err.exitCode === 2,
      JSON.stringify(bad),
    );
  }
  assert.equal(published.length, 0);
  assert.equal((await exportAll(deps, 'a'.repeat(200))).rows.length, 0);
});

test('the audit event lands in the store through the real bus and trace writer', async (t) => {
  const { store } = await setup(t);
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const writer = createTraceWriter({ store, log: silentLogger });
  bus.subscribe(writer.subscriber);
  t.after(() => writer.stop());
  insertEvents(store.db, 2, (i) => ({ id: seqId(i), timestamp_us: BASE_US + i, payload: callPayload('u1') }));
  const s = await runUserExport({ store, bus }, { userId: 'u1', window: resolveWindow({}) }, () => {});
  const row = await store.kysely
    .selectFrom('events')
    .selectAll()
    .where('id', '=', s.auditEventId)
    .executeTakeFirstOrThrow();
  assert.equal(row.type, 'analytics.user_exported');
  assert.equal(row.user_id, 'u1');
  assert.equal(JSON.parse(row.payload).row_count, 2);
  // spec 3: every event whose payload user_id is the id, regardless of event type, so the audit record
  // of the first export is a row of the next one (a newly arrived event), as an SQL count says
  const again: string[] = [];
  assert.equal(await countUserEvents(store, { userId: 'u1', window: resolveWindow({}) }), 3);
  const second = await runUserExport({ store, bus }, { userId: 'u1', window: resolveWindow({}) }, (c) => {
    again.push(c);
  });
  assert.equal(second.rowCount, 3);
  const lines = again
    .join('')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.filter((l) => l.type === 'analytics.user_exported').map((l) => l.id),
    [row.id],
  );
});

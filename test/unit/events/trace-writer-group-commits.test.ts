import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { type Bus, createBus } from '#src/events/bus.ts';
import { createTraceWriter, type TraceWriter } from '#src/events/trace-writer.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { createLogger, silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { openStore, type Store } from '#src/store/open.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-writer-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;

interface Rig {
  store: Store;
  bus: Bus;
  writer: TraceWriter;
  path: string;
  /** A second, independent connection to the same file. */
  other: DatabaseSync;
  count(type?: string): number;
}

async function rig(t: { after: (fn: () => unknown) => void }, log = silentLogger): Promise<Rig> {
  const path = join(tmp, `w${++n}.db`);
  const store = await openStore(path);
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log });
  const writer = createTraceWriter({ store, log });
  bus.subscribe(writer.subscriber);
  await writer.flush();
  const other = new DatabaseSync(path, { readOnly: true });
  t.after(async () => {
    other.close();
    await writer.stop();
    await store.close();
  });
  const count = (type?: string) =>
    Number(
      (
        (type
          ? other.prepare('SELECT count(*) AS c FROM events WHERE type = ?').get(type)
          : other.prepare('SELECT count(*) AS c FROM events').get()) as { c: number }
      ).c,
    );
  return { store, bus, writer, path, other, count };
}

test('committed resolves only once the row is visible from a second connection', async (t) => {
  const r = await rig(t);
  const p = r.bus.publish({ type: 'turn.started', payload: { x: 1 } });
  assert.equal(r.count('turn.started'), 0); // queued, not yet committed
  let resolved = false;
  void p.committed.then(() => {
    resolved = true;
  });
  await Promise.resolve();
  assert.equal(resolved, false);
  await p.committed;
  assert.equal(r.count('turn.started'), 1);
  const row = r.other.prepare('SELECT * FROM events WHERE id = ?').get(p.event.id) as Record<string, unknown>;
  assert.equal(row.timestamp, p.event.timestamp);
  assert.equal(row.timestamp_us, p.event.timestamp_us);
  assert.deepEqual(JSON.parse(String(row.payload)), { x: 1 });
  assert.equal(row.sensitivity, 'pseudonymous');
});

test('events published in one tick are committed in one transaction', async (t) => {
  const r = await rig(t);
  const before = r.writer.stats;
  const published = Array.from({ length: 500 }, (_, i) =>
    r.bus.publish({ type: 'llm.call_started', payload: { i } }),
  );
  await Promise.all(published.map((p) => p.committed));
  const after = r.writer.stats;
  assert.equal(after.commits - before.commits, 1);
  assert.equal(after.rows - before.rows, 500);
  assert.equal(r.count('llm.call_started'), 500);
});

test('events published in a later tick form the next group commit, all together', async (t) => {
  const r = await rig(t);
  const before = r.writer.stats.commits;
  const first = r.bus.publish({ type: 'turn.started', payload: {} });
  await new Promise((resolve) => setImmediate(resolve)); // the first group commit has run
  const rest = Array.from({ length: 50 }, () => r.bus.publish({ type: 'turn.completed', payload: {} }));
  await Promise.all([first.committed, ...rest.map((p) => p.committed)]);
  assert.ok(r.writer.stats.commits - before <= 2, `commits: ${r.writer.stats.commits - before}`);
  assert.equal(r.count('turn.completed'), 50);
});

test('streaming-only events are delivered but never written', async (t) => {
  const r = await rig(t);
  const seen: string[] = [];
  r.bus.subscribe({ name: 'ws', handle: (e) => void seen.push(e.type) });
  const deltas = [
    'message.start',
    'text.delta',
    'thinking.delta',
    'tool.use_start',
    'tool.use_input_delta',
    'tool.use_end',
    'message.complete',
  ] as const;
  for (const type of deltas) await r.bus.publish({ type, payload: { text: 'secret' } }).committed;
  await r.writer.flush();
  assert.deepEqual(
    seen.filter((s) => !s.startsWith('bus.')),
    [...deltas],
  );
  const persisted = r.other.prepare("SELECT type FROM events WHERE type NOT LIKE 'bus.%'").all();
  assert.deepEqual(persisted, []);
});

test('stop flushes everything queued, then refuses further writes', async (t) => {
  const lines: string[] = [];
  const r = await rig(t, createLogger({ write: (l) => void lines.push(l) }));
  for (let i = 0; i < 100; i++)
    r.bus.publish({ type: 'tool.called', payload: { tool_use_id: `tu_${i}`, tool_name: 'read_file' } });
  assert.equal(r.writer.pending, 100);
  await r.writer.stop();
  assert.equal(r.count('tool.called'), 100);
  assert.equal(
    await r.writer.write({ ...r.bus.publish({ type: 'turn.started', payload: {} }).event }),
    false,
  );
  assert.equal(r.count('turn.started'), 0);
  assert.ok(lines.some((l) => l.includes('trace writer is stopped')));
});

test('a row the database refuses is dropped alone; the rest of its batch commits', async (t) => {
  const lines: string[] = [];
  const r = await rig(t, createLogger({ write: (l) => void lines.push(l) }));
  const good = r.bus.publish({ type: 'turn.started', payload: {} });
  // the same id twice: the second insert violates the primary key
  const dupe = r.writer.write(good.event);
  const other = r.bus.publish({ type: 'turn.completed', payload: {} });
  await Promise.all([good.committed, other.committed]);
  assert.equal(await dupe, false);
  assert.equal(r.count('turn.started'), 1);
  assert.equal(r.count('turn.completed'), 1);
  assert.equal(r.writer.stats.dropped, 1);
  assert.ok(lines.some((l) => JSON.parse(l).msg === 'trace writer dropped events'));
});

test('a payload that cannot be serialised is reported by the bus, not thrown at the publisher', async (t) => {
  const r = await rig(t);
  const p = r.bus.publish({
    type: 'turn.started',
    payload: { big: 1n } as unknown as Record<string, unknown>,
  });
  await p.committed;
  await r.writer.flush();
  assert.equal(r.count('turn.started'), 0);
  assert.equal(r.count('bus.handler_warning'), 1);
});

test('opening events wait for their closing event: one gateway call is one transaction', async (t) => {
  const r = await rig(t);
  const before = r.writer.stats.commits;
  const decided = r.bus.publish({
    type: 'route.decided',
    payload: { chain: [], winner_index: -1, chosen_model: null, elapsed_ms: 0 },
  });
  r.bus.publish({ type: 'llm.call_started', payload: {} as never });
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(r.count(), 1, 'only bus.subscriber_registered so far: opening events are held');
  const closing = r.bus.publish({ type: 'turn.completed', payload: {} });
  await Promise.all([decided.committed, closing.committed]);
  assert.equal(r.writer.stats.commits - before, 1);
  assert.equal(r.count(), 4);
});

test('an opening event alone is still committed within LAZY_COMMIT_MS', async (t) => {
  const r = await rig(t);
  const started = Date.now();
  await r.bus.publish({ type: 'turn.started', payload: {} }).committed;
  assert.equal(r.count('turn.started'), 1);
  assert.ok(Date.now() - started < 1000);
});

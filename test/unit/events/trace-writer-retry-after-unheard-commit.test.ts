/**
 * A connection lost after PostgreSQL committed a batch but before the gateway heard back: the retry met
 * the primary key, and the writer logged "trace writer dropped events" (and the bus a failure notice) for
 * rows that were stored. After a lost connection the retries now skip ids already stored, so the batch
 * resolves as written, once. The store is a stand-in whose first append commits and then loses its answer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { createLogger } from '#src/lib/log.ts';
import { postgresDialect } from '#src/store/dialect.ts';
import type { Store } from '#src/store/open.ts';
import type { NewEventRow } from '#src/store/schema.ts';
import { numberedEvent } from '../../helpers/envelopes.ts';

/** A table keyed by id: a stored id is refused unless the append skips it; the first answer is lost. */
function unheardCommitStore() {
  const table = new Map<string, NewEventRow>();
  let appends = 0;
  const store = {
    engine: 'postgres',
    dialect: postgresDialect,
    async appendEvents(rows: NewEventRow[], options?: { ifAbsent?: boolean }) {
      appends++;
      const fresh = rows.filter((r) => !table.has(r.id));
      if (fresh.length < rows.length && !options?.ifAbsent)
        throw Object.assign(new Error('duplicate key value violates unique constraint "events_pkey"'), {
          code: '23505',
        });
      for (const r of fresh) table.set(r.id, r);
      if (appends === 1) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    },
  } as unknown as Store;
  return { store, table, appends: () => appends };
}

test('a batch committed before its connection dropped is written once and reported as written', async (t) => {
  const db = unheardCommitStore();
  const lines: string[] = [];
  const writer = createTraceWriter({
    store: db.store,
    log: createLogger({ write: (l) => void lines.push(l) }),
  });
  t.after(() => writer.stop());
  const events = [numberedEvent(1), numberedEvent(2)];
  const written = await Promise.all(events.map((e) => writer.write(e)));
  assert.deepEqual(written, [true, true]);
  assert.ok(db.appends() >= 2, 'the lost answer was retried');
  assert.deepEqual(
    [...db.table.keys()],
    events.map((e) => e.id),
  );
  await writer.stop();
  assert.equal(writer.stats.dropped, 0);
  assert.ok(!lines.some((l) => JSON.parse(l).msg === 'trace writer dropped events'), lines.join(''));
});

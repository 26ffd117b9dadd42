/**
 * A PostgreSQL outage is waited out for up to its window (60 s in production) counted from the first failed
 * commit, not once per batch: a batch queued behind one that waited the whole window out gets only the
 * quick attempts, so the answers waiting for its events go out then (README, PostgreSQL store: "for up to
 * 60 s since the first failure"). A commit that succeeds ends the outage: the next one is waited out again.
 * The store is a stand-in whose appends fail as a refused connection does, so the window can be short.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { silentLogger } from '#src/lib/log.ts';
import { postgresDialect } from '#src/store/dialect.ts';
import type { Store } from '#src/store/open.ts';
import type { NewEventRow } from '#src/store/schema.ts';
import { numberedEvent } from '../../helpers/envelopes.ts';

const MAX_ATTEMPTS = 2;

/** A PostgreSQL store that refuses every append while `down`; counts the attempts per event id. */
function flakyStore() {
  const attempts = new Map<string, number>();
  let firstAttempt: () => void = () => {};
  const state = {
    down: true,
    attempts,
    /** Resolves at the next append attempt. */
    nextAttempt: () => new Promise<void>((resolve) => (firstAttempt = resolve)),
    store: {
      engine: 'postgres',
      dialect: postgresDialect,
      async appendEvents(rows: NewEventRow[]) {
        for (const r of rows) attempts.set(r.id, (attempts.get(r.id) ?? 0) + 1);
        firstAttempt();
        if (state.down)
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      },
    } as unknown as Store,
  };
  return state;
}

/** A `turn.completed` envelope written straight to the writer (no bus: its failure notices are events too). */

test('a batch queued during an outage gets the time left of the window, not a window of its own', async (t) => {
  const db = flakyStore();
  const writer = createTraceWriter({
    store: db.store,
    log: silentLogger,
    maxAttempts: MAX_ATTEMPTS,
    outageMs: 600,
  });
  t.after(() => writer.stop());

  const tried = db.nextAttempt();
  const first = numberedEvent(1);
  const firstWritten = writer.write(first);
  await tried; // the outage has begun: the next event waits behind the first batch
  const second = numberedEvent(2);
  const secondWritten = writer.write(second);
  assert.equal(await firstWritten, false);
  assert.ok(
    (db.attempts.get(first.id) ?? 0) > MAX_ATTEMPTS,
    'the first batch waited the outage out beyond its quick attempts',
  );
  assert.equal(await secondWritten, false);
  assert.equal(
    db.attempts.get(second.id),
    MAX_ATTEMPTS,
    'the second batch got only its quick attempts: the window had passed',
  );

  // the store is back: a commit ends the outage, and the next one is waited out from its own start
  db.down = false;
  assert.equal(await writer.write(numberedEvent(3)), true);
  db.down = true;
  const fourth = numberedEvent(4);
  assert.equal(await writer.write(fourth), false);
  assert.ok((db.attempts.get(fourth.id) ?? 0) > MAX_ATTEMPTS, 'a new outage is waited out again');
});

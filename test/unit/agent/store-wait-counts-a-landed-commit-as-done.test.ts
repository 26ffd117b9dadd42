/**
 * whileStoreAway (store-wait.ts) retries a turn's write the store refused. A SQLite write refused with an I/O
 * error at COMMIT may have landed: the retry of the same insert then meets its own row (SQLITE_CONSTRAINT,
 * primary key), which counted as done only for PostgreSQL (23505), so the turn failed. It is now done on
 * SQLite too; the same conflict on a first attempt (someone else's row) still fails. The rows and their
 * conflicts are a real SQLite's; the I/O error at COMMIT is shaped as node:sqlite reports it.
 */
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { STORE_WAIT_INTERVAL_MS, whileStoreAway } from '#src/agent/store-wait.ts';
import { silentLogger } from '#src/lib/log.ts';

/** node:sqlite's error for SQLITE_IOERR_FSYNC (an extended I/O error code) at COMMIT. */
const ioErrorAtCommit = () =>
  Object.assign(new Error('disk I/O error'), {
    code: 'ERR_SQLITE_ERROR',
    errcode: 1034,
    errstr: 'disk I/O error',
  });

test('a retried insert meeting the row its landed commit wrote is done; a first-try conflict fails', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const db = new DatabaseSync(':memory:');
  t.after(() => db.close());
  db.exec('CREATE TABLE messages (id TEXT PRIMARY KEY, body TEXT NOT NULL)');
  const insert = () => db.prepare('INSERT INTO messages (id, body) VALUES (?, ?)').run('msg_1', 'hi');

  let attempts = 0;
  const written = whileStoreAway(silentLogger, 'assistant message', async () => {
    attempts++;
    insert();
    if (attempts === 1) throw ioErrorAtCommit(); // committed, but reported failed
    return 'inserted';
  });
  while (attempts < 2) {
    await new Promise((resolve) => setImmediate(resolve));
    t.mock.timers.tick(STORE_WAIT_INTERVAL_MS);
  }
  assert.equal(await written, undefined, 'the retry met its own row: done');
  assert.equal(attempts, 2);
  assert.deepEqual(
    db
      .prepare('SELECT id, body FROM messages')
      .all()
      .map((r) => ({ ...r })),
    [{ id: 'msg_1', body: 'hi' }],
  );

  // the same conflict on a first attempt is another row's: it fails as before
  await assert.rejects(
    whileStoreAway(silentLogger, 'assistant message', async () => insert()),
    (err: { errcode?: number }) => err.errcode === 1555,
  );
});

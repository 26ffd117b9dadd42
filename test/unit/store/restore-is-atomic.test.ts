import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { isSvcError } from '#src/lib/errors.ts';
import { backupStore } from '#src/store/backup.ts';
import { SCHEMA_VERSION } from '#src/store/migrate.ts';
import { openStore } from '#src/store/open.ts';
import { lockStore, restoreStore } from '#src/store/restore.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-restore-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;

async function storeWith(ids: string[]): Promise<string> {
  const path = join(tmp, `d${++n}`, 'svc.db');
  const store = await openStore(path);
  if (ids.length > 0) {
    await store.kysely
      .insertInto('events')
      .values(
        ids.map((id, i) => ({
          id,
          timestamp: '2026-11-22T06:01:02.000000Z',
          timestamp_us: 1_795_327_262_000_000 + i,
          session_id: null,
          turn_id: null,
          type: 'turn.started',
          actor: 'gateway',
          payload: '{}',
          parent_event_id: null,
          sensitivity: 'pseudonymous',
        })),
      )
      .execute();
  }
  await store.close();
  return path;
}

const ids = (path: string) => {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return (db.prepare('SELECT id FROM events ORDER BY id').all() as Array<{ id: string }>).map((r) => r.id);
  } finally {
    db.close();
  }
};

const leftovers = (path: string) =>
  readdirSync(join(path, '..')).filter((f) => f.startsWith('.') || f.endsWith('.tmp'));

test('a failure just before the rename leaves the old store intact, WAL content included, and no temp file', async () => {
  const backup = join(tmp, 'b-atomic.db');
  await backupStore(await storeWith(['NEW1', 'NEW2']), backup);
  const original = await storeWith(['OLD1']);
  // what a killed writer leaves behind: a -wal with committed but un-checkpointed frames
  const w = new DatabaseSync(original);
  w.exec('PRAGMA wal_autocheckpoint = 0');
  w.exec(
    "INSERT INTO events (id, timestamp, timestamp_us, type, actor, payload, sensitivity) VALUES ('OLD2', 't', 1, 'turn.started', 'gateway', '{}', 'public')",
  );
  const live = join(tmp, 'crashed', 'svc.db');
  mkdirSync(join(tmp, 'crashed'));
  copyFileSync(original, live);
  copyFileSync(`${original}-wal`, `${live}-wal`);
  w.close();
  assert.ok(statSync(`${live}-wal`).size > 0);
  await assert.rejects(
    restoreStore({
      backup,
      dbPath: live,
      force: true,
      _beforeReplace() {
        throw new Error('simulated crash');
      },
    }),
    /simulated crash/,
  );
  assert.deepEqual(ids(live), ['OLD1', 'OLD2']);
  assert.deepEqual(leftovers(live), []);
  const reopened = await openStore(live);
  assert.equal(reopened.schemaVersion, SCHEMA_VERSION);
  await reopened.close();
});

test('a restored store never replays the old WAL and opens in WAL mode again', async () => {
  const backup = join(tmp, 'b-wal.db');
  await backupStore(await storeWith(['B1']), backup);
  const live = await storeWith(['L1', 'L2', 'L3']);
  const r = await restoreStore({ backup, dbPath: live, force: true });
  assert.equal(r.replaced, true);
  assert.equal(r.events, 1);
  assert.ok(!existsSync(`${live}-wal`));
  assert.deepEqual(ids(live), ['B1']);
  const store = await openStore(live);
  assert.equal(store.db.prepare('PRAGMA journal_mode').get()?.journal_mode, 'wal');
  await store.close();
});

test('lockStore sees a connection of this very process, even an idle one', async () => {
  const live = await storeWith([]);
  const store = await openStore(live);
  assert.throws(
    () => lockStore(live),
    (e: unknown) =>
      isSvcError(e) && e.code === 'restore_refused' && /open in another process/.test(e.message),
  );
  await store.close();
  const lock = lockStore(live);
  // while the lock is held, a new store cannot start
  const other = new DatabaseSync(live, { timeout: 0 });
  assert.throws(() => other.prepare('SELECT count(*) FROM events').get(), /locked/);
  other.close();
  lock.close();
});

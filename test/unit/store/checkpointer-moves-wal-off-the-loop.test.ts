import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '#src/lib/log.ts';
import { startCheckpointer } from '#src/store/checkpointer.ts';
import { openStore } from '#src/store/open.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-ckpt-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

function insertRows(db: import('node:sqlite').DatabaseSync, n: number, from: number): void {
  const stmt = db.prepare(
    `INSERT INTO events (id, timestamp, timestamp_us, type, actor, payload, sensitivity)
     VALUES (?, '2026-11-23T00:00:00.000000Z', ?, 'turn.completed', 'gateway', ?, 'public')`,
  );
  db.exec('BEGIN IMMEDIATE');
  for (let i = from; i < from + n; i++)
    stmt.run(`ev${String(i).padStart(8, '0')}`, i, `{"pad":"${'x'.repeat(400)}"}`);
  db.exec('COMMIT');
}

test('a worker checkpoints the WAL into the database while the server connection only commits', async () => {
  const path = join(tmp, 'a.db');
  const store = await openStore(path);
  const ckpt = startCheckpointer(store, { log: silentLogger, intervalMs: 25 });
  try {
    const pages = () =>
      Number(
        (store.db.prepare('PRAGMA wal_autocheckpoint').get() as Record<string, number>).wal_autocheckpoint,
      );
    assert.equal(pages(), 12_000, 'the commit path no longer checkpoints every 1000 pages');
    const before = statSync(path).size;
    insertRows(store.db, 3000, 0); // ~1.3 MB of WAL, below the safety net: only the worker can move it
    const deadline = Date.now() + 5000;
    while (statSync(path).size <= before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 25));
    assert.ok(statSync(path).size > before, 'the database file received the WAL content');
    await ckpt.stop();
    assert.equal(pages(), 1000, 'stopping restores the automatic checkpoint');
    insertRows(store.db, 10, 3000);
    const count = store.db.prepare('SELECT count(*) AS c FROM events WHERE id LIKE ?').get('ev%') as {
      c: number;
    };
    assert.equal(Number(count.c), 3010);
  } finally {
    await ckpt.stop();
    await store.close();
  }
});

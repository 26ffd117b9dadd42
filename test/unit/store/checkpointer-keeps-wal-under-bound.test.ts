/**
 * The WAL stays under 64 MiB under sustained writes (issue 17 item 8): with commits arriving all the time,
 * a PASSIVE checkpoint never finds the WAL fully copied at the start of a write, so SQLite never rewinds
 * it and the file grew to the 80 MB safety net. The worker truncates it once it passes WAL_TRUNCATE_BYTES.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '#src/lib/log.ts';
import { startCheckpointer } from '#src/store/checkpointer.ts';
import { openStore } from '#src/store/open.ts';

const MiB = 1024 * 1024;
const BOUND = 64 * MiB;
const ROWS = 20;
/** Twice the bound: a WAL that is never rewound grows as fast as this is written (it reached 79 MiB). */
const WRITTEN = 128 * MiB;

const tmp = mkdtempSync(join(tmpdir(), 'svc-walbound-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

test('128 MiB of commits arriving all the time never grow the WAL past 64 MiB', async (t) => {
  const path = join(tmp, 'load.db');
  const store = await openStore(path);
  const ckpt = startCheckpointer(store, { log: silentLogger, intervalMs: 50 });
  try {
    const stmt = store.db.prepare(
      `INSERT INTO events (id, timestamp, timestamp_us, type, actor, payload, sensitivity)
       VALUES (?, '2026-11-23T00:00:00.000000Z', ?, 'turn.completed', 'gateway', ?, 'public')`,
    );
    const pad = `{"pad":"${'x'.repeat(4000)}"}`;
    const walSize = () => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);
    let largest = 0;
    let written = 0;
    for (let i = 0; written < WRITTEN; i++) {
      store.db.exec('BEGIN IMMEDIATE');
      for (let j = 0; j < ROWS; j++) stmt.run(`ev${String(i * ROWS + j).padStart(9, '0')}`, i, pad);
      store.db.exec('COMMIT');
      written += ROWS * pad.length;
      largest = Math.max(largest, walSize());
      // a server commits between other work, not back to back
      await new Promise((r) => setTimeout(r, 1));
    }
    t.diagnostic(`largest WAL: ${(largest / MiB).toFixed(1)} MiB`);
    assert.ok(largest < BOUND, `the WAL reached ${(largest / MiB).toFixed(1)} MiB`);
    const count = store.db.prepare('SELECT count(*) AS c FROM events').get() as { c: number };
    assert.equal(Number(count.c), (written / pad.length) | 0, 'every row is kept');
  } finally {
    await ckpt.stop();
    await store.close();
  }
});

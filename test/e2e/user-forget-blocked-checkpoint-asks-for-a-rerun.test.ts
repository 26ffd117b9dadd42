/**
 * When another process holds a read transaction through the whole busy timeout, forget still rewrites
 * the rows but cannot empty the WAL: it prints its result, exits 1 with one sentence asking for a rerun,
 * and the rerun (0 rows) finishes the scrub.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { BASE_US, callPayload, seedStore, seqId } from '../helpers/event-rows.ts';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-forget-busy-');
test.after(() => tmp.cleanup());
// the reader is held through the whole busy timeout: 1 s here instead of the default 10 s
const env = isolatedEnv(tmp.dir, { SVC_SQLITE_BUSY_TIMEOUT_MS: '1000' });

const rawCount = (path: string, needle: string) =>
  [path, `${path}-wal`]
    .filter((f) => existsSync(f))
    .reduce((sum, f) => sum + readFileSync(f).toString('latin1').split(needle).length - 1, 0);

test('a reader held open through the checkpoint gives exit 1 and a rerun finishes the scrub', async (t) => {
  const db = join(tmp.dir, 'svc.db');
  const victim = 'usr_Busy_7Qm';
  await seedStore(db, 500, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i,
    payload: callPayload(i % 4 === 0 ? victim : 'usr_other'),
  }));
  const reader = new DatabaseSync(db);
  t.after(() => reader.close());
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM events').get(); // holds a read snapshot

  const r = await runSvc(['user', 'forget', victim, '--confirm', '--db-path', db], { env });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /^pseudonymized_rows: 125$/m);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.match(
    r.stderr,
    new RegExp(
      `^svc: The id is pseudonymised, but another process kept reading .*svc\\.db so its WAL may still hold old pages with the original id; run svc user forget ${victim} --confirm again when the store is idle\\.`,
    ),
  );

  reader.exec('COMMIT');
  const again = await runSvc(['user', 'forget', victim, '--confirm', '--db-path', db], { env });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^pseudonymized_rows: 0$/m);
  assert.equal(rawCount(db, victim), 0);
});

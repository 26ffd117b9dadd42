/**
 * Forget on a store that a running svc serve keeps open: the servers' own WAL checkpoints (every 500 ms,
 * and at once past 32 MiB, which forget's VACUUM causes) must not make forget's TRUNCATE checkpoint give
 * up, so an idle server never turns a finished scrub into exit 1 and a rerun that fails the same way.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { startAgentServer } from '../helpers/agent-server.ts';
import { BASE_US, callPayload, seedStore, seqId } from '../helpers/event-rows.ts';
import { makeTempDir, runSvc } from '../helpers/svc.ts';

const rawCount = (path: string, needle: string) =>
  [path, `${path}-wal`]
    .filter((f) => existsSync(f))
    .reduce((sum, f) => sum + readFileSync(f).toString('latin1').split(needle).length - 1, 0);

test('forget beside an idle svc serve empties the WAL and exits 0', async (t) => {
  const tmp = makeTempDir('svc-forget-live-');
  t.after(() => tmp.cleanup());
  const victim = 'usr_Live_4Kp';
  // ~40 MB of rows, so the VACUUM's WAL passes the servers' 32 MiB mark (few large rows: seeding and the
  // scrub cost per row, the VACUUM per byte)
  const padding = 'x'.repeat(8_000);
  await seedStore(`${tmp.dir}/svc.db`, 5_000, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i,
    payload: { ...callPayload(i % 8 === 0 ? victim : 'usr_other'), stop_reason: padding },
  }));
  const server = await startAgentServer(t, { home: tmp.dir });
  for (const attempt of [1, 2]) {
    const r = await runSvc(['user', 'forget', victim, '--confirm', '--db-path', server.db], {
      env: server.env,
    });
    assert.equal(r.code, 0, `attempt ${attempt}: ${r.stderr}`);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, new RegExp(`^pseudonymized_rows: ${attempt === 1 ? 625 : 0}$`, 'm'));
  }
  assert.equal(rawCount(server.db, victim), 0);
});

/**
 * Ctrl-C (SIGINT) or SIGTERM while `svc backup` or `svc analytics user-export --out` writes its hidden
 * temp file beside the destination: the command removes the partial file (a copy of the trace store, or
 * part of a person's data) before it exits 130 / 143, and nothing appears at the destination.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BASE_US, callPayload, seedStore, seqId } from '../helpers/event-rows.ts';
import { ensureBuilt, isolatedEnv, makeTempDir, SVC_BIN } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-ctrl-c-');
test.after(() => tmp.cleanup());
const env = isolatedEnv(tmp.dir);
const db = join(tmp.dir, 'svc.db');

test.before(async () => {
  // ~45 MB: the export and the backup (whose VACUUM INTO holds the signal until it ends) run long enough to
  // be interrupted mid-write; few large rows, since seeding costs per row
  const padding = 'p'.repeat(2_000);
  await seedStore(db, 20_000, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i,
    payload: { ...callPayload('usr_subject'), stop_reason: padding },
  }));
});

/** Starts the command, waits until its temp file exists in `dir`, signals it, returns its exit code. */
async function interrupt(args: string[], dir: string, signal: NodeJS.Signals): Promise<number | null> {
  ensureBuilt();
  const child = spawn(process.execPath, [SVC_BIN, ...args], { env, stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  for (let i = 0; i < 400 && child.exitCode === null; i++) {
    if (readdirSync(dir).some((f) => f.startsWith('.'))) break;
    await sleep(10);
  }
  assert.equal(child.exitCode, null, 'the command was still running when its temp file appeared');
  child.kill(signal);
  return exited;
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  test(`${signal} during user-export --out removes the partial export and exits ${code}`, async () => {
    const dir = join(tmp.dir, `export-${signal}`);
    mkdirSync(dir);
    const args = ['analytics', 'user-export', 'usr_subject', '--db-path', db, '--out', join(dir, 'x.jsonl')];
    assert.equal(await interrupt(args, dir, signal), code);
    assert.deepEqual(readdirSync(dir), []);
  });

  test(`${signal} during backup removes the partial copy and exits ${code}`, async () => {
    const dir = join(tmp.dir, `backup-${signal}`);
    mkdirSync(dir);
    assert.equal(await interrupt(['backup', join(dir, 'b.db'), '--db-path', db], dir, signal), code);
    assert.deepEqual(readdirSync(dir), []);
  });
}

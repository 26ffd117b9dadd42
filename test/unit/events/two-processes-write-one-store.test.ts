/**
 * Two real processes write the same store through the real trace writer as fast as they can: both
 * succeed with no busy errors or retries (each exits 3 if its writer logged a warning), and every row is there.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { ROOT } from '../../helpers/svc.ts';

const WRITER = join(ROOT, 'test/fixtures/store-writer.ts');
const PER_PROCESS = 5000;

function runWriter(db: string, t: { after: (fn: () => unknown) => void }) {
  const child = spawn(process.execPath, [WRITER, 'write', db, String(PER_PROCESS), '25'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d) => {
    stderr += d;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
}

test('two processes writing one new store at full speed both succeed and every row lands', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-two-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'svc.db');
  const [a, b] = await Promise.all([runWriter(db, t), runWriter(db, t)]);
  for (const r of [a, b]) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, new RegExp(`done ${PER_PROCESS}`));
  }
  const check = new DatabaseSync(db, { readOnly: true });
  t.after(() => check.close());
  const rows = check
    .prepare(
      "SELECT json_extract(payload, '$.writer_pid') AS pid, count(*) AS c, count(DISTINCT json_extract(payload, '$.seq')) AS seqs FROM events WHERE type = 'llm.call_completed' GROUP BY pid",
    )
    .all() as Array<{ pid: number; c: number; seqs: number }>;
  assert.equal(rows.length, 2);
  for (const r of rows) {
    assert.equal(r.c, PER_PROCESS);
    assert.equal(r.seqs, PER_PROCESS);
  }
  const ok = check.prepare('PRAGMA integrity_check').get() as { integrity_check: string };
  assert.equal(ok.integrity_check, 'ok');
});

/**
 * `svc analytics user-export` of ~140 MB (20,000 rows of ~7 KB) through the real executable keeps its peak
 * memory within a small bound of a 10-row export: the rows are streamed from the store in pages, never
 * collected. (Few large rows rather than many small ones: the bytes are what a collected export would
 * hold, and seeding and exporting cost per row.)
 * The test process reads the child's peak resident size (VmHWM in /proc/<pid>/status) while it runs.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { BASE_US, callPayload, seedStore, seqId } from '../helpers/event-rows.ts';
import { ensureBuilt, isolatedEnv, makeTempDir, SVC_BIN } from '../helpers/svc.ts';

const ROWS = 20_000;
/** Each row's payload carries this much text, so that the export is ~140 MB (~7 KB a line). */
const PAD = 'x'.repeat(6_300);
/** Allowed growth of peak RSS over the 10-row export; buffering the ~140 MB export would exceed it 3×. */
const BOUND_MB = 40;
/**
 * Garbage is not retention: with the default limits V8 lets garbage pile up (young generation up to
 * 3 × 16 MiB, old space collected lazily, later still when the GC threads are starved of CPU), which
 * would measure the machine's load rather than the export. A small young generation and a 64 MiB heap
 * keep the peak close to live memory; they are also a second check, since an export that collected its
 * rows (~136 MB of text) could not fit in that heap at all.
 */
const V8_FLAGS = '--max-semi-space-size=2 --max-old-space-size=64';

const tmp = makeTempDir('svc-export-mem-');
test.after(() => tmp.cleanup());

interface Measured {
  code: number | null;
  stderr: string;
  lines: number;
  bytes: number;
  first: string;
  last: string;
  peakMb: number;
}

/**
 * Runs the export, counting its stdout without keeping it, and polls the child's VmHWM (the kernel's
 * high-water mark of its resident set, so a short peak between two polls is still seen).
 */
function measureExport(db: string, userId: string): Promise<Measured> {
  ensureBuilt();
  const child = spawn(process.execPath, [SVC_BIN, 'analytics', 'user-export', userId, '--db-path', db], {
    env: isolatedEnv(tmp.dir, { NODE_OPTIONS: V8_FLAGS }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let peakKb = 0;
  const poll = () => {
    try {
      const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // the child has exited
    }
  };
  const timer = setInterval(poll, 10);
  let lines = 0;
  let bytes = 0;
  let first = '';
  let tail = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    bytes += Buffer.byteLength(d);
    if (!first.includes('\n')) first = (first + d).slice(0, 65_536); // the first line whole
    for (let i = d.indexOf('\n'); i >= 0; i = d.indexOf('\n', i + 1)) lines++;
    tail = (tail + d).slice(-65_536); // the last line whole
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  child.stdout.on('end', poll);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearInterval(timer);
      const lastLines = tail.trimEnd().split('\n');
      resolve({
        code,
        stderr,
        lines,
        bytes,
        first: first.slice(0, first.indexOf('\n')),
        last: lastLines[lastLines.length - 1],
        peakMb: peakKb / 1024,
      });
    });
  });
}

test('exporting 140 MB (20,000 rows) peaks within a small bound of exporting 10 rows', {
  skip: !existsSync('/proc/self/status') && 'needs /proc to read the child peak memory',
}, async (t) => {
  const db = join(tmp.dir, 'svc.db');
  await seedStore(db, ROWS + 10, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i,
    payload: callPayload(i < ROWS ? 'usr_big' : 'usr_small', { seq: i, pad: PAD }),
  }));

  const small = await measureExport(db, 'usr_small');
  assert.equal(small.code, 0, small.stderr);
  assert.equal(small.lines, 10);

  const big = await measureExport(db, 'usr_big');
  assert.equal(big.code, 0, big.stderr);
  assert.equal(big.lines, ROWS);
  assert.equal(JSON.parse(big.first).id, seqId(0));
  assert.equal(JSON.parse(big.last).id, seqId(ROWS - 1));
  assert.ok(big.bytes > 128 * 1024 * 1024, `the export is large (${big.bytes} bytes)`);
  t.diagnostic(
    `peak RSS: ${small.peakMb.toFixed(1)} MB (10 rows), ${big.peakMb.toFixed(1)} MB (${ROWS} rows)`,
  );
  assert.ok(small.peakMb > 0 && big.peakMb > 0, 'peaks were read');
  assert.ok(
    big.peakMb <= small.peakMb + BOUND_MB,
    `peak RSS ${big.peakMb.toFixed(1)} MB for ${ROWS} rows vs ${small.peakMb.toFixed(1)} MB for 10 (bound +${BOUND_MB} MB)`,
  );

  const audit = new DatabaseSync(db, { readOnly: true });
  try {
    const row = audit
      .prepare("SELECT payload FROM events WHERE type = 'analytics.user_exported' AND user_id = 'usr_big'")
      .get() as { payload: string };
    assert.deepEqual(JSON.parse(row.payload), {
      user_id: 'usr_big',
      row_count: ROWS,
      byte_count: big.bytes,
      window: { start: null, end: null },
    });
  } finally {
    audit.close();
  }
});

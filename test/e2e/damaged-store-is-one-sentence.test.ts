/**
 * A store file damaged under svc (a scribbled b-tree page): a command that trips over it ends with one
 * sentence saying what happened and what to do, exit 1, never "unexpected error" (DECISIONS §2).
 */
import assert from 'node:assert/strict';
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startStoreWriter } from '../helpers/store-writer.ts';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-damaged-');
test.after(() => tmp.cleanup());
const env = isolatedEnv(tmp.dir);

test('a backup of a damaged store says so in one sentence and exits 1', async () => {
  const live = join(tmp.dir, 'live/svc.db');
  const writer = startStoreWriter(['write', live, '400', '10'], { after: () => {} });
  assert.equal(await writer.exited, 0);
  const damaged = join(tmp.dir, 'damaged.db');
  assert.equal((await runSvc(['backup', damaged, '--db-path', live], { env })).code, 0);
  const size = statSync(damaged).size;
  const fd = openSync(damaged, 'r+');
  writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, size - 2 * 4096); // scribble over a b-tree page
  closeSync(fd);

  for (const args of [
    ['backup', join(tmp.dir, 'copy.db'), '--db-path', damaged],
    ['gateway', 'backup', join(tmp.dir, 'copy2.db'), '--db-path', damaged],
  ]) {
    const r = await runSvc(args, { env });
    const what = `svc ${args.slice(0, 2).join(' ')}: ${r.stderr}`;
    assert.equal(r.code, 1, what);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, what);
    assert.doesNotMatch(lines[0], /unexpected error/, what);
    assert.match(lines[0], /^svc: .*damaged.*malformed.*; .*svc restore/, what);
  }
});

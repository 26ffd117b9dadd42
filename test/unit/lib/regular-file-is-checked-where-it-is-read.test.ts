/**
 * readRegularFile (models.yaml, routing.yaml) looked at the path (stat) and then read the path: a file
 * replaced by a FIFO in between (an editor's or a deploy's swap at a SIGHUP reload) was opened as that FIFO,
 * which with no writer blocks for ever. The file is now opened first and its descriptor asked and read, so
 * what was looked at is what is read. The swap is made by hooking the first fs call that names the path,
 * in a child process: a read that blocks can only be seen from outside.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { makeTempDir } from '../../helpers/svc.ts';

const MODULE = new URL('../../../src/lib/regular-file.ts', import.meta.url).href;

const CHILD = `
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
const path = process.argv[1];
let swapped = false;
for (const name of ['statSync', 'lstatSync', 'existsSync', 'openSync', 'accessSync']) {
  const real = fs[name];
  fs[name] = (...args) => {
    const out = real(...args);
    if (!swapped && args[0] === path) {
      swapped = true;
      fs.unlinkSync(path);
      execFileSync('mkfifo', [path]);
    }
    return out;
  };
}
syncBuiltinESMExports();
const { readRegularFile } = await import(${JSON.stringify(MODULE)});
try {
  process.stdout.write(readRegularFile(path));
} catch (err) {
  process.stdout.write('refused: ' + err.code);
}
`;

test('a file swapped for a FIFO right after it is first looked at is not read as that FIFO', (t) => {
  const tmp = makeTempDir('svc-regular-file-');
  t.after(tmp.cleanup);
  const path = join(tmp.dir, 'routing.yaml');
  writeFileSync(path, 'rules: []\n');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, path], {
    encoding: 'utf8',
    timeout: 5_000,
  });
  assert.equal(r.signal, null, `the read blocked on the FIFO (${r.stderr})`);
  assert.equal(r.status, 0, r.stderr);
  // the file that was opened is the one read: its bytes, from before the swap
  assert.equal(r.stdout, 'rules: []\n');
});

import assert from 'node:assert/strict';
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '#src/lib/log.ts';
import { openStore } from '#src/store/open.ts';
import { createPrivateFile, storeFiles, tightenStoreFiles } from '#src/store/private-files.ts';
import { makeTempDir } from '../../helpers/svc.ts';

const modeOf = (path: string) => statSync(path).mode & 0o777;

test('createPrivateFile makes an empty 0600 file even under a permissive umask, and never overwrites', (t) => {
  const tmp = makeTempDir('svc-private-');
  t.after(() => tmp.cleanup());
  const previous = process.umask(0o000);
  t.after(() => process.umask(previous));
  const path = join(tmp.dir, 'a.db');
  assert.equal(createPrivateFile(path), true);
  assert.equal(modeOf(path), 0o600);
  assert.equal(statSync(path).size, 0);
  writeFileSync(path, 'kept');
  assert.equal(createPrivateFile(path), false);
  assert.equal(statSync(path).size, 4);
});

test('a new store, its -wal and its -shm are 0600 under umask 022 (SQLite copies the main file mode)', async (t) => {
  const tmp = makeTempDir('svc-private-');
  t.after(() => tmp.cleanup());
  const previous = process.umask(0o022);
  t.after(() => process.umask(previous));
  const path = join(tmp.dir, 'nested', 'svc.db');
  const store = await openStore(path);
  t.after(() => store.close());
  store.db.exec("INSERT INTO store_meta (key, value) VALUES ('probe', 'x')");
  for (const file of storeFiles(path)) {
    assert.ok(existsSync(file), file);
    assert.equal(modeOf(file), 0o600, file);
  }
});

test('an existing store opened for writing is tightened to 0600 and the change is logged; read-only opens leave it', async (t) => {
  const tmp = makeTempDir('svc-private-');
  t.after(() => tmp.cleanup());
  const path = join(tmp.dir, 'svc.db');
  const first = await openStore(path);
  await first.close();
  chmodSync(path, 0o644);

  const ro = await openStore(path, { readOnly: true });
  await ro.close();
  assert.equal(modeOf(path), 0o644, 'a read-only open changes nothing');

  const lines: string[] = [];
  const store = await openStore(path, {
    mustExist: true,
    log: createLogger({ write: (l) => lines.push(l) }),
  });
  t.after(() => store.close());
  assert.equal(modeOf(path), 0o600);
  assert.equal(lines.length, 1);
  const line = JSON.parse(lines[0]) as Record<string, unknown>;
  assert.equal(line.level, 'warn');
  // the read-only open left a -wal and -shm of the main file's mode (0644) behind: tightened too
  const files = line.files as string[];
  assert.equal(files[0], path);
  assert.deepEqual(
    line.previous_modes,
    files.map(() => '0644'),
  );
  for (const file of storeFiles(path)) if (existsSync(file)) assert.equal(modeOf(file), 0o600, file);
});

test('tightenStoreFiles changes only files others can reach and reports nothing for private or absent ones', (t) => {
  const tmp = makeTempDir('svc-private-');
  t.after(() => tmp.cleanup());
  const path = join(tmp.dir, 's.db');
  writeFileSync(path, '');
  writeFileSync(`${path}-wal`, '');
  chmodSync(path, 0o600);
  chmodSync(`${path}-wal`, 0o640);
  const t1 = tightenStoreFiles(path);
  assert.deepEqual(t1.files, [`${path}-wal`]);
  assert.deepEqual(t1.previousModes, ['0640']);
  assert.deepEqual(t1.failed, []);
  assert.equal(modeOf(`${path}-wal`), 0o600);
  assert.deepEqual(tightenStoreFiles(path).files, []);
});

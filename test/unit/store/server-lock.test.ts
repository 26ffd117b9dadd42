import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSvcError } from '#src/lib/errors.ts';
import { holdServerLock, serverLockPath } from '#src/store/server-lock.ts';

test('one lock per kind and store file, whatever path names the store; free again once released', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-server-lock-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = join(dir, 'data', 'svc.db');
  mkdirSync(join(dir, 'data'));
  mkdirSync(join(dir, 'elsewhere'));
  writeFileSync(store, '');
  const link = join(dir, 'elsewhere', 'link.db');
  symlinkSync(store, link);

  const release = holdServerLock(store, 'serve');
  assert.equal(serverLockPath(link, 'serve'), `${store}-serve.lock`);
  assert.equal(statSync(`${store}-serve.lock`).mode & 0o777, 0o600);
  assert.throws(
    () => holdServerLock(link, 'serve'),
    (err) => isSvcError(err) && err.code === 'startup_refused' && err.message.includes(link),
  );
  // the other kind shares the store
  const gateway = holdServerLock(link, 'gateway');
  release();
  holdServerLock(link, 'serve')();
  gateway();
});

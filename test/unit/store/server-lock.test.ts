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

  const serve = holdServerLock(store, 'serve');
  assert.equal(serverLockPath(link, 'serve'), `${store}-serve.lock`);
  assert.equal(statSync(`${store}-serve.lock`).mode & 0o777, 0o600);
  assert.throws(
    () => holdServerLock(link, 'serve'),
    (err) => isSvcError(err) && err.code === 'startup_refused' && err.message.includes(link),
  );
  // the other kind shares the store
  const gateway = holdServerLock(link, 'gateway');
  assert.equal(gateway.sharedWith, undefined);
  serve.release();
  holdServerLock(link, 'serve').release();

  // gateways share their lock (a rolling update's overlap), each told whether another one runs
  const second = holdServerLock(store, 'gateway');
  assert.deepEqual(second.sharedWith, {}); // this process itself holds the other: no foreign pid
  gateway.release();
  const third = holdServerLock(store, 'gateway');
  assert.ok(third.sharedWith, 'the second gateway still runs');
  second.release();
  third.release();
  assert.equal(holdServerLock(link, 'gateway').sharedWith, undefined); // alone again
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createKeystoreCache, readKeystoreFile, updateKeystoreFile } from '#src/gateway/keystore/file.ts';
import { issueKey, type Keystore, revokeKey } from '#src/gateway/keystore/keystore.ts';
import { hashToken } from '#src/gateway/keystore/token.ts';
import { SvcError } from '#src/lib/errors.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { createLogger, silentLogger } from '#src/lib/log.ts';
import { nowUs } from '#src/lib/time.ts';
import { makeTempDir } from '../../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());
const newId = createIdFactory();
const input = { name: 'n', workspace_path: '/w' };

function issue(path: string): Promise<{ key_id: string; token: string }> {
  return updateKeystoreFile(path, (current) => {
    const r = issueKey(current ?? { keys: [] }, input, { newId, nowUs: nowUs() });
    return { next: r.store, result: { key_id: r.record.key_id, token: r.token } };
  });
}

test('the first write creates the keystore with mode 0600 and leaves no temporary file, only its empty private lock', async () => {
  const path = join(tmp.dir, 'a', 'keys.json');
  await issue(path);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  // the lock stays: removing it would let a waiter and a newcomer lock two different files
  assert.deepEqual(readdirSync(join(tmp.dir, 'a')).sort(), ['keys.json', 'keys.json.lock']);
  assert.equal(statSync(`${path}.lock`).mode & 0o777, 0o600);
  assert.equal(statSync(`${path}.lock`).size, 0);
});

test('concurrent updates are serialized: every change is kept', async () => {
  const path = join(tmp.dir, 'b', 'keys.json');
  const issued = await Promise.all(Array.from({ length: 20 }, () => issue(path)));
  const store = readKeystoreFile(path) as Keystore;
  assert.deepEqual(store.keys.map((k) => k.key_id).sort(), issued.map((i) => i.key_id).sort());
});

test('a keystore that is not JSON or fails the schema is refused with path and reason, and never overwritten', async () => {
  for (const [name, text, reason] of [
    ['bad-json.json', '{"keys": [', /not valid JSON/],
    ['bad-schema.json', '{"keys": [{"key_id": "x"}]}', /keys\[0\]\.key_id/],
  ] as const) {
    const path = join(tmp.dir, name);
    writeFileSync(path, text);
    await assert.rejects(issue(path), (e: unknown) => {
      assert.ok(e instanceof SvcError && e.code === 'keystore_invalid');
      assert.ok(e.message.includes(path));
      assert.match(e.message, reason);
      return true;
    });
    assert.equal(readFileSync(path, 'utf8'), text);
    assert.ok(!existsSync(`${path}.lock`));
  }
});

test('the cache sees a renamed-over keystore on the very next refresh', async () => {
  const path = join(tmp.dir, 'c', 'keys.json');
  const { key_id, token } = await issue(path);
  const cache = createKeystoreCache(path, { log: silentLogger });
  assert.equal(cache.lookup(hashToken(token))?.status, 'active');
  await updateKeystoreFile(path, (current) => ({
    next: revokeKey(current as Keystore, key_id, nowUs()).store,
    result: undefined,
  }));
  cache.refresh();
  assert.equal(cache.lookup(hashToken(token))?.status, 'revoked');
});

test('the cache keeps the last good keys when the file turns bad, and drops them when it is deleted', async () => {
  const path = join(tmp.dir, 'd', 'keys.json');
  const { token } = await issue(path);
  const good = readFileSync(path, 'utf8');
  const lines: Array<{ level: string; msg: string; keystore?: string }> = [];
  const log = createLogger({ write: (line) => void lines.push(JSON.parse(line)) });
  const cache = createKeystoreCache(path, { log, maxAgeMs: 0 });
  writeFileSync(`${path}.new`, 'garbage');
  renameSync(`${path}.new`, path);
  cache.refresh();
  assert.ok(cache.lookup(hashToken(token)));
  assert.deepEqual(
    lines.map((l) => l.msg),
    ['keystore reload failed; keeping the last good keys'],
  );
  renameSync(path, `${path}.gone`);
  cache.refresh();
  cache.refresh();
  assert.equal(cache.lookup(hashToken(token)), undefined);
  // every client now gets 401 invalid_token: the operator is told why, once
  assert.equal(lines.length, 2);
  assert.equal(lines[1].level, 'error');
  assert.equal(lines[1].keystore, path);
  assert.match(lines[1].msg, /keystore .*removed.*no key authenticates/);
  writeFileSync(path, good);
  cache.refresh();
  assert.ok(cache.lookup(hashToken(token)));
  assert.equal(lines.length, 2, 'a keystore that is back needs no line');
});

test('a keystore path that is a device or a FIFO is refused in one sentence instead of read forever', async () => {
  const fifo = join(tmp.dir, 'keys.fifo');
  execFileSync('mkfifo', [fifo]);
  for (const path of ['/dev/zero', fifo]) {
    assert.throws(
      () => readKeystoreFile(path),
      (e: unknown) =>
        e instanceof SvcError &&
        e.code === 'keystore_invalid' &&
        e.message.includes(path) &&
        /not a regular file/.test(e.message),
    );
  }
});

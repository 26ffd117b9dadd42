/**
 * A trace store the process may not write (here a file of mode 0400) is refused when `svc gateway` and
 * `svc serve` open it, with one sentence naming the file and what to do, before anything is logged as
 * dropped: SQLite opens such a file for reading without a word, and the first event used to fail as
 * "unexpected error: attempt to write a readonly database". Root writes any file, so as root the commands
 * run as the unprivileged uid 65534. A store whose -wal and -shm another user left (root opened it once) is
 * opened read-only by SQLite the same way, and its first read fails with 'unable to open database file': the
 * same sentence, not that one.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { makeTempDir, NOBODY, RUNS_AS_ROOT, runSvc, type SvcResult } from '../helpers/svc.ts';

const asRoot = RUNS_AS_ROOT;

/** Runs `svc <args>` to its end, as uid/gid 65534 when this test runs as root. */
function runAs(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<SvcResult> {
  // a store that opened would leave the server listening: the refusal is expected well before the timeout
  return runSvc(args, { env, cwd, unprivileged: true, timeoutMs: 30_000 });
}

test('a trace store this process may not write is refused at start with one sentence', {
  timeout: 120_000,
}, async (t) => {
  const tmp = makeTempDir('svc-ro-store-');
  t.after(() => tmp.cleanup());
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env); // creates the keystore and, for its audit event, the store
  chmodSync(files.db, 0o400);
  if (asRoot) {
    chownSync(tmp.dir, NOBODY, NOBODY);
    for (const name of readdirSync(tmp.dir)) chownSync(join(tmp.dir, name), NOBODY, NOBODY);
  }
  const env = { ...files.env, SVC_GATEWAY_PORT: '0', SVC_SERVE_PORT: '0' };
  for (const command of [['gateway'], ['serve', '--db-path', files.db]]) {
    await t.test(`svc ${command[0]}`, async () => {
      const r = await runAs(command, env, tmp.dir);
      assertReadOnlySentence(r);
    });
  }
});

test('a store whose -wal and -shm files another user left is refused at start with the same sentence', {
  skip: !asRoot && 'only root can leave a -wal and -shm of another user beside the store',
  timeout: 120_000,
}, async (t) => {
  const tmp = makeTempDir('svc-ro-wal-');
  t.after(() => tmp.cleanup());
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  chownSync(tmp.dir, NOBODY, NOBODY);
  for (const name of readdirSync(tmp.dir)) chownSync(join(tmp.dir, name), NOBODY, NOBODY);
  // root opened the store once (a command run by hand): its -wal and -shm stay root's, mode 0600
  for (const suffix of ['-wal', '-shm']) writeFileSync(`${files.db}${suffix}`, '', { mode: 0o600 });
  const before = readFileSync(files.db);
  const env = { ...files.env, SVC_GATEWAY_PORT: '0', SVC_SERVE_PORT: '0' };
  for (const command of [['gateway'], ['serve', '--db-path', files.db]]) {
    await t.test(`svc ${command[0]}`, async () => {
      const r = await runAs(command, env, tmp.dir);
      assertReadOnlySentence(r);
    });
  }
  assert.ok(readFileSync(files.db).equals(before), 'the store changed');
});

function assertReadOnlySentence(r: SvcResult): void {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, '');
  const sentence = r.stderr.split('\n').find((l) => l.startsWith('svc: '));
  assert.match(
    sentence ?? '',
    /^svc: The trace store .*svc\.db is read-only for this process \(.*\); make the file, its -wal and -shm files and its folder writable by the user svc runs as, or point --db-path or SVC_DB_PATH at a writable store\.$/,
  );
  assert.doesNotMatch(r.stderr, /unexpected error|dropped events/);
}

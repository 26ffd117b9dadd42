/**
 * The trace store keeps upstream error text that can quote a prompt, so it is private to its owner like
 * the keystore: every command that creates the store, its -wal/-shm or a backup makes them mode 0600
 * whatever the umask, and a store found with looser modes is tightened when opened for writing, with a
 * warning (issue 17 item 6: they were created 0644).
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { makeTempDir, runSvc, startSvc } from '../helpers/svc.ts';

const SIDE_FILES = ['', '-wal', '-shm'] as const;

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8).padStart(4, '0');
}

/** Folders svc made above a file it created: 0700, as the file holds prompts (umask 022 would give 0755). */
function assertPrivateFolders(...paths: string[]): void {
  for (const path of paths) assert.equal(modeOf(path), '0700', path);
}

function assertPrivate(path: string): void {
  assert.ok(existsSync(path), `${path} exists`);
  assert.equal(modeOf(path), '0600', path);
}

test('the store, its WAL and shared-memory files and every backup are created 0600 under umask 022', {
  timeout: 120_000,
}, async (t) => {
  // children inherit the umask: 022 is the common default that made the store world-readable
  const previous = process.umask(0o022);
  t.after(() => process.umask(previous));
  const tmp = makeTempDir('svc-modes-');
  t.after(() => tmp.cleanup());
  const files = gatewayFiles(tmp.dir);
  const p = (name: string) => join(tmp.dir, name);

  await t.test('issue-key creates the store for its audit event 0600, in new folders 0700', async () => {
    // an existing folder on the way keeps its mode: svc never changes a folder it did not make
    mkdirSync(p('shared'), { mode: 0o755 });
    await issueKey(files.env, ['--db-path', p('shared/stores/audit/audit.db')]);
    assertPrivate(p('shared/stores/audit/audit.db'));
    assertPrivateFolders(p('shared/stores'), p('shared/stores/audit'));
    assert.equal(modeOf(p('shared')), '0755');
    assertPrivate(files.keystore);
  });

  await t.test('svc gateway creates the store, -wal and -shm 0600', async () => {
    assert.equal(existsSync(files.db), false);
    const gw = await startSvc(['gateway', '--port', '{port}'], { env: files.env });
    t.after(() => gw.stop());
    // a request commits events, so the WAL has frames while the gateway still holds it open
    assert.equal((await fetch(`${gw.url}/v1/models`)).status, 401);
    for (const suffix of SIDE_FILES) assertPrivate(`${files.db}${suffix}`);
    assert.equal(await gw.stop(), 0);
    assertPrivate(files.db);
  });

  await t.test('svc backup writes the backup 0600, in new folders 0700', async () => {
    const r = await runSvc(['backup', p('backup.db'), '--db-path', files.db], { env: files.env });
    assert.equal(r.code, 0, r.stderr);
    assertPrivate(p('backup.db'));
    const nested = await runSvc(['backup', p('backups/daily/b.db'), '--db-path', files.db], {
      env: files.env,
    });
    assert.equal(nested.code, 0, nested.stderr);
    assertPrivate(p('backups/daily/b.db'));
    assertPrivateFolders(p('backups'), p('backups/daily'));
  });

  await t.test('svc restore writes the store 0600, new or replaced', async () => {
    const fresh = await runSvc(['restore', p('backup.db'), '--db-path', p('restored.db')], {
      env: files.env,
    });
    assert.equal(fresh.code, 0, fresh.stderr);
    assertPrivate(p('restored.db'));
    const nested = await runSvc(['restore', p('backup.db'), '--db-path', p('new-home/svc.db')], {
      env: files.env,
    });
    assert.equal(nested.code, 0, nested.stderr);
    assertPrivateFolders(p('new-home'));
    chmodSync(p('restored.db'), 0o644);
    const replaced = await runSvc(['restore', p('backup.db'), '--db-path', p('restored.db'), '--force'], {
      env: files.env,
    });
    assert.equal(replaced.code, 0, replaced.stderr);
    assertPrivate(p('restored.db'));
  });
});

test('a store found with looser modes is tightened to 0600 when a command opens it, with a warning', {
  timeout: 60_000,
}, async (t) => {
  const previous = process.umask(0o022);
  t.after(() => process.umask(previous));
  const tmp = makeTempDir('svc-modes-old-');
  t.after(() => tmp.cleanup());
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env); // creates the store at files.db
  // hold the store open so that its -wal and -shm exist, as a running gateway would, and loosen all three
  const holder = new DatabaseSync(files.db);
  t.after(() => holder.close());
  holder.exec('PRAGMA journal_mode = WAL');
  holder.exec("INSERT INTO store_meta (key, value) VALUES ('mode-probe', 'x')");
  for (const suffix of SIDE_FILES) chmodSync(`${files.db}${suffix}`, 0o644);

  const r = await runSvc(['analytics', 'user-export', 'usr_nobody', '--db-path', files.db], {
    env: files.env,
  });
  assert.equal(r.code, 0, r.stderr);
  for (const suffix of SIDE_FILES) assertPrivate(`${files.db}${suffix}`);
  const warning = r.stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.level === 'warn');
  assert.ok(warning, r.stderr);
  assert.match(String(warning.msg), /0600/);
  assert.deepEqual(
    warning.files,
    SIDE_FILES.map((s) => `${files.db}${s}`),
  );
});

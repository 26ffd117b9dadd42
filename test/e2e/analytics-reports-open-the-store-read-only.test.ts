/**
 * The report commands of `svc analytics` (every one but `user-export`) and `svc routing explain` only read
 * the trace store: they leave its mode (a 0644 store used to be set to 0600 without a word), its journal
 * mode and its schema version as they are, refuse a store of another schema version with one sentence
 * instead of migrating it, and answer a user who may only read the store: a read-only folder without
 * -wal and -shm, a live writer's -wal and -shm this user may not write, and (refused with one sentence)
 * a -wal holding changes without a -shm that could be created. Root writes any file, so as root the
 * read-only cases run as the unprivileged uid 65534; as any other user they run as that user, for whom
 * the files and folders are just as read-only.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { queryCost } from '#src/analytics/index.ts';
import { SCHEMA_VERSION } from '#src/store/migrate.ts';
import { openStore } from '#src/store/open.ts';
import { callEvent } from '../helpers/analytics-events.ts';
import { BASE_US, insertEvents, seqId } from '../helpers/event-rows.ts';
import { isolatedEnv, makeTempDir, runSvc, type SvcResult } from '../helpers/svc.ts';

const REPORTS = ['cost', 'cache', 'routing', 'reliability', 'sessions', 'savings', 'by-key', 'by-team'];
const WINDOW = ['--from', '2026-01-01T00:00:00Z', '--to', '2026-01-08T00:00:00Z'];
const window = { startUs: BASE_US, endUs: BASE_US + 7 * 86_400_000_000 };
const ALL = { gatewayKey: null, user: null, team: null, includeWorkers: true };

const tmp = makeTempDir('svc-reports-ro-');
/** Folders made read-only below, writable again before the temp dir is removed. */
const readOnlyDirs: string[] = [];
test.after(() => {
  for (const dir of readOnlyDirs) chmodSync(dir, 0o755);
  tmp.cleanup();
});
chmodSync(tmp.dir, 0o755); // uid 65534 must reach the copies below
const env = isolatedEnv(tmp.dir);
const seeded = join(tmp.dir, 'seeded.db');

const call = (i: number) =>
  callEvent(seqId(i), { at: i * 3_600_000_000, cost: `0.00${i + 1}`, key: i % 2 ? 'gk_a' : 'gk_b' });

test.before(async () => {
  const store = await openStore(seeded);
  insertEvents(store.db, 20, call);
  await store.close(); // the last connection checkpoints: the file alone holds everything
  assert.equal(existsSync(`${seeded}-wal`), false);
});

/** Runs `svc <args>` to its end; `asOther` runs it as uid/gid 65534 when this test runs as root. */
function svc(args: string[], asOther = false): Promise<SvcResult> {
  return runSvc(args, { cwd: tmp.dir, env, unprivileged: asOther });
}

/** A copy of the seeded store in a folder of its own. */
function copyStore(name: string, mode: number): string {
  const dir = join(tmp.dir, name);
  mkdirSync(dir);
  const db = join(dir, 'svc.db');
  copyFileSync(seeded, db);
  chmodSync(db, mode);
  return db;
}

function readOnly(dir: string): void {
  chmodSync(dir, 0o555);
  readOnlyDirs.push(dir);
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** Bytes 18 and 19 of the SQLite header: 1 for a rollback journal, 2 for WAL. */
function journalBytes(path: string): number[] {
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(2);
    readSync(fd, b, 0, 2, 18);
    return [...b];
  } finally {
    closeSync(fd);
  }
}

function userVersion(path: string, set?: number): number {
  const db = new DatabaseSync(path);
  try {
    if (set !== undefined) db.exec(`PRAGMA user_version = ${set}`);
    return Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
  } finally {
    db.close();
  }
}

async function costData(args: string[]): Promise<unknown> {
  const r = await svc(['analytics', 'cost', ...WINDOW, '--format', 'json', ...args], true);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).data;
}

test('every report leaves a 0644 store at 0644, without a warning', async () => {
  const db = copyStore('mode', 0o644);
  for (const report of REPORTS) {
    const r = await svc(['analytics', report, '--db-path', db]);
    assert.equal(r.code, 0, `${report}: ${r.stderr}`);
    assert.equal(r.stderr, '', report);
    for (const file of [db, `${db}-wal`, `${db}-shm`]) {
      if (existsSync(file)) assert.equal(modeOf(file).toString(8), '644', `${report}: ${file}`);
    }
  }
  const r = await svc(['routing', 'explain', '--model', 'sonnet', '--text', 'hi', '--db-path', db]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(modeOf(db).toString(8), '644', 'routing explain');
});

test('a report changes neither the journal mode nor the schema version, and refuses another version', async () => {
  const db = copyStore('journal', 0o600);
  const rollback = new DatabaseSync(db);
  rollback.exec('PRAGMA journal_mode = DELETE');
  rollback.close();
  assert.deepEqual(journalBytes(db), [1, 1]);
  assert.equal((await svc(['analytics', 'sessions', '--db-path', db])).code, 0);
  assert.deepEqual(journalBytes(db), [1, 1], 'still a rollback journal: the report did not set WAL');
  assert.equal(existsSync(`${db}-wal`), false);

  const older = copyStore('older', 0o600);
  userVersion(older, SCHEMA_VERSION - 1);
  for (const args of [
    ['analytics', 'cost'],
    ['routing', 'explain', '--model', 'sonnet', '--text', 'hi'],
  ]) {
    const r = await svc([...args, '--db-path', older]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(
      r.stderr,
      `svc: The trace store ${older} has schema version ${SCHEMA_VERSION - 1}, older than this svc binary's ${SCHEMA_VERSION}, and this command only reads it, so it does not migrate it; run svc gateway or svc serve on it once (a command that opens the store for writing migrates it), then run this command again.\n`,
    );
  }
  assert.equal(userVersion(older), SCHEMA_VERSION - 1, 'not migrated');

  const newer = copyStore('newer', 0o600);
  userVersion(newer, SCHEMA_VERSION + 1);
  const r = await svc(['analytics', 'by-key', '--db-path', newer]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    /^svc: The trace store .* has schema version \d+, newer than this svc binary's \d+; upgrade svc\.\n$/,
  );
});

test('a user who may only read the store and its folder gets the reports', async (t) => {
  const expected = await (async () => {
    const store = await openStore(seeded, { readOnly: true });
    try {
      return await queryCost(store.kysely, { window, groupBy: 'gateway_key', filters: ALL });
    } finally {
      await store.close();
    }
  })();
  const normalise = (data: unknown) => JSON.parse(JSON.stringify(data));

  await t.test('no -wal or -shm, and no right to create them', async () => {
    const db = copyStore('bare', 0o444);
    readOnly(join(tmp.dir, 'bare'));
    assert.deepEqual(await costData(['--group-by', 'gateway_key', '--db-path', db]), normalise(expected));
    for (const report of REPORTS) {
      const r = await svc(['analytics', report, '--db-path', db], true);
      assert.equal(r.code, 0, `${report}: ${r.stderr}`);
    }
    assert.equal(existsSync(`${db}-shm`), false);
  });

  await t.test("a live writer's changes in a -wal and -shm this user may not write", async () => {
    const db = copyStore('live', 0o600);
    const dir = join(tmp.dir, 'live');
    const writer = await openStore(db);
    try {
      insertEvents(writer.db, 5, (i) => call(100 + i)); // into the WAL: nothing checkpoints 5 rows
      assert.ok(statSync(`${db}-wal`).size > 0);
      const live = await queryCost(writer.kysely, { window, groupBy: 'gateway_key', filters: ALL });
      assert.notDeepEqual(normalise(live), normalise(expected));
      for (const file of [db, `${db}-wal`, `${db}-shm`]) chmodSync(file, 0o444);
      chmodSync(dir, 0o555);
      assert.deepEqual(await costData(['--group-by', 'gateway_key', '--db-path', db]), normalise(live));

      // the same -wal copied without its -shm, which cannot be created in a read-only folder: one sentence
      const lone = join(tmp.dir, 'lone');
      mkdirSync(lone);
      copyFileSync(db, join(lone, 'svc.db'));
      copyFileSync(`${db}-wal`, join(lone, 'svc.db-wal'));
      readOnly(lone);
      const r = await svc(['analytics', 'cost', '--db-path', join(lone, 'svc.db')], true);
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        /^svc: Cannot read the trace store .*svc\.db: its -wal file holds changes or a process has the store open, and reading it then needs a -shm file that this process can neither use nor create in .*lone \(.*\); run the command as a user who may write that folder, or have the store's owner open it for writing once \(svc gateway\) to move the changes into the file\.\n$/,
      );
    } finally {
      chmodSync(dir, 0o755);
      for (const file of [db, `${db}-wal`, `${db}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
      await writer.close();
    }
  });

  await t.test('the connection a report opens cannot write', async () => {
    const db = copyStore('probe', 0o600);
    const store = await openStore(db, { readOnly: true, currentSchema: true });
    try {
      assert.throws(() => store.db.exec('DELETE FROM events'), /readonly/);
    } finally {
      await store.close();
    }
  });
});

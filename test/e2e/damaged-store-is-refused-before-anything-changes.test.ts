/**
 * A trace store with damaged pages (bytes overwritten in the middle of its b-tree pages, as a failing disk
 * or a copy taken mid-write leaves them) through the real executable:
 * - `svc user forget` refuses before changing anything (it rewrote what the damaged index let it find,
 *   VACUUM kept the rest, and it exited 0 with the id still in the file);
 * - `svc backup` refuses and leaves no file (it wrote a backup that restore then refused);
 * - `svc restore` of such a backup says so in one line (SQLite's integrity_check text spans lines).
 * Each answer is one sentence on stderr, exit 1.
 */
import assert from 'node:assert/strict';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { BASE_US, seedStore, seqId } from '../helpers/event-rows.ts';
import { isolatedEnv, makeTempDir, runSvc, type SvcResult } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-damaged-');
test.after(() => tmp.cleanup());
const env = isolatedEnv(tmp.dir);
let n = 0;

const USERS = ['usr_alice', 'usr_bob', null, 'usr_alice', 'usr_carol'];

/**
 * A store of `count` small events, two in five usr_alice's, with bytes 100–300 of pages 5 on (but the
 * schema's) set to 0x5a: with small rows that is the middle of each page's cell pointer array, so SQLite
 * finds rows out of order (and integrity_check answers in several lines) rather than only bad JSON.
 */
async function damagedStore(count = 2000): Promise<string> {
  const path = join(tmp.dir, `s${++n}`, 'svc.db');
  await seedStore(path, count, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i * 1_000_000,
    type: 'llm.call_completed',
    turn_id: `turn_${i}`,
    payload: { user_id: USERS[i % USERS.length], seq: i },
  }));
  const db = new DatabaseSync(path);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE');
  const pageSize = Number((db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size);
  // the schema's own pages stay intact (a damaged schema is refused at open, by another test)
  const schemaPages = new Set(
    (db.prepare("SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'").all() as { pageno: number }[]).map(
      (r) => r.pageno,
    ),
  );
  db.close();
  const pages = Math.floor(statSync(path).size / pageSize);
  assert.ok(pages >= 8, `the seeded store has only ${pages} pages`);
  const fd = openSync(path, 'r+');
  try {
    for (let page = 5; page <= pages; page++)
      if (!schemaPages.has(page)) writeSync(fd, Buffer.alloc(201, 0x5a), 0, 201, (page - 1) * pageSize + 100);
  } finally {
    closeSync(fd);
  }
  return path;
}

function assertOneSentence(r: SvcResult, pattern: RegExp): string {
  assert.equal(r.code, 1, `${r.stderr}${r.stdout}`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^svc: [^\n]*\.$/);
  assert.ok(lines[0].length < 800, `${lines[0].length} characters`);
  assert.doesNotMatch(lines[0], /\*\*\*|unexpected error/);
  assert.match(lines[0], pattern);
  return lines[0];
}

const occurrences = (path: string, needle: string) =>
  [path, `${path}-wal`]
    .filter((f) => existsSync(f))
    .reduce((sum, f) => sum + readFileSync(f).toString('latin1').split(needle).length - 1, 0);

test('forget refuses a damaged store before changing anything', async () => {
  const db = await damagedStore();
  const before = occurrences(db, 'usr_alice');
  assert.ok(before > 0);
  const r = await runSvc(['user', 'forget', 'usr_alice', '--confirm', '--db-path', db], { env });
  assertOneSentence(
    r,
    /^svc: The trace store is damaged: .*svc\.db failed PRAGMA integrity_check \(.+\), so nothing was changed; restore it from a backup with svc restore, or point --db-path at an intact copy\.$/,
  );
  assert.equal(r.stdout, '');
  assert.equal(occurrences(db, 'usr_alice'), before);
  assert.equal(occurrences(db, 'redacted_'), 0);
  assert.equal(occurrences(db, 'analytics.user_forgotten'), 0);
});

test('backup refuses a damaged store and leaves no file behind', async () => {
  const db = await damagedStore();
  const folder = join(tmp.dir, `b${n}`);
  const dest = join(folder, 'backup.db');
  const r = await runSvc(['backup', dest, '--db-path', db], { env });
  assertOneSentence(
    r,
    /^svc: The trace store is damaged: .*svc\.db failed PRAGMA integrity_check \(.+\), so no backup was written; restore it from a backup with svc restore, or point --db-path at an intact copy\.$/,
  );
  assert.equal(r.stdout, '');
  assert.deepEqual(existsSync(folder) ? readdirSync(folder) : [], []);
});

test('restore of a damaged backup names its first problems on one line', async () => {
  const backup = await damagedStore();
  const target = join(tmp.dir, `r${n}`, 'svc.db');
  const r = await runSvc(['restore', backup, '--db-path', target], { env });
  assertOneSentence(
    r,
    /^svc: The backup .*svc\.db failed PRAGMA integrity_check \(.+\); restore an intact backup instead\.$/,
  );
  assert.equal(existsSync(target), false);
});

test('a key command whose audit store is damaged issues and revokes the key with one warning line, no log line', async () => {
  const db = await damagedStore();
  const keyEnv = { ...env, SVC_GATEWAY_KEYSTORE: join(tmp.dir, `keys${n}.json`), SVC_GATEWAY_DB_PATH: db };
  const warning = (type: string) =>
    new RegExp(
      `^svc: warning: the audit event ${type} was not recorded because the trace store .*svc\\.db refused the write \\(.*malformed.*\\); the keystore change itself is done\\.$`,
    );
  const issued = await runSvc(['gateway', 'issue-key', '--name', 'audit', '--workspace', tmp.dir], {
    env: keyEnv,
  });
  assert.equal(issued.code, 0, issued.stderr);
  assert.match(issued.stdout, /^key_id: gk_\w+\ntoken: gw_\w+\n$/);
  assert.equal(issued.stderr.trimEnd().split('\n').length, 1, issued.stderr);
  assert.match(issued.stderr.trimEnd(), warning('gateway\\.key_issued'));
  const keyId = /^key_id: (\S+)$/m.exec(issued.stdout)?.[1] ?? '';
  const revoked = await runSvc(['gateway', 'revoke-key', keyId], { env: keyEnv });
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal(revoked.stderr.trimEnd().split('\n').length, 1, revoked.stderr);
  assert.match(revoked.stderr.trimEnd(), warning('gateway\\.key_revoked'));
});

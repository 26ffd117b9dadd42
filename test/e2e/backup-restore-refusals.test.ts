/**
 * Every refusal of `svc backup` / `svc restore` through the real executable: one sentence on stderr
 * saying what to do, exit 1 (2 for usage), and the store left as it was.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { SCHEMA_VERSION } from '#src/store/migrate.ts';
import { startStoreWriter } from '../helpers/store-writer.ts';
import { isolatedEnv, makeTempDir, NOBODY, RUNS_AS_ROOT, runSvc, type SvcResult } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-br-refuse-');
test.after(() => tmp.cleanup());
const env = isolatedEnv(tmp.dir);
const p = (name: string) => join(tmp.dir, name);

function assertRefused(r: SvcResult, code: number, pattern: RegExp): void {
  assert.equal(r.code, code, `${r.stderr}${r.stdout}`);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^svc: /);
  assert.match(lines[0], pattern);
}

const countEvents = (path: string) => {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return Number((db.prepare('SELECT count(*) AS c FROM events').get() as { c: number }).c);
  } finally {
    db.close();
  }
};

// one live store with a few events, and one good backup of it
const live = p('live/svc.db');
const good = p('good-backup.db');
test.before(async () => {
  const w = await runWriterOnce(live, 20);
  assert.equal(w, 0);
  const r = await runSvc(['backup', good, '--db-path', live], { env });
  assert.equal(r.code, 0, r.stderr);
});

async function runWriterOnce(db: string, count: number): Promise<number | null> {
  const fake = { after: () => {} };
  return startStoreWriter(['write', db, String(count), '10'], fake).exited;
}

test('backup refuses to overwrite an existing destination', async () => {
  writeFileSync(p('taken.db'), 'precious');
  const r = await runSvc(['backup', p('taken.db'), '--db-path', live], { env });
  assertRefused(r, 1, /backup destination .*taken\.db already exists; .*choose a new file name/);
  assert.equal(statSync(p('taken.db')).size, 'precious'.length);
  // a folder: name a file in it (before: 'already exists; … remove it first', of a folder of backups)
  mkdirSync(p('backups'));
  const folder = await runSvc(['backup', p('backups'), '--db-path', live], { env });
  assertRefused(
    folder,
    1,
    /backup destination .*backups is a folder; name a new file in it, such as .*backups\/svc-backup\.db\.$/,
  );
  assert.deepEqual(readdirSync(p('backups')), []);
});

test('backup onto a link to a missing file is refused as taken, never reported done with no backup anywhere', async () => {
  symlinkSync(p('gone/old-backup.db'), p('dangling.db'));
  const r = await runSvc(['backup', p('dangling.db'), '--db-path', live], { env });
  assertRefused(r, 1, /backup destination .*dangling\.db already exists; .*choose a new file name/);
  assert.equal(existsSync(p('gone/old-backup.db')), false);
  assert.deepEqual(
    readdirSync(tmp.dir).filter((f) => f.includes('.backup-')),
    [],
    'no temp file left',
  );
});

test('backup under a file (a path whose folder is a file) is refused with the folder sentence, not an unexpected error', async () => {
  writeFileSync(p('plain-file'), 'not a folder');
  const r = await runSvc(['backup', p('plain-file/x.db'), '--db-path', live], { env });
  assertRefused(r, 1, /Cannot create the folder .*plain-file for the backup .*choose a writable destination/);
  assert.equal(readFileSync(p('plain-file'), 'utf8'), 'not a folder');
});

test('a folder that refuses new files without EACCES (/proc answers ENOENT) is the folder sentence for backup and restore', async () => {
  const backup = await runSvc(['backup', '/proc/svc-backup.db', '--db-path', live], { env });
  assertRefused(
    backup,
    1,
    /^svc: Cannot write the backup \/proc\/svc-backup\.db: the folder \/proc cannot be written/,
  );
  const restore = await runSvc(['restore', good, '--db-path', '/proc/svc.db', '--force'], { env });
  assertRefused(
    restore,
    1,
    /^svc: Cannot write the restored trace store \/proc\/svc\.db: the folder \/proc cannot/,
  );
});

test('backup of a missing store says where it looked and how to point elsewhere, and makes no folder for the backup', async () => {
  const r = await runSvc(['backup', p('x.db'), '--db-path', p('missing/svc.db')], { env });
  assertRefused(r, 1, /No trace store at .*missing\/svc\.db; pass --db-path or set SVC_DB_PATH/);
  const nested = await runSvc(['backup', p('new-folder/x.db'), '--db-path', p('missing/svc.db')], { env });
  assertRefused(nested, 1, /No trace store at .*missing\/svc\.db/);
  assert.equal(existsSync(p('new-folder')), false);
});

test('backup onto the store itself is refused', async () => {
  const r = await runSvc(['backup', live, '--db-path', live], { env });
  assertRefused(r, 1, /already exists|is the trace store itself/);
});

test('backup onto the name of the store’s -wal, -shm or -journal file is refused, whether or not it exists now', async () => {
  // an idle store may have no -wal: a backup written there would be taken for the WAL at the next open
  const events = countEvents(live);
  const state = (f: string) => (readdirSync(p('live')).includes(f) ? readFileSync(p(`live/${f}`)) : null);
  for (const suffix of ['-wal', '-shm', '-journal']) {
    const before = state(`svc.db${suffix}`);
    const r = await runSvc(['backup', `${live}${suffix}`, '--db-path', live], { env });
    assertRefused(r, 1, new RegExp(`is the trace store's file .*svc\\.db${suffix}, which SQLite rewrites`));
    assert.deepEqual(state(`svc.db${suffix}`), before, `svc.db${suffix} is as it was`);
  }
  assert.equal(countEvents(live), events);
});

test('backup onto a store file’s name through a link to the store’s folder is refused while that file does not exist', async () => {
  const linked = p('linked-live');
  symlinkSync(p('live'), linked);
  const before = readdirSync(p('live')).sort();
  // the files SQLite may create beside an idle store; a backup there would be taken for one of them
  const absent = ['-wal', '-shm', '-journal'].filter((suffix) => !before.includes(`svc.db${suffix}`));
  assert.ok(absent.length > 0, `the store has every file already: ${before.join(' ')}`);
  for (const suffix of absent) {
    const r = await runSvc(['backup', join(linked, `svc.db${suffix}`), '--db-path', live], { env });
    assertRefused(r, 1, new RegExp(`is the trace store's file .*svc\\.db${suffix}, which SQLite rewrites`));
  }
  assert.deepEqual(readdirSync(p('live')).sort(), before, 'no file was added beside the store');
});

test('backup and restore without their file argument are usage errors (exit 2)', async () => {
  assertRefused(await runSvc(['backup'], { env }), 2, /Missing required positional argument/);
  assertRefused(
    await runSvc(['restore', '--db-path', live], { env }),
    2,
    /Missing required positional argument/,
  );
  assertRefused(await runSvc(['gateway', 'restore', good, '--wat'], { env }), 2, /Unknown option "--wat"/);
});

test('restore refuses a backup whose schema version differs, naming both versions', async () => {
  const other = p('future-backup.db');
  assert.equal((await runSvc(['backup', other, '--db-path', live], { env })).code, 0);
  const db = new DatabaseSync(other);
  db.exec('PRAGMA user_version = 99');
  db.close();
  const r = await runSvc(['restore', other, '--db-path', p('fresh1/svc.db')], { env });
  assertRefused(
    r,
    1,
    new RegExp(
      `schema version 99 but this svc binary uses schema version ${SCHEMA_VERSION}; restore it with an svc binary`,
    ),
  );
  // a backup taken before an upgrade: the same refusal, and the way forward (README, Upgrading)
  const older = p('older-backup.db');
  assert.equal((await runSvc(['backup', older, '--db-path', live], { env })).code, 0);
  const old = new DatabaseSync(older);
  old.exec(`PRAGMA user_version = ${SCHEMA_VERSION - 1}`);
  old.close();
  const fresh = p('fresh-older/svc.db');
  assertRefused(
    await runSvc(['restore', older, '--db-path', fresh], { env }),
    1,
    new RegExp(
      `schema version ${SCHEMA_VERSION - 1} but this svc binary uses schema version ${SCHEMA_VERSION}; restore it with an svc binary of the same schema version \\(the svc release that took it\\), then start this svc on the restored store \\(svc gateway or svc serve\\), which migrates it to schema version ${SCHEMA_VERSION}\\.$`,
    ),
  );
  assert.equal(existsSync(fresh), false, 'nothing was restored');
});

test('restore refuses to replace an existing store without --force', async () => {
  const before = countEvents(live);
  const r = await runSvc(['restore', good, '--db-path', live], { env });
  assertRefused(r, 1, /A trace store already exists at .*live\/svc\.db; pass --force to replace it/);
  assert.equal(countEvents(live), before);
});

// through a link or a second name the backup is the store file: the restore locked it and then waited
// SVC_SQLITE_BUSY_TIMEOUT_MS to read it, to say 'Cannot use the trace store <backup>: database is locked; run
// the command again when it is idle', advice that never helps
test('restore of the store itself, by its path, a link or a hard link, is refused naming it, store untouched', async () => {
  const before = countEvents(live);
  symlinkSync(live, p('live-link.db'));
  linkSync(live, p('live-hard.db'));
  for (const backup of [live, p('live-link.db'), p('live-hard.db')]) {
    const r = await runSvc(['restore', backup, '--db-path', live, '--force'], { env });
    assertRefused(r, 1, /^svc: The backup .* is the trace store itself; pass a backup file\.$/);
  }
  assert.equal(countEvents(live), before);
});

// citty reads any value but "false" as true: `--force=no` must not replace the store
test('restore --force=no (or any value but true / false) is a usage error that replaces nothing', async () => {
  const inode = statSync(live).ino;
  for (const flag of ['--force=no', '--force=0', '--no-force=yes']) {
    const r = await runSvc(['restore', good, '--db-path', live, flag], { env });
    assertRefused(
      r,
      2,
      /Option --force of svc restore is a switch: give it alone \(or --force=true \/ --force=false\)/,
    );
  }
  assert.equal(statSync(live).ino, inode, 'the store was replaced');
});

test('restore refuses while another process has the store open, even with --force', async (t) => {
  const held = p('held/svc.db');
  const holder = startStoreWriter(['hold', held], t);
  await holder.waitFor('ready');
  const r = await runSvc(['restore', good, '--db-path', held, '--force'], { env });
  assertRefused(r, 1, /is open in another process .*; stop it, then run restore again/);
  assert.equal(await holder.release(), 0);
  assert.equal(countEvents(held), 2); // its registration and its one event, untouched
  const again = await runSvc(['restore', good, '--db-path', held, '--force'], { env });
  assert.equal(again.code, 0, again.stderr);
});

test('restore refuses a backup that fails PRAGMA integrity_check, and leaves the store alone', async () => {
  const corrupt = p('corrupt-backup.db');
  assert.equal((await runSvc(['backup', corrupt, '--db-path', live], { env })).code, 0);
  const size = statSync(corrupt).size;
  const fd = openSync(corrupt, 'r+');
  writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, size - 2 * 4096); // scribble over a b-tree page
  closeSync(fd);
  const before = countEvents(live);
  const r = await runSvc(['restore', corrupt, '--db-path', live, '--force'], { env });
  assertRefused(r, 1, /failed PRAGMA integrity_check \(.*\); restore an intact backup instead/);
  assert.equal(countEvents(live), before);
});

test('restore refuses a file that is not a SQLite database, and a missing backup', async () => {
  writeFileSync(p('notes.txt'), 'not a database at all\n'.repeat(300));
  assertRefused(
    await runSvc(['restore', p('notes.txt'), '--db-path', p('fresh2/svc.db')], { env }),
    1,
    /backup .*notes\.txt is not a SQLite database; pass a file written by svc backup\.$/,
  );
  assertRefused(
    await runSvc(['restore', p('nope.db'), '--db-path', p('fresh2/svc.db')], { env }),
    1,
    /No backup file at .*nope\.db; pass a file written by svc backup/,
  );
});

test('a --db-path that is a folder is refused as no store file, with or without --force, and left alone', async () => {
  const folder = p('a-folder');
  mkdirSync(folder);
  writeFileSync(join(folder, 'keep.txt'), 'x');
  for (const extra of [[], ['--force']]) {
    assertRefused(
      await runSvc(['restore', good, '--db-path', folder, ...extra], { env }),
      1,
      /^svc: The trace store path .*a-folder is not a regular file; point --db-path at a file\.$/,
    );
  }
  assert.deepEqual(readdirSync(folder), ['keep.txt']);
});

test('a --db-path that is a link to a missing file is refused naming the link, with or without --force, and left alone', async () => {
  const missing = p('moved-away/svc.db');
  symlinkSync(missing, p('store-link.db'));
  for (const extra of [[], ['--force']]) {
    assertRefused(
      await runSvc(['restore', good, '--db-path', p('store-link.db'), ...extra], { env }),
      1,
      /^svc: The trace store path .*store-link\.db is a link to .*moved-away\/svc\.db, which does not exist; point --db-path at a file, or remove the link, then run restore again\.$/,
    );
  }
  assert.equal(lstatSync(p('store-link.db')).isSymbolicLink(), true);
  assert.equal(existsSync(missing), false);
});

test('a backup argument that is a folder or a cut-off file is refused with advice about the backup, not about --db-path', async () => {
  assertRefused(
    await runSvc(['restore', tmp.dir, '--db-path', p('fresh3/svc.db')], { env }),
    1,
    /backup .* is not a regular file; pass a file written by svc backup\.$/,
  );
  const whole = readFileSync(good);
  writeFileSync(p('cut.db'), whole.subarray(0, Math.floor(whole.length / 2)));
  const cut = await runSvc(['restore', p('cut.db'), '--db-path', p('fresh3/svc.db')], { env });
  assertRefused(cut, 1, /backup .*cut\.db cannot be read \(.*\); restore an intact backup instead\.$/);
  for (const r of [cut]) assert.doesNotMatch(r.stderr, /--db-path|SVC_DB_PATH|trace store/);
});

test('a backup this user may not read is refused with one sentence about the backup, not as an unexpected error', async (t) => {
  // root reads any file, so as root the restore runs as uid 65534 in a folder of its own
  const own = makeTempDir('svc-br-unreadable-');
  t.after(() => own.cleanup());
  if (RUNS_AS_ROOT) chownSync(own.dir, NOBODY, NOBODY);
  const backup = join(own.dir, 'backup.db');
  copyFileSync(good, backup);
  chmodSync(backup, 0o000);
  if (RUNS_AS_ROOT) chownSync(backup, 0, 0);
  const target = join(own.dir, 'fresh/svc.db');
  const r = await runSvc(['restore', backup, '--db-path', target], {
    env: isolatedEnv(own.dir),
    unprivileged: true,
  });
  assertRefused(
    r,
    1,
    /^svc: The backup .*backup\.db cannot be read \(EACCES\); make it readable by the user svc runs as, then run restore again\.$/,
  );
  assert.equal(existsSync(target), false);
});

test('"-" for the backup or the store file is a usage error (no standard output or input), never a file named "-"', async () => {
  const r = await runSvc(['backup', '-', '--db-path', live], { env, cwd: tmp.dir });
  assertRefused(
    r,
    2,
    /^svc: DEST_FILE is a file, not standard output \("-"\); name the file \(\.\/- for a file called -\)\.$/,
  );
  assert.equal(existsSync(p('-')), false);
  const s = await runSvc(['restore', '-', '--db-path', p('fresh-dash/svc.db')], { env, cwd: tmp.dir });
  assertRefused(s, 2, /^svc: BACKUP_FILE is a file, not standard input \("-"\)/);
  assert.equal(existsSync(p('fresh-dash')), false);
});

test('an empty file argument (an unset shell variable) is a usage error naming it, not a path to the current folder', async () => {
  assertRefused(
    await runSvc(['backup', '', '--db-path', live], { env }),
    2,
    /^svc: DEST_FILE needs a file path\.$/,
  );
  assertRefused(
    await runSvc(['restore', ' ', '--db-path', p('fresh4/svc.db')], { env }),
    2,
    /^svc: BACKUP_FILE needs a file path\.$/,
  );
  assertRefused(
    await runSvc(['analytics', 'user-export', 'usr_writer', '--out', '', '--db-path', live], { env }),
    2,
    /^svc: --out needs a file path; leave it out to write to stdout\.$/,
  );
});

test('on PostgreSQL, backup and restore point to pg_dump / pg_restore and exit 1, never echoing the password', async () => {
  const url = 'postgres://svc:s3cret-pw@127.0.0.1:1/svc';
  const viaEnv = isolatedEnv(tmp.dir, { SVC_DATABASE_URL: url });
  const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [
      ['backup', p('pg.dump')],
      viaEnv,
      /PostgreSQL database postgres:\/\/svc@127\.0\.0\.1:1\/svc; .*pg_dump .*"\$SVC_DATABASE_URL"\.$/,
    ],
    // the URL came from the flag: the command names that, not a variable the user never set
    [
      ['gateway', 'backup', p('pg.dump'), '--database-url', url],
      env,
      /pg_dump --format=custom --file=svc\.dump "<the URL you gave --database-url>"\.$/,
    ],
    [['restore', good], viaEnv, /pg_restore --clean --if-exists --dbname="\$SVC_DATABASE_URL" svc\.dump\.$/],
    [
      ['gateway', 'restore', good, '--force', '--database-url', url],
      env,
      /pg_restore --clean --if-exists --dbname="<the URL you gave --database-url>" svc\.dump\.$/,
    ],
  ];
  for (const [args, e, pattern] of cases) {
    const r = await runSvc(args, { env: e });
    assertRefused(r, 1, pattern);
    assert.ok(!r.stderr.includes('s3cret'), r.stderr);
  }
  const both = await runSvc(['backup', p('x.db'), '--db-path', live, '--database-url', url], { env });
  assertRefused(both, 2, /either --database-url or --db-path, not both/);
});

/**
 * `svc user forget`, `svc backup` and `svc restore` on a disk that is full, on a read-only file system and
 * in a folder the user may not write, through the real executable: exit 1 with one sentence naming the
 * real cause and what to do (no JSON log line, no "unexpected error"), and no file left behind.
 * Forget on a full disk stores its audit event in the rewrite's transaction: both or neither (it used to
 * rewrite the rows, lose the audit event and blame a lock).
 *
 * The full disk and the read-only file system are a small tmpfs mounted in a private mount namespace
 * (`unshare --mount`, with `--map-root-user` when not root), so any user can run this and nothing leaks
 * out; a machine that cannot do that fails the test rather than skipping it. The unwritable folder is
 * mode 0555; root ignores that, so as root those commands run as uid 65534.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { BASE_US, callPayload, seedStore, seqId } from '../helpers/event-rows.ts';
import {
  collectOutput,
  ensureBuilt,
  isolatedEnv,
  makeTempDir,
  NOBODY,
  RUNS_AS_ROOT,
  runSvc,
  SVC_BIN,
  type SvcResult,
} from '../helpers/svc.ts';

const asRoot = RUNS_AS_ROOT;
const tmp = makeTempDir('svc-disk-');
test.after(() => tmp.cleanup());
const env = isolatedEnv(tmp.dir);
let n = 0;

const USERS = ['usr_alice', 'usr_bob', null, 'usr_alice', 'usr_carol'];
const ALICE_ROWS = 24; // of 60

/**
 * A store of 60 events, 24 of them usr_alice's, in one file (no -wal); `wal` keeps it in WAL mode, as svc
 * leaves a store, so a reader needs a -shm beside it.
 */
async function seededStore(mode: 'delete' | 'wal' = 'delete'): Promise<string> {
  const path = join(tmp.dir, `s${++n}`, 'svc.db');
  await seedStore(path, 60, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i * 1_000_000,
    type: 'llm.call_completed',
    turn_id: `turn_${i}`,
    payload: callPayload(USERS[i % USERS.length], { seq: i }),
  }));
  const db = new DatabaseSync(path);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  if (mode === 'delete') db.exec('PRAGMA journal_mode = DELETE');
  db.close();
  return path;
}

/** A backup written by svc backup, to restore. */
async function backupFile(): Promise<string> {
  const store = await seededStore();
  const backup = join(tmp.dir, `backup${n}.db`);
  const r = await runSvc(['backup', backup, '--db-path', store], { env });
  assert.equal(r.code, 0, r.stderr);
  return backup;
}

/**
 * Runs `script` (sh) in a private mount namespace where $MNT is a fresh tmpfs of `size` and $RO an
 * empty folder to bind it to read-only (a remount fails in a user namespace, a read-only bind works). Inside it,
 * `run NAME ARGS…` runs svc and keeps its stdout, stderr and exit code in $OUT/NAME.{out,err,rc}.
 * Returns the results by name.
 */
async function inTmpfs(
  size: string,
  script: string,
): Promise<{ results: Map<string, SvcResult>; out: string }> {
  ensureBuilt();
  const base = join(tmp.dir, `ns${++n}`);
  const mnt = join(base, 'mnt');
  const ro = join(base, 'ro');
  const out = join(base, 'out');
  for (const dir of [mnt, ro, out]) mkdirSync(dir, { recursive: true });
  const full = [
    'set -u',
    `run() { name=$1; shift; "$NODE" "$SVC" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo $? >"$OUT/$name.rc"; }`,
    `mount -t tmpfs -o size=${size},mode=0755 tmpfs "$MNT" || exit 97`,
    script,
  ].join('\n');
  const args = [...(asRoot ? [] : ['--map-root-user']), '--mount', 'sh', '-c', full];
  const child = spawn('unshare', args, {
    env: { ...env, NODE: process.execPath, SVC: SVC_BIN, MNT: mnt, RO: ro, OUT: out },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // no unshare at all is reported by the assertion below, with what it said
  const shell: SvcResult = await collectOutput(child, 120_000).catch((err) => ({
    code: -1,
    stdout: '',
    stderr: String(err),
  }));
  assert.equal(
    shell.code,
    0,
    `this test needs a tmpfs in a private mount namespace (unshare ${args.slice(0, -2).join(' ')}), which this machine refused; it cannot check full and read-only disks without one: ${shell.stderr}`,
  );
  const results = new Map<string, SvcResult>();
  for (const f of readdirSync(out)) {
    if (!f.endsWith('.rc')) continue;
    const name = f.slice(0, -3);
    results.set(name, {
      code: Number(readFileSync(join(out, f), 'utf8').trim()),
      stdout: readFileSync(join(out, `${name}.out`), 'utf8'),
      stderr: readFileSync(join(out, `${name}.err`), 'utf8'),
    });
  }
  return { results, out };
}

function oneSentence(r: SvcResult | undefined, pattern: RegExp): void {
  assert.ok(r, 'the command did not run');
  assert.equal(r.code, 1, `${r.stderr}${r.stdout}`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `stderr is not one line:\n${r.stderr}`);
  assert.match(lines[0], /^svc: [^{][^\n]*\.$/);
  assert.doesNotMatch(lines[0], /unexpected error|dropped events/);
  assert.match(lines[0], pattern);
}

const forgetAudits = (path: string) => {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const audits = (
      db
        .prepare("SELECT payload FROM events WHERE type = 'analytics.user_forgotten' ORDER BY id")
        .all() as Array<{ payload: string }>
    ).map((r) => JSON.parse(r.payload) as { pseudonymized_rows: number });
    const alice = Number(
      (db.prepare("SELECT count(*) AS c FROM events WHERE user_id = 'usr_alice'").get() as { c: number }).c,
    );
    return { audits, alice };
  } finally {
    db.close();
  }
};

/**
 * Room for the store and a little more: with the smaller margin the rewrite's transaction runs out of
 * space, with the larger one the VACUUM after it does (either is accepted for either margin).
 */
for (const marginKiB of [72, 150]) {
  test(`forget on a full disk (store + ${marginKiB} KiB): one sentence, the rewrite and its audit event both or neither, and a re-run finishes`, {
    timeout: 120_000,
  }, async () => {
    const store = await seededStore();
    const size = `${Math.ceil((statSync(store).size + marginKiB * 1024) / 4096) * 4}k`;
    const { results, out } = await inTmpfs(
      size,
      [
        `cp "${store}" "$MNT/svc.db"`,
        'run first user forget usr_alice --confirm --db-path "$MNT/svc.db"',
        'mkdir "$OUT/first" "$OUT/again" && cp "$MNT"/svc.db* "$OUT/first/" && cp "$MNT"/svc.db* "$OUT/again/"',
      ].join('\n'),
    );
    oneSentence(
      results.get('first'),
      /^svc: The disk is full\b.*; free (some|at least its size in) space.*, then run the command again\.$/,
    );
    const first = forgetAudits(join(out, 'first/svc.db'));
    const committed = first.alice === 0;
    if (committed) {
      // the rewrite committed, the compaction after it ran out of space: its audit event is there
      assert.deepEqual(
        first.audits.map((a) => a.pseudonymized_rows),
        [ALICE_ROWS],
      );
    } else {
      assert.equal(first.alice, ALICE_ROWS, 'rows were rewritten but not all');
      assert.deepEqual(first.audits, [], 'an audit event was stored without the rewrite');
    }
    // the same store on a disk with room (a copy taken out of the namespace, -wal included)
    const again = await runSvc(
      ['user', 'forget', 'usr_alice', '--confirm', '--db-path', join(out, 'again/svc.db')],
      { env },
    );
    assert.equal(again?.code, 0, again?.stderr);
    assert.equal(again?.stderr, '');
    assert.match(again?.stdout ?? '', new RegExp(`^pseudonymized_rows: ${committed ? 0 : ALICE_ROWS}$`, 'm'));
    const done = forgetAudits(join(out, 'again/svc.db'));
    assert.equal(done.alice, 0);
    assert.deepEqual(
      done.audits.map((a) => a.pseudonymized_rows),
      committed ? [ALICE_ROWS, 0] : [ALICE_ROWS],
    );
    for (const f of readdirSync(join(out, 'again')))
      assert.equal(readFileSync(join(out, 'again', f)).includes('usr_alice'), false, f);
  });
}

test('backup and restore onto a full disk: one sentence, nothing left behind', {
  timeout: 120_000,
}, async () => {
  const backup = await backupFile();
  const store = await seededStore();
  const { results, out } = await inTmpfs(
    '32k',
    [
      `run backup backup "$MNT/b.db" --db-path "${store}"`,
      `run restore restore "${backup}" --db-path "$MNT/new.db"`,
      'ls -A "$MNT" >"$OUT/left"',
    ].join('\n'),
  );
  oneSentence(
    results.get('backup'),
    /^svc: Cannot write the backup .*\/b\.db: the disk is full \(.*\); free some space, then run the command again\.$/,
  );
  oneSentence(
    results.get('restore'),
    /^svc: Cannot write the restored trace store .*\/new\.db: the disk is full \(.*\); free some space, then run the command again\.$/,
  );
  assert.equal(readFileSync(join(out, 'left'), 'utf8'), '');
});

test('backup, restore, forget and user-export on a read-only file system: one sentence, nothing changed', {
  timeout: 120_000,
}, async () => {
  const backup = await backupFile();
  const store = await seededStore();
  const walStore = await seededStore('wal');
  const { results, out } = await inTmpfs(
    '4m',
    [
      `cp "${store}" "$MNT/svc.db"`,
      `cp "${walStore}" "$MNT/wal.db"`,
      'mount --bind -o ro "$MNT" "$RO" || exit 98',
      `run force restore "${backup}" --db-path "$RO/svc.db" --force`,
      `run fresh restore "${backup}" --db-path "$RO/new.db"`,
      `run backup backup "$RO/b.db" --db-path "${store}"`,
      // a WAL store (as svc leaves one): SQLite says only 'disk I/O error' or 'unable to open database file'
      `run walforce restore "${backup}" --db-path "$RO/wal.db" --force`,
      'run forget user forget usr_alice --confirm --db-path "$RO/wal.db"',
      'run export analytics user-export usr_alice --db-path "$RO/wal.db"',
      'ls -A "$RO" >"$OUT/left"',
      `cmp "${store}" "$RO/svc.db" >"$OUT/cmp" 2>&1; echo $? >>"$OUT/cmp"`,
      `cmp "${walStore}" "$RO/wal.db" >>"$OUT/cmp" 2>&1; echo $? >>"$OUT/cmp"`,
    ].join('\n'),
  );
  const readOnly = (what: string, file: string, remedy: string) =>
    new RegExp(
      `^svc: Cannot write ${what} .*/${file}: the folder .*/ro is on a read-only file system \\(EROFS: read-only file system\\); ${remedy}\\.$`,
    );
  const restoreRemedy = 'make the folder writable, or restore to another --db-path';
  oneSentence(results.get('force'), readOnly('the restored trace store', 'svc\\.db', restoreRemedy));
  oneSentence(results.get('fresh'), readOnly('the restored trace store', 'new\\.db', restoreRemedy));
  oneSentence(
    results.get('backup'),
    readOnly('the backup', 'b\\.db', 'choose a destination in a writable folder'),
  );
  oneSentence(
    results.get('walforce'),
    /^svc: Cannot write the restored trace store .*\/wal\.db: the folder .*\/ro is on a read-only file system \(.*\); make the folder writable, or restore to another --db-path\.$/,
  );
  for (const name of ['forget', 'export']) {
    oneSentence(
      results.get(name),
      /^svc: The trace store .*\/ro\/wal\.db is read-only for this process \(.*\/ro is on a read-only file system\); make the file, its -wal and -shm files and its folder writable by the user svc runs as, or point --db-path or SVC_DB_PATH at a writable store\.$/,
    );
    assert.equal(results.get(name)?.stdout, '');
  }
  assert.equal(readFileSync(join(out, 'left'), 'utf8'), 'svc.db\nwal.db\n');
  assert.equal(readFileSync(join(out, 'cmp'), 'utf8').trim(), '0\n0');
});

/** Runs svc to its end, as uid/gid 65534 when this test runs as root (root ignores a folder's mode). */
function runUnprivileged(args: string[]): Promise<SvcResult> {
  return runSvc(args, { cwd: tmp.dir, env, unprivileged: true });
}

test('backup, restore and user-export --out into a folder this user may not write: one sentence, nothing changed', {
  timeout: 120_000,
}, async (t) => {
  const backup = await backupFile();
  const store = await seededStore();
  const locked = join(tmp.dir, 'locked');
  mkdirSync(locked);
  const existing = join(locked, 'svc.db');
  await seedStore(existing, 1, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US,
    type: 'turn.started',
    payload: {},
  }));
  const db = new DatabaseSync(existing);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE');
  db.close();
  if (asRoot) {
    const own = (p: string) => {
      chownSync(p, NOBODY, NOBODY);
      if (statSync(p).isDirectory()) for (const f of readdirSync(p)) own(join(p, f));
    };
    own(tmp.dir);
  }
  chmodSync(locked, 0o555);
  t.after(() => chmodSync(locked, 0o755));
  const before = readFileSync(existing);
  const denied = (what: string, file: string, remedy: string) =>
    new RegExp(
      `^svc: Cannot write ${what} .*/locked/${file}: the folder .*/locked cannot be written \\((EACCES|EPERM)[^)]*\\); ${remedy}\\.$`,
    );
  const restoreRemedy = 'make the folder writable, or restore to another --db-path';
  oneSentence(
    await runUnprivileged(['restore', backup, '--db-path', existing, '--force']),
    denied('the restored trace store', 'svc\\.db', restoreRemedy),
  );
  oneSentence(
    await runUnprivileged(['restore', backup, '--db-path', join(locked, 'new.db')]),
    denied('the restored trace store', 'new\\.db', restoreRemedy),
  );
  oneSentence(
    await runUnprivileged(['backup', join(locked, 'b.db'), '--db-path', store]),
    denied('the backup', 'b\\.db', 'choose a destination in a writable folder'),
  );
  oneSentence(
    await runUnprivileged([
      'analytics',
      'user-export',
      'usr_alice',
      '--out',
      join(locked, 'e.jsonl'),
      '--db-path',
      store,
    ]),
    denied('the export', 'e\\.jsonl', 'choose an --out in a writable folder'),
  );
  assert.deepEqual(readdirSync(locked), ['svc.db']);
  assert.ok(readFileSync(existing).equals(before), 'the existing store changed');
  assert.equal(existsSync(join(locked, 'b.db')), false);
});

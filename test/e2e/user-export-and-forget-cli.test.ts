/**
 * `svc analytics user-export` and `svc user forget` through the real executable: only the subject's
 * rows, usage errors exit 2 with one sentence, forget needs --confirm, is audited, idempotent, and
 * leaves the original id nowhere in the store's bytes.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { BASE_US, callPayload, seedStore, seqId } from '../helpers/event-rows.ts';
import { ensureBuilt, isolatedEnv, makeTempDir, runSvc, SVC_BIN } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-user-data-');
test.after(() => tmp.cleanup());
const env = isolatedEnv(tmp.dir);
let n = 0;
const freshPath = () => join(tmp.dir, `s${++n}`, 'svc.db');

function withDb<T>(path: string, fn: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
const auditPayloads = (path: string, type: string) =>
  withDb(path, (db) =>
    (
      db.prepare('SELECT payload FROM events WHERE type = ? ORDER BY id').all(type) as Array<{
        payload: string;
      }>
    ).map((r) => JSON.parse(r.payload) as Record<string, unknown>),
  );
const allPayloads = (path: string) =>
  withDb(path, (db) =>
    (db.prepare('SELECT id, payload FROM events ORDER BY id').all() as Array<{ payload: string }>).map(
      (r) => r.payload,
    ),
  );
const rawCount = (path: string, needle: string) =>
  [path, `${path}-wal`]
    .filter((f) => existsSync(f))
    .reduce((sum, f) => sum + readFileSync(f).toString('latin1').split(needle).length - 1, 0);
const lines = (text: string) => (text === '' ? [] : text.trimEnd().split('\n'));
const report = (stdout: string) =>
  Object.fromEntries(lines(stdout).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));

/** u1 and u10 interleaved (prefix neighbours), other types, and rows with no user. */
async function seedNeighbours(path: string): Promise<void> {
  const users = ['u1', 'u10', null, 'u1', 'U1'];
  const types = ['llm.call_completed', 'llm.call_failed', 'gateway.key_issued', 'route.decided'];
  await seedStore(path, 40, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i * 1_000_000,
    type: types[i % types.length],
    turn_id: `turn_${i}`,
    payload: callPayload(users[i % users.length], { seq: i, cost_usd: '0.000001230' }),
  }));
}

test('user-export streams exactly the subject rows to stdout as JSON lines and audits the realised size', async () => {
  const db = freshPath();
  await seedNeighbours(db);
  const r = await runSvc(['analytics', 'user-export', 'u1', '--db-path', db], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const rows = lines(r.stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(rows.length, 16);
  for (const row of rows) {
    assert.deepEqual(Object.keys(row), [
      'id',
      'timestamp',
      'session_id',
      'turn_id',
      'parent_event_id',
      'type',
      'actor',
      'sensitivity',
      'payload',
    ]);
    assert.equal((row.payload as Record<string, unknown>).user_id, 'u1');
    assert.equal((row.payload as Record<string, unknown>).cost_usd, '0.000001230');
  }
  const ids = rows.map((x) => x.id as string);
  assert.deepEqual(ids, [...ids].sort());
  assert.equal(new Set(rows.map((x) => x.type)).size, 4);
  assert.deepEqual(auditPayloads(db, 'analytics.user_exported'), [
    {
      user_id: 'u1',
      row_count: 16,
      byte_count: Buffer.byteLength(r.stdout),
      window: { start: null, end: null },
    },
  ]);
  const u10 = await runSvc(['analytics', 'user-export', 'u10', '--db-path', db], { env });
  assert.equal(lines(u10.stdout).length, 8);
  for (const l of lines(u10.stdout)) assert.equal(JSON.parse(l).payload.user_id, 'u10');
  // --out - is standard output, as with most tools (never a file named "-" in the current folder)
  const dash = await runSvc(['analytics', 'user-export', 'u1', '--out', '-', '--db-path', db], {
    env,
    cwd: tmp.dir,
  });
  assert.equal(dash.code, 0, dash.stderr);
  const [audit, ...rest] = lines(dash.stdout).filter((l) => JSON.parse(l).type === 'analytics.user_exported');
  assert.deepEqual(rest, [], 'one audit row: the first export');
  assert.ok(audit);
  assert.deepEqual(
    lines(dash.stdout).filter((l) => l !== audit),
    lines(r.stdout),
  );
  assert.equal(existsSync(join(tmp.dir, '-')), false);
});

test('user-export --out writes a private file for the window and prints a summary; SVC_DB_PATH is honoured', async () => {
  const db = freshPath();
  await seedNeighbours(db);
  const out = join(tmp.dir, `export-${n}.jsonl`);
  const r = await runSvc(
    [
      'analytics',
      'user-export',
      'u1',
      '--from',
      '2026-01-01T00:00:03Z',
      '--to',
      '2026-01-01T00:00:18Z',
      '--out',
      out,
    ],
    { env: { ...env, SVC_DB_PATH: db } },
  );
  assert.equal(r.code, 0, r.stderr);
  const text = readFileSync(out, 'utf8');
  const got = lines(text).map((l) => JSON.parse(l).id);
  assert.deepEqual(got, [seqId(3), seqId(5), seqId(8), seqId(10), seqId(13), seqId(15)]);
  assert.equal(statSync(out).mode & 0o777, 0o600);
  assert.deepEqual(report(r.stdout), {
    user_id: 'u1',
    out,
    rows: '6',
    bytes: String(Buffer.byteLength(text)),
    window_start: '2026-01-01T00:00:03.000000Z',
    window_end: '2026-01-01T00:00:18.000000Z',
  });
  assert.deepEqual(
    readdirSync(tmp.dir).filter((f) => f.startsWith('.')),
    [],
    'no temp file left beside the output',
  );
  // a second export replaces the file
  const again = await runSvc(['analytics', 'user-export', 'u10', '--out', out, '--db-path', db], { env });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(lines(readFileSync(out, 'utf8')).length, 8);
  // an --out that is a link to the file writes that file, as a shell's > would: the link stays a link
  const link = join(tmp.dir, `latest-${n}.jsonl`);
  symlinkSync(out, link);
  const viaLink = await runSvc(['analytics', 'user-export', 'u1', '--out', link, '--db-path', db], { env });
  assert.equal(viaLink.code, 0, viaLink.stderr);
  assert.equal(lstatSync(link).isSymbolicLink(), true, 'the link is still a link');
  const u1 = lines(readFileSync(out, 'utf8')).map((l) => JSON.parse(l).payload.user_id);
  assert.ok(u1.length > 8 && u1.every((u) => u === 'u1'), `${u1}`);
  assert.equal(report(viaLink.stdout).out, out);
  // a link to a file not there yet: that file is created (in its missing folders), the link stays a link
  const pending = join(tmp.dir, `rotated-${n}`, 'u1.jsonl');
  const dangling = join(tmp.dir, `next-${n}.jsonl`);
  symlinkSync(pending, dangling);
  const viaDangling = await runSvc(['analytics', 'user-export', 'u1', '--out', dangling, '--db-path', db], {
    env,
  });
  assert.equal(viaDangling.code, 0, viaDangling.stderr);
  assert.equal(lstatSync(dangling).isSymbolicLink(), true, 'the link is still a link');
  assert.equal(report(viaDangling.stdout).out, pending);
  assert.equal(String(lines(readFileSync(pending, 'utf8')).length), report(viaDangling.stdout).rows);
});

test('user-export --out naming the trace store, its WAL or a link to it is refused and the store stays whole', async () => {
  const db = freshPath();
  await seedNeighbours(db);
  const before = allPayloads(db);
  const link = join(tmp.dir, `link-${n}.db`);
  symlinkSync(db, link);
  const cases: Array<[string[], RegExp]> = [
    [
      ['--out', db],
      /^svc: --out .*svc\.db is the trace store itself; the export would replace it, so choose another file\.$/,
    ],
    [['--out', link], /is the trace store itself/],
    [['--out', `${db}-wal`], /is the trace store's file .*svc\.db-wal/],
  ];
  for (const [extra, pattern] of cases) {
    const r = await runSvc(['analytics', 'user-export', 'u1', ...extra], {
      env: { ...env, SVC_DB_PATH: db },
    });
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr.trimEnd(), pattern);
  }
  assert.deepEqual(allPayloads(db), before, 'the store is intact and no export was audited');
});

test('user-export --out naming a folder is refused before anything is read, and no export is audited', async () => {
  const db = freshPath();
  await seedNeighbours(db);
  const folder = join(tmp.dir, `out-folder-${n}`);
  mkdirSync(folder);
  const r = await runSvc(['analytics', 'user-export', 'u1', '--out', folder], {
    env: { ...env, SVC_DB_PATH: db },
  });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(
    r.stderr.trimEnd(),
    `svc: --out ${folder} is a folder; name a file in it, such as ${join(folder, 'u1.jsonl')}.`,
  );
  assert.deepEqual(auditPayloads(db, 'analytics.user_exported'), []);
  assert.deepEqual(
    readdirSync(tmp.dir).filter((f) => f.includes('.export-')),
    [],
    'no temp file left',
  );
});

test('user-export --out naming a FIFO or a device is refused before anything is read: it is never replaced by a file', async () => {
  const db = freshPath();
  await seedNeighbours(db);
  // a named pipe stands for every file that is not a regular one (/dev/null, /dev/stdout, >(gzip)):
  // the temp file's rename would put a regular file in its place (as root even in /dev)
  const fifo = join(tmp.dir, `out-fifo-${n}`);
  execFileSync('mkfifo', [fifo]);
  const r = await runSvc(['analytics', 'user-export', 'u1', '--out', fifo], {
    env: { ...env, SVC_DB_PATH: db },
  });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(
    r.stderr.trimEnd(),
    `svc: --out ${fifo} is not a regular file but a named pipe, which the export would replace with a file; name a regular file, or leave --out out and redirect standard output.`,
  );
  assert.ok(lstatSync(fifo).isFIFO(), 'the named pipe is still there');
  // /dev/stdout when standard output is a pipe (a socket pair here): its /proc link reads 'socket:[…]'
  const piped = await runSvc(['analytics', 'user-export', 'u1', '--out', '/dev/stdout'], {
    env: { ...env, SVC_DB_PATH: db },
  });
  assert.equal(piped.code, 2, piped.stderr);
  assert.equal(piped.stdout, '');
  assert.match(piped.stderr, /^svc: --out \/dev\/stdout is not a regular file but a (named pipe|socket),/);
  assert.deepEqual(auditPayloads(db, 'analytics.user_exported'), []);
});

test('user-export --out into missing folders makes them (as backup does); under a file it names that path, never the temp file', async () => {
  const db = freshPath();
  await seedNeighbours(db);
  const out = join(tmp.dir, `made-${n}`, 'nov', 'u1.jsonl');
  const made = await runSvc(['analytics', 'user-export', 'u1', '--out', out], {
    env: { ...env, SVC_DB_PATH: db },
  });
  assert.equal(made.code, 0, made.stderr);
  assert.equal(report(made.stdout).rows, String(readFileSync(out, 'utf8').trimEnd().split('\n').length));

  const file = join(tmp.dir, `plain-${n}`);
  closeSync(openSync(file, 'w'));
  const under = join(file, 'u1.jsonl');
  const r = await runSvc(['analytics', 'user-export', 'u1', '--out', under], {
    env: { ...env, SVC_DB_PATH: db },
  });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`^svc: Cannot create the folder ${file} for the export \\(ENOTDIR\\); `));
  assert.doesNotMatch(r.stderr, /\.export-/, 'the hidden temp file is not the user’s business');
  assert.equal(auditPayloads(db, 'analytics.user_exported').length, 1, 'only the export that was written');
});

test('a reader that goes away before the last row gives exit 1, one sentence, and no audit event', async () => {
  const db = freshPath();
  await seedStore(db, 5000, (i) => ({ id: seqId(i), timestamp_us: BASE_US + i, payload: callPayload('u1') }));
  ensureBuilt();
  const child = spawn(process.execPath, [SVC_BIN, 'analytics', 'user-export', 'u1', '--db-path', db], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  child.stdout.once('data', () => child.stdout.destroy()); // like `| head -1`
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 1, stderr);
  assert.equal(stderr.trim().split('\n').length, 1);
  assert.match(
    stderr,
    /^svc: Standard output closed before the export finished \(write EPIPE\); no audit event was recorded/,
  );
  assert.deepEqual(auditPayloads(db, 'analytics.user_exported'), []);
});

test('standard output on a full disk is a failed write, not a closed reader: exit 1, one sentence, no audit', {
  skip: !existsSync('/dev/full') && 'no /dev/full',
}, async () => {
  const db = freshPath();
  await seedStore(db, 50, (i) => ({ id: seqId(i), timestamp_us: BASE_US + i, payload: callPayload('u1') }));
  ensureBuilt();
  const full = openSync('/dev/full', 'w');
  let stderr = '';
  let code: unknown;
  try {
    const child = spawn(process.execPath, [SVC_BIN, 'analytics', 'user-export', 'u1', '--db-path', db], {
      env,
      stdio: ['ignore', full, 'pipe'],
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    code = await new Promise((resolve) => child.on('close', resolve));
  } finally {
    closeSync(full);
  }
  assert.equal(code, 1, stderr);
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  assert.match(
    stderr,
    /^svc: Cannot write the export to standard output \(ENOSPC: no space left on device, write\); no audit event was recorded/,
  );
  assert.deepEqual(auditPayloads(db, 'analytics.user_exported'), []);
});

test('bad ids, bad windows and missing arguments exit 2 with one sentence, touching nothing', async () => {
  const db = freshPath();
  await seedNeighbours(db);
  const before = allPayloads(db);
  const cases: Array<[string[], RegExp]> = [
    [['analytics', 'user-export', "u1' OR '1'='1"], /user id "u1' OR '1'='1" is not valid/],
    [['analytics', 'user-export', 'u1%'], /is not valid: use 1 to 200 letters/],
    [['analytics', 'user-export', '$.user_id'], /is not valid/],
    [['analytics', 'user-export', 'a'.repeat(201)], /is not valid/],
    [
      ['analytics', 'user-export', 'u1', '--from', 'yesterday'],
      /--from "yesterday" is not an ISO 8601 timestamp/,
    ],
    [
      ['analytics', 'user-export', 'u1', '--to', '2026-01-32'],
      /--to "2026-01-32" is not an ISO 8601 timestamp/,
    ],
    [
      ['analytics', 'user-export', 'u1', '--from', '2026-02-01T00:00:00Z', '--to', '2026-01-01T00:00:00Z'],
      /window start --from 2026-02-01T00:00:00\.000000Z is after its end --to/,
    ],
    [['analytics', 'user-export'], /Missing required positional argument/],
    [['analytics', 'user-export', 'u1', '--frob'], /Unknown option "--frob"/],
    [['user', 'forget', 'u1%', '--confirm'], /is not valid/],
    [['user', 'forget', "x';DROP TABLE events;--", '--confirm'], /is not valid/],
    [['user', 'forget', '--confirm'], /Missing required positional argument/],
    // citty reads any value but "false" as true: a "no" must never confirm an irreversible rewrite
    [['user', 'forget', 'u1', '--confirm=no'], /Option --confirm of svc user forget is a switch/],
    [['user', 'forget', 'u1', '--confirm=0'], /Option --confirm of svc user forget is a switch/],
    [['user', 'forget', 'u1', '--confirm=FALSE'], /Option --confirm of svc user forget is a switch/],
    // citty keeps the last of a repeated flag: refused, as GET …/export?from=a&from=b is
    [
      ['analytics', 'user-export', 'u1', '--from', '2026-01-01', '--from=2020-01-01'],
      /--from is given 2 times; give it once/,
    ],
  ];
  for (const [args, pattern] of cases) {
    const r = await runSvc([...args, '--db-path', db], { env });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, pattern);
  }
  assert.deepEqual(allPayloads(db), before);
});

test('an id that starts with "-" goes after --, and words after it are refused, never silently dropped', async () => {
  // "-_-x" matches the id shape; as a first word it reads as an option, so the sentence says to use --
  const db = freshPath();
  const id = '-_-x';
  await seedStore(db, 6, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i * 1_000_000,
    type: 'llm.call_completed',
    turn_id: `turn_${i}`,
    payload: callPayload(i % 2 === 0 ? id : 'u1', { seq: i, cost_usd: '0.000001' }),
  }));
  const before = allPayloads(db);
  const out = join(tmp.dir, 'dash-id.jsonl');
  const refused: Array<[string[], RegExp]> = [
    [
      ['analytics', 'user-export', id, '--db-path', db],
      /^svc: Unknown option "-_-x" for svc analytics user-export; .* put a value that starts with "-" after "--" \(`svc analytics user-export -- -_-x`\)\.$/,
    ],
    [
      ['user', 'forget', id, '--confirm', '--db-path', db],
      /^svc: Unknown option "-_-x" for svc user forget; .*`svc user forget -- -_-x`\)\.$/,
    ],
    // after --, "--confirm" and "--out" are words, not flags: running without them would report on
    // (or stream) something the operator did not ask for
    [
      ['user', 'forget', '--db-path', db, '--', id, '--confirm'],
      /^svc: Unexpected argument "--confirm" for svc user forget; /,
    ],
    [
      ['analytics', 'user-export', '--db-path', db, '--', id, '--out', out],
      /^svc: Unexpected argument "--out" for svc analytics user-export; /,
    ],
  ];
  for (const [args, pattern] of refused) {
    const r = await runSvc(args, { env });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr.trimEnd(), pattern);
  }
  assert.equal(existsSync(out), false);
  assert.deepEqual(allPayloads(db), before);

  const exported = await runSvc(['analytics', 'user-export', '--db-path', db, '--', id], { env });
  assert.equal(exported.code, 0, exported.stderr);
  assert.equal(lines(exported.stdout).length, 3);
  const forgot = await runSvc(['user', 'forget', '--confirm', '--db-path', db, '--', id], { env });
  assert.equal(forgot.code, 0, forgot.stderr);
  assert.equal(report(forgot.stdout).user_id, id);
  assert.equal(report(forgot.stdout).pseudonymized_rows, '4', 'three calls and the audit row of the export');
});

test('a missing store is a failure (exit 1) for both commands, and no store is created', async () => {
  const db = join(tmp.dir, 'absent', 'svc.db');
  for (const args of [
    ['analytics', 'user-export', 'u1'],
    ['user', 'forget', 'u1', '--confirm'],
  ]) {
    const r = await runSvc([...args, '--db-path', db], { env });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^svc: No trace store at .*absent\/svc\.db; pass --db-path or set SVC_DB_PATH/);
  }
  assert.equal(existsSync(db), false);
});

test("an empty file or another application's database is no store: every command that needs one refuses it (exit 1) and leaves it as it was", async () => {
  const dir = join(tmp.dir, 'not-stores');
  mkdirSync(dir);
  const empty = join(dir, 'touched.db');
  writeFileSync(empty, '');
  const foreign = join(dir, 'other-app.db');
  const other = new DatabaseSync(foreign);
  other.exec('CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES (1); PRAGMA user_version = 3');
  other.close();
  const backup = freshPath();
  await seedNeighbours(backup);
  const files = [empty, foreign];
  const before = files.map((f) => readFileSync(f));
  const emptyRefusal =
    /^svc: .*touched\.db is empty, not an svc trace store; point --db-path or SVC_DB_PATH at the store svc gateway or svc serve writes/;
  const foreignRefusal =
    /^svc: .*other-app\.db is a SQLite database without svc's tables \(another application's\?\), so it cannot be the trace store and was left as it is; /;
  const cases: Array<[string[], RegExp]> = [
    ...[empty, foreign].flatMap((db): Array<[string[], RegExp]> => {
      const refusal = db === empty ? emptyRefusal : foreignRefusal;
      const backupTo = join(dir, `backup-of-${n++}.db`);
      return [
        [['analytics', 'user-export', 'u1', '--db-path', db], refusal],
        [['backup', backupTo, '--db-path', db], refusal],
        ...(db === empty
          ? ([
              [['user', 'forget', 'u1', '--confirm', '--db-path', db], refusal],
              [['analytics', 'cost', '--db-path', db], refusal],
            ] as Array<[string[], RegExp]>)
          : []),
      ];
    }),
    [
      ['restore', foreign, '--db-path', join(dir, 'restored.db')],
      /^svc: The backup .*other-app\.db holds no svc trace store \(no svc tables\); pass a file written by svc backup\.$/,
    ],
    [
      ['restore', backup, '--force', '--db-path', foreign],
      /^svc: .*other-app\.db is a SQLite database without svc's tables \(another application's\?\), not a trace store to replace; /,
    ],
  ];
  // restore takes an empty file for what it is, no store to keep (before: 'A trace store appeared', even with --force)
  const emptyTarget = join(tmp.dir, 'touched-target.db');
  writeFileSync(emptyTarget, '');
  const [restored, ...results] = await Promise.all([
    runSvc(['restore', backup, '--db-path', emptyTarget], { env }),
    ...cases.map(([args]) => runSvc(args, { env })),
  ]);
  assert.equal(restored.code, 0, restored.stderr);
  assert.equal(report(restored.stdout).replaced_existing, 'no');
  assert.deepEqual(allPayloads(emptyTarget), allPayloads(backup));
  results.forEach((r, i) => {
    const what = cases[i][0].join(' ');
    assert.equal(r.code, 1, `${what}: ${r.stderr}`);
    assert.equal(r.stdout, '', what);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr.trimEnd(), cases[i][1], what);
  });
  for (const [i, f] of files.entries()) assert.deepEqual(readFileSync(f), before[i], `${f} is unchanged`);
  assert.deepEqual(readdirSync(dir).sort(), ['other-app.db', 'touched.db'], 'no backup, no -wal or -shm');
});

test('forget without --confirm warns what it would rewrite and exits 2 without changing anything', async () => {
  const db = freshPath();
  await seedNeighbours(db);
  const before = allPayloads(db);
  const r = await runSvc(['user', 'forget', 'u1', '--db-path', db], { env });
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.match(
    r.stderr.trimEnd(),
    /^svc: Nothing was changed: svc user forget would rewrite the user id u1 to the pseudonym redacted_[0-9a-f]{12} in 16 events of the trace store .*svc\.db \(payload user_id, and identity_id of per-user quota events\), delete no row and compact the store file; pass --confirm to do it\.$/,
  );
  assert.deepEqual(allPayloads(db), before);
  assert.deepEqual(auditPayloads(db, 'analytics.user_forgotten'), []);
});

test('forget --confirm pseudonymises in place, keeps u10, audits every call, repeats with 0 rows', async () => {
  const db = freshPath();
  await seedNeighbours(db);
  const rowsBefore = allPayloads(db).length;
  const preview = await runSvc(['user', 'forget', 'u1', '--db-path', db], { env });
  const previewed = /pseudonym (redacted_[0-9a-f]{12})/.exec(preview.stderr)?.[1];

  const r = await runSvc(['user', 'forget', 'u1', '--confirm', '--db-path', db], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const first = report(r.stdout);
  assert.deepEqual(Object.keys(first), ['user_id', 'pseudonym', 'pseudonymized_rows', 'completed_at']);
  assert.equal(first.user_id, 'u1');
  assert.equal(first.pseudonym, previewed);
  assert.equal(first.pseudonymized_rows, '16');
  assert.match(first.completed_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);

  const second = report(
    (await runSvc(['user', 'forget', 'u1', '--confirm', '--db-path', db], { env })).stdout,
  );
  assert.equal(second.pseudonymized_rows, '0');
  assert.equal(second.pseudonym, first.pseudonym);
  assert.deepEqual(
    auditPayloads(db, 'analytics.user_forgotten').map((p) => [p.user_id, p.pseudonym, p.pseudonymized_rows]),
    [
      [first.pseudonym, first.pseudonym, 16],
      [first.pseudonym, first.pseudonym, 0],
    ],
  );
  assert.equal(allPayloads(db).length, rowsBefore + 2, 'no row deleted; two audit rows added');

  const gone = await runSvc(['analytics', 'user-export', 'u1', '--db-path', db], { env });
  assert.equal(lines(gone.stdout).length, 0);
  // the export of a forgotten id is audited under its pseudonym: the raw id never returns to the store
  assert.deepEqual(
    auditPayloads(db, 'analytics.user_exported').map((p) => [p.user_id, p.row_count]),
    [[first.pseudonym, 0]],
  );
  assert.equal(allPayloads(db).filter((p) => p.includes('"u1"')).length, 0);
  const neighbour = await runSvc(['analytics', 'user-export', 'u10', '--db-path', db], { env });
  assert.equal(lines(neighbour.stdout).length, 8);
  const pseudo = await runSvc(['analytics', 'user-export', first.pseudonym, '--db-path', db], { env });
  const pseudoRows = lines(pseudo.stdout).map((l) => JSON.parse(l));
  assert.equal(pseudoRows.filter((x) => !x.type.startsWith('analytics.user_')).length, 16);
});

test('after forget the original id is in no byte of the store file or its WAL, and backups carry the salt', async () => {
  const db = freshPath();
  const victim = 'usr_Vq7t9_victim';
  await seedStore(db, 3000, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i,
    type: i % 3 ? 'llm.call_completed' : 'quota.alert',
    payload: {
      ...callPayload(i % 5 === 0 ? victim : `usr_other_${i % 11}`),
      ...(i % 3 ? {} : { identity_kind: 'user', identity_id: i % 5 === 0 ? victim : 'usr_other_1' }),
      pad: 'p'.repeat((i * 31) % 1500),
    },
  }));
  // the user's own export audit row holds the id too
  assert.equal((await runSvc(['analytics', 'user-export', victim, '--db-path', db], { env })).code, 0);
  assert.ok(rawCount(db, victim) > 600);

  const r = await runSvc(['user', 'forget', victim, '--confirm', '--db-path', db], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(report(r.stdout).pseudonymized_rows, '601');
  assert.equal(rawCount(db, victim), 0, 'the id survives nowhere: payloads, indexes, free pages, WAL');
  assert.ok(rawCount(db, 'usr_other_3') > 0, 'other users are still there');
  withDb(db, (d) => {
    assert.equal(
      (d.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check,
      'ok',
    );
    assert.equal((d.prepare('SELECT count(*) AS c FROM events').get() as { c: number }).c, 3000 + 2);
  });

  const backup = join(tmp.dir, `backup-${n}.db`);
  assert.equal((await runSvc(['backup', backup, '--db-path', db], { env })).code, 0);
  const salt = (path: string) =>
    withDb(
      path,
      (d) =>
        (d.prepare("SELECT value FROM store_meta WHERE key = 'forget_salt'").get() as { value: string })
          .value,
    );
  assert.match(salt(db), /^[0-9a-f]{64}$/);
  assert.equal(salt(backup), salt(db));
});

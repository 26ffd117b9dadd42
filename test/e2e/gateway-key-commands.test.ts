import assert from 'node:assert/strict';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { editKeyRecord, gatewayFiles, issueKey, parseLines, readEvents } from '../helpers/gateway-keys.ts';
import { makeTempDir, NOBODY, RUNS_AS_ROOT, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());
let n = 0;
const fresh = (extra: Record<string, string | undefined> = {}) => {
  const home = join(tmp.dir, `h${n++}`);
  mkdirSync(home);
  return gatewayFiles(home, extra);
};

test('issue-key prints key_id and token once, stores only the hash (0600), and records gateway.key_issued', async () => {
  const f = fresh();
  const r = await runSvc(
    [
      'gateway',
      'issue-key',
      '--name',
      'billing',
      '--workspace',
      '/srv/ws',
      '--allow-model',
      'anthropic:claude-sonnet-4-5',
      '--allow-model',
      'openai:gpt-5-mini',
      '--daily-cap-usd',
      '5',
      '--monthly-cap-usd',
      '100.50',
      '--user',
      'usr_alice',
      '--team',
      'team_core',
    ],
    { env: f.env },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(Object.keys(parseLines(r.stdout)), ['key_id', 'token']);
  const { key_id, token } = parseLines(r.stdout);
  assert.match(key_id, /^gk_[0-9A-Z]{26}$/);
  assert.match(token, /^gw_[0-9A-Z]{26}$/);
  assert.equal(statSync(f.keystore).mode & 0o777, 0o600);
  const text = readFileSync(f.keystore, 'utf8');
  assert.ok(!text.includes(token));
  const [record] = JSON.parse(text).keys;
  assert.deepEqual(record.allowed_models, ['anthropic:claude-sonnet-4-5', 'openai:gpt-5-mini']);
  assert.equal(record.monthly_cap_usd, '100.50');
  const issued = readEvents(f.db, 'gateway.key_issued');
  assert.equal(issued.length, 1);
  assert.equal(issued[0].payload.key_id, key_id);
  assert.equal(issued[0].payload.user_id, 'usr_alice');
  assert.ok(!JSON.stringify(readEvents(f.db)).includes(token));
});

test('list-keys prints the table and, with --format json, status and effective_status without secret_hash', async () => {
  const f = fresh();
  const a = await issueKey(f.env, ['--user', 'usr_a']);
  const table = await runSvc(['gateway', 'list-keys'], { env: f.env });
  assert.equal(table.code, 0, table.stderr);
  const [header, row] = table.stdout.trim().split('\n');
  assert.deepEqual(header.split(/\s+/), [
    'KEY_ID',
    'NAME',
    'STATUS',
    'EFFECTIVE_STATUS',
    'USER',
    'TEAM',
    'WORKSPACE',
    'CREATED_AT',
    'GRACE_PERIOD_UNTIL',
    'REVOKED_AT',
  ]);
  assert.match(row, new RegExp(`^${a.keyId}\\s+test\\s+active\\s+active\\s+usr_a\\s+-\\s`));
  const json = await runSvc(['gateway', 'list-keys', '--format', 'json'], { env: f.env });
  const { keys } = JSON.parse(json.stdout);
  assert.equal(keys.length, 1);
  assert.equal(keys[0].status, 'active');
  assert.equal(keys[0].effective_status, 'active');
  assert.ok(!('secret_hash' in keys[0]));
  // every field of the key record (spec 1 §Gateway key record) is there, null when unset, so a script
  // can read k["team_id"] or k["revoked_at"] of any key without checking that the field exists
  assert.deepEqual(Object.keys(keys[0]), [
    'key_id',
    'name',
    'workspace_path',
    'allowed_models',
    'daily_cap_usd',
    'monthly_cap_usd',
    'user_id',
    'team_id',
    'status',
    'effective_status',
    'revoked_at',
    'grace_period_until',
    'created_at',
    'budget_key_id', // svc's own field: the budget a rotation's successor shares (README §Key commands)
  ]);
  assert.equal(keys[0].user_id, 'usr_a');
  for (const field of [
    'allowed_models',
    'daily_cap_usd',
    'monthly_cap_usd',
    'team_id',
    'revoked_at',
    'grace_period_until',
  ])
    assert.equal(keys[0][field], null, field);
});

test('list-keys, revoke-key and rotate-key on a keystore path with no file exit 1 with one sentence naming the path and the fix', async () => {
  const f = fresh();
  // revoke-key and rotate-key said "No gateway key with id … exists; run `svc gateway list-keys`", which then
  // failed on the same path: the missing keystore is what the operator has to fix
  const commands = [
    ['list-keys'],
    ['list-keys', '--format', 'json'],
    ['revoke-key', 'gk_01M829G9KYF6DAJFE8TTGME1Z3'],
    ['rotate-key', 'gk_01M829G9KYF6DAJFE8TTGME1Z3', '--grace-period', '30m'],
  ];
  for (const command of commands) {
    const r = await runSvc(['gateway', ...command], { env: f.env });
    assert.equal(r.code, 1, r.stdout);
    assert.equal(r.stdout, '', 'no empty table that reads as "no keys here"');
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.ok(lines[0].includes(f.keystore), lines[0]);
    assert.match(lines[0], /svc gateway issue-key/);
    assert.equal(existsSync(f.keystore), false, `${command[0]} creates no keystore`);
  }
  // an existing keystore with no keys is an empty listing, exit 0
  writeFileSync(f.keystore, '{"keys":[]}\n', { mode: 0o600 });
  const empty = await runSvc(['gateway', 'list-keys', '--format', 'json'], { env: f.env });
  assert.equal(empty.code, 0, empty.stderr);
  assert.deepEqual(JSON.parse(empty.stdout), { keys: [] });
});

test('an empty --keystore (an unset shell variable) is a usage error for the gateway and every key command, never a path', async () => {
  const f = fresh();
  for (const args of [
    ['gateway', '--keystore', ''],
    ['gateway', 'list-keys', '--keystore', ' '],
    ['gateway', 'issue-key', '--name', 'a', '--workspace', tmp.dir, '--keystore', ''],
    ['gateway', 'revoke-key', 'gk_01M829G9KYF6DAJFE8TTGME1Z3', '--keystore', ''],
  ]) {
    const r = await runSvc(args, { env: f.env });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(
      r.stderr,
      'svc: --keystore needs a file path; leave it out to use SVC_GATEWAY_KEYSTORE or ~/.config/svc/keys.json.\n',
    );
  }
  assert.equal(existsSync(f.db), false, 'nothing was opened');
});

test('list-keys and revoke-key write nothing when they change nothing: no folder for a mistyped path, no lock in a read-only keystore folder', async (t) => {
  const f = fresh();
  const typo = join(tmp.dir, 'typo-folder');
  for (const args of [['list-keys'], ['revoke-key', 'gk_01M829G9KYF6DAJFE8TTGME1Z3']]) {
    const r = await runSvc(['gateway', ...args, '--keystore', join(typo, 'deeper/keys.json')], {
      env: f.env,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(existsSync(typo), false, `${args[0]} created ${typo}`);
  }

  // the chart mounts the keystore folder read-only (a Secret): listing it must still work. Root writes past
  // any mode, so as root the listing runs as uid 65534 in a folder of its own.
  const own = makeTempDir('svc-ro-keystore-');
  t.after(() => own.cleanup());
  const etc = join(own.dir, 'etc');
  mkdirSync(etc);
  const g = gatewayFiles(own.dir, { SVC_GATEWAY_KEYSTORE: join(etc, 'keys.json') });
  const { keyId } = await issueKey(g.env);
  // a rotation whose grace period lapsed while the Secret was deployed: the sweep has nothing to write to
  const rotated = await runSvc(['gateway', 'rotate-key', keyId, '--grace-period', '30m'], { env: g.env });
  const successor = parseLines(rotated.stdout).new_key_id;
  editKeyRecord(join(etc, 'keys.json'), keyId, {
    grace_period_until: new Date(Date.now() - 1000).toISOString(),
  });
  const before = readFileSync(join(etc, 'keys.json'), 'utf8');
  // the lock file the commands above left is the listing user's own (they ran as it before the folder
  // was made read-only): the lock is taken, and the write is what the folder refuses
  if (RUNS_AS_ROOT) {
    for (const path of [own.dir, etc, join(etc, 'keys.json'), join(etc, 'keys.json.lock'), g.db])
      chownSync(path, NOBODY, NOBODY);
  }
  chmodSync(etc, 0o555);
  const listed = await runSvc(['gateway', 'list-keys', '--format', 'json'], {
    env: g.env,
    unprivileged: true,
  });
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(
    JSON.parse(listed.stdout).keys.map((k: { key_id: string; effective_status: string }) => [
      k.key_id,
      k.effective_status,
    ]),
    [
      [keyId, 'revoked'],
      [successor, 'active'],
    ],
  );
  assert.match(listed.stderr, /^svc: warning: .*cannot be written.*\n$/);
  assert.equal(readFileSync(join(etc, 'keys.json'), 'utf8'), before);
  const again = await runSvc(['gateway', 'revoke-key', 'gk_01M829G9KYF6DAJFE8TTGME1Z3'], {
    env: g.env,
    unprivileged: true,
  });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /No gateway key with id gk_01M829G9KYF6DAJFE8TTGME1Z3 exists/);
  const refused = await runSvc(['gateway', 'issue-key', '--name', 'x', '--workspace', '/tmp'], {
    env: g.env,
    unprivileged: true,
  });
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /^svc: Cannot write the keystore .*keys\.json \(EACCES\); it is unchanged\. [^\n]*\n$/,
  );
  assert.equal(readFileSync(join(etc, 'keys.json'), 'utf8'), before);
  // no lock file there (a Secret mount holds only keys.json): the same sentence, naming the lock it needs
  // (before: 'Cannot create the keystore lock …: EACCES: permission denied, open …; check the folder's
  // permissions.', though the folder, not a permission on the lock, refuses it)
  chmodSync(etc, 0o755);
  rmSync(join(etc, 'keys.json.lock'));
  chmodSync(etc, 0o555);
  const noLock = await runSvc(['gateway', 'issue-key', '--name', 'x', '--workspace', '/tmp'], {
    env: g.env,
    unprivileged: true,
  });
  assert.equal(noLock.code, 1, noLock.stderr);
  assert.match(
    noLock.stderr,
    /^svc: Cannot write the keystore .*keys\.json \(EACCES: its lock file .*keys\.json\.lock cannot be created there\); it is unchanged\. Make its folder writable [^\n]*\n$/,
  );
  assert.equal(readFileSync(join(etc, 'keys.json'), 'utf8'), before);
  chmodSync(etc, 0o755);
});

test('revoke-key prints revoked and revoked_at; an unknown key id exits 1 naming it', async () => {
  const f = fresh();
  const a = await issueKey(f.env);
  const r = await runSvc(['gateway', 'revoke-key', a.keyId], { env: f.env });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  assert.equal(lines.revoked, a.keyId);
  assert.match(lines.revoked_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  const events = readEvents(f.db, 'gateway.key_revoked');
  assert.deepEqual(
    events.map((e) => [e.payload.key_id, e.payload.reason]),
    [[a.keyId, 'operator']],
  );
  const unknown = await runSvc(['gateway', 'revoke-key', 'gk_01NOSUCHKEY0000000000000000'], { env: f.env });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /gk_01NOSUCHKEY0000000000000000/);
  assert.equal(unknown.stderr.trim().split('\n').length, 1);
});

test('a keystore path that is a symlink is changed where it leads: the link stays, the file it names gets every change', async () => {
  const f = fresh();
  const real = join(dirname(f.keystore), 'real', 'keys.json');
  const a = await issueKey(f.env, ['--keystore', real]);
  symlinkSync(join('real', 'keys.json'), f.keystore);
  const b = await issueKey(f.env); // through the link (SVC_GATEWAY_KEYSTORE)
  const revoked = await runSvc(['gateway', 'revoke-key', a.keyId], { env: f.env });
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.ok(lstatSync(f.keystore).isSymbolicLink(), 'the link is still a link');
  const keys = JSON.parse(readFileSync(real, 'utf8')).keys;
  assert.deepEqual(
    keys.map((k: { key_id: string; status: string }) => [k.key_id, k.status]),
    [
      [a.keyId, 'revoked'],
      [b.keyId, 'active'],
    ],
  );
  assert.equal(statSync(real).mode & 0o777, 0o600);
  assert.deepEqual(
    readdirSync(dirname(f.keystore)).filter((n) => /\.(lock|tmp)$/.test(n)),
    [],
  );
});

test('rotate-key prints the four lines, copies the scope, and refuses bad grace periods with exit 2', async () => {
  const f = fresh();
  const a = await issueKey(f.env, ['--user', 'usr_a', '--team', 'team_a', '--daily-cap-usd', '3']);
  const bad = await runSvc(['gateway', 'rotate-key', a.keyId, '--grace-period', '10s'], { env: f.env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /30m, 24h, 7d or 2w/);
  const r = await runSvc(['gateway', 'rotate-key', a.keyId, '--grace-period', '7d'], { env: f.env });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  assert.deepEqual(Object.keys(lines), ['old_key_id', 'new_key_id', 'new_token', 'grace_period_until']);
  assert.equal(lines.old_key_id, a.keyId);
  const until = Date.parse(lines.grace_period_until);
  assert.ok(Math.abs(until - Date.now() - 7 * 86_400_000) < 60_000);
  const keys = JSON.parse(readFileSync(f.keystore, 'utf8')).keys;
  const successor = keys.find((k: { key_id: string }) => k.key_id === lines.new_key_id);
  assert.equal(successor.user_id, 'usr_a');
  assert.equal(successor.team_id, 'team_a');
  assert.equal(successor.daily_cap_usd, '3');
  assert.equal(successor.workspace_path, '/tmp');
  assert.ok(!readFileSync(f.keystore, 'utf8').includes(lines.new_token));
  const rotated = readEvents(f.db, 'gateway.key_rotated');
  assert.equal(rotated.length, 1);
  assert.equal(rotated[0].payload.new_key_id, lines.new_key_id);
  const unknown = await runSvc(['gateway', 'rotate-key', 'gk_nope'], { env: f.env });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /gk_nope/);
});

test('the sweep persists a lapsed grace period as revoked and emits gateway.key_revoked exactly once', async () => {
  const f = fresh();
  const a = await issueKey(f.env);
  await runSvc(['gateway', 'rotate-key', a.keyId, '--grace-period', '30m'], { env: f.env });
  const lapsed = new Date(Date.now() - 1000).toISOString();
  editKeyRecord(f.keystore, a.keyId, { grace_period_until: lapsed });
  for (let i = 0; i < 2; i++) {
    const r = await runSvc(['gateway', 'list-keys', '--format', 'json'], { env: f.env });
    const old = JSON.parse(r.stdout).keys.find((k: { key_id: string }) => k.key_id === a.keyId);
    assert.equal(old.effective_status, 'revoked');
    assert.equal(old.status, 'revoked');
    assert.equal(old.revoked_at, lapsed);
  }
  const onDisk = JSON.parse(readFileSync(f.keystore, 'utf8')).keys[0];
  assert.equal(onDisk.status, 'revoked');
  const swept = readEvents(f.db, 'gateway.key_revoked').filter(
    (e) => e.payload.reason === 'grace_period_expired',
  );
  assert.equal(swept.length, 1);
  assert.equal(swept[0].payload.key_id, a.keyId);
});

test('concurrent issue-key commands all keep their key', async () => {
  const f = fresh();
  const issued = await Promise.all(Array.from({ length: 6 }, () => issueKey(f.env)));
  const keys = JSON.parse(readFileSync(f.keystore, 'utf8')).keys.map((k: { key_id: string }) => k.key_id);
  assert.deepEqual([...keys].sort(), issued.map((i) => i.keyId).sort());
});

// a command killed while it holds the lock leaves keys.json.lock behind (empty; an older svc wrote its pid
// there): the next command goes ahead at once, never waiting for the leftover to look stale (10 s, once)
test('a lock file left by a killed key command does not hold up the next one', async () => {
  const f = fresh();
  for (const leftover of ['', '4242\n']) {
    writeFileSync(`${f.keystore}.lock`, leftover);
    const r = await runSvc(['gateway', 'issue-key', '--name', 'after', '--workspace', '/tmp'], {
      env: f.env,
      timeoutMs: 5_000,
    });
    assert.equal(r.code, 0, `after a leftover ${JSON.stringify(leftover)}: ${r.stderr}`);
  }
  assert.equal(JSON.parse(readFileSync(f.keystore, 'utf8')).keys.length, 2);
  assert.equal(statSync(`${f.keystore}.lock`).mode & 0o777, 0o600);
});

test('a keystore that is not valid JSON or fails its schema is refused with path and reason and kept', async () => {
  const f = fresh();
  for (const [text, reason] of [
    ['{"keys": [', /not valid JSON/],
    ['{"keys": [{"key_id": "gk_x"}]}', /keys\[0\]\.key_id/],
  ] as const) {
    writeFileSync(f.keystore, text);
    for (const args of [
      ['issue-key', '--name', 'x', '--workspace', '/tmp'],
      ['list-keys'],
      ['revoke-key', 'gk_x'],
    ]) {
      const r = await runSvc(['gateway', ...args], { env: f.env });
      assert.equal(r.code, 1, args.join(' '));
      assert.ok(r.stderr.includes(f.keystore));
      assert.match(r.stderr, reason);
    }
    assert.equal(readFileSync(f.keystore, 'utf8'), text);
  }
});

test('an unreachable trace store leaves a warning on stderr and exit 0', async () => {
  const f = fresh();
  const blocker = join(tmp.dir, 'not-a-dir');
  writeFileSync(blocker, '');
  const r = await runSvc(['gateway', 'issue-key', '--name', 'x', '--workspace', '/tmp'], {
    env: { ...f.env, SVC_GATEWAY_DB_PATH: join(blocker, 'svc.db') },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /warning: .*gateway\.key_issued.*not recorded/);
  assert.match(parseLines(r.stdout).token, /^gw_/);
});

test('missing or malformed arguments exit 2', async () => {
  const f = fresh();
  for (const args of [
    ['issue-key', '--workspace', '/tmp'],
    ['issue-key', '--name', 'x'],
    ['issue-key', '--name', 'x', '--workspace', '/tmp', '--daily-cap-usd', 'lots'],
    ['issue-key', '--name', 'x', '--workspace', '/tmp', '--allow-model', 'claude'],
    ['issue-key', '--name', 'x', '--workspace', '/tmp', '--allow-model', 'nope:model'],
    // the keystore is a file read and rewritten: "-" is refused as backup and restore refuse it
    ['issue-key', '--name', 'x', '--workspace', '/tmp', '--keystore', '-'],
    ['list-keys', '--keystore', '-'],
    ['issue-key', '--name', '', '--workspace', '/tmp'],
    ['issue-key', '--name', '  ', '--workspace', '/tmp'],
    ['issue-key', '--name', 'x', '--workspace', ''],
    ['revoke-key'],
    ['revoke-key', ''],
    ['rotate-key', ' '],
    ['list-keys', '--format', 'xml'],
  ]) {
    const r = await runSvc(['gateway', ...args], { env: f.env, cwd: dirname(f.keystore) });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  // SVC_GATEWAY_KEYSTORE=- is refused as any bad SVC_* setting: exit 1, one sentence naming the variable
  for (const args of [['issue-key', '--name', 'x', '--workspace', '/tmp'], ['list-keys']]) {
    const r = await runSvc(['gateway', ...args], {
      env: { ...f.env, SVC_GATEWAY_KEYSTORE: '-' },
      cwd: dirname(f.keystore),
    });
    assert.equal(r.code, 1, `SVC_GATEWAY_KEYSTORE=- ${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr.trim(), /^svc: SVC_GATEWAY_KEYSTORE is a file, not standard input or output/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  assert.equal(existsSync(join(dirname(f.keystore), '-')), false, 'a keystore file named "-"');
  // none of them issued a key: there is not even a keystore to list
  const listed = await runSvc(['gateway', 'list-keys', '--format', 'json'], { env: f.env });
  assert.equal(listed.code, 1, listed.stdout);
  assert.match(listed.stderr, /There is no keystore at/);
  const typo = await runSvc(
    [
      'gateway',
      'issue-key',
      '--name',
      'x',
      '--workspace',
      '/tmp',
      '--allow-model',
      'anthropic:claude-sonet-4-5',
    ],
    { env: f.env },
  );
  // said, not refused: the gateway the key is for may read another models.yaml than this command was given
  assert.equal(typo.code, 0, typo.stderr);
  assert.match(parseLines(typo.stdout).token, /^gw_/);
  assert.equal(
    typo.stderr,
    'svc: warning: --allow-model "anthropic:claude-sonet-4-5" is not a model of built-in models.yaml (did you mean anthropic:claude-sonnet-4-5?); the key allows it, but a gateway using that table never serves it: check the id, or issue keys with the --models or SVC_MODELS the gateway uses.\n',
  );
  // SVC_MODELS naming the gateway's file, absent where keys are issued (a Compose job): unchecked, issued
  const away = join(tmp.dir, 'mounted-only-in-the-gateway', 'models.yaml');
  const unchecked = await runSvc(
    ['gateway', 'issue-key', '--name', 'y', '--workspace', '/tmp', '--allow-model', 'anthropic:my-tuned'],
    { env: { ...f.env, SVC_MODELS: away } },
  );
  assert.equal(unchecked.code, 0, unchecked.stderr);
  assert.match(parseLines(unchecked.stdout).token, /^gw_/);
  assert.match(
    unchecked.stderr,
    /^svc: warning: the --allow-model ids were not checked against SVC_MODELS, and the key allows them as given: Cannot read the model registry .*\n$/,
  );
});

// spec 3's identity guard: a tag outside it could never be filtered, exported or forgotten
test('issue-key refuses a --user or --team tag that analytics, export and forget could never name (exit 2, no key)', async () => {
  const f = fresh();
  for (const [flag, value] of [
    ['--user', 'alice.smith'],
    ['--user', 'alice@example.com'],
    ['--user', ''],
    ['--team', 'team core'],
    ['--team', 'x'.repeat(201)],
  ]) {
    const r = await runSvc(['gateway', 'issue-key', '--name', 'x', '--workspace', '/tmp', flag, value], {
      env: f.env,
    });
    assert.equal(r.code, 2, `${flag} ${value}: ${r.stderr}`);
    assert.match(
      r.stderr.trim(),
      new RegExp(`^svc: ${flag} .* use 1 to 200 letters, digits, "_" or "-"\\.$`),
    );
    assert.equal(r.stdout, '');
  }
  const list = await runSvc(['gateway', 'list-keys', '--format', 'json'], { env: f.env });
  assert.deepEqual(list.code === 0 ? JSON.parse(list.stdout).keys : [], []);
  const ok = await runSvc(
    [
      'gateway',
      'issue-key',
      '--name',
      'x',
      '--workspace',
      '/tmp',
      '--user',
      'usr_Alice-2',
      '--team',
      'team_01',
    ],
    { env: f.env },
  );
  assert.equal(ok.code, 0, ok.stderr);
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isolatedEnv, makeTempDir, ROOT, runSvc, type SvcResult } from '../helpers/svc.ts';

const tmp = makeTempDir();
const env = isolatedEnv(tmp.dir);
test.after(() => tmp.cleanup());

/**
 * `svc <path> --help`, run once per path in this file: a help text depends only on the binary, and
 * every start costs ~0.5 s of CPU, so the tests that read the same help share one run.
 */
const helpRuns = new Map<string, Promise<SvcResult>>();
function help(path: string[]): Promise<SvcResult> {
  const key = path.join(' ');
  let run = helpRuns.get(key);
  if (!run) {
    run = runSvc([...path, '--help'], { env });
    helpRuns.set(key, run);
  }
  return run;
}

const COMMANDS = ['gateway', 'serve', 'chat', 'analytics', 'user', 'routing', 'backup', 'restore'];

test('svc --help lists every top-level command, one line each', async () => {
  const r = await help([]);
  assert.equal(r.code, 0);
  for (const c of COMMANDS) assert.match(r.stdout, new RegExp(`^\\s+${c}\\s+\\S.*$`, 'm'), c);
});

test('svc --version prints the package version', async () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const r = await runSvc(['--version'], { env });
  assert.equal(r.code, 0);
  assert.equal(r.stdout.trim(), pkg.version);
});

test('every command and subcommand answers --help with exit 0', async () => {
  const paths = [
    ...COMMANDS.map((c) => [c]),
    ['gateway', 'issue-key'],
    ['gateway', 'revoke-key'],
    ['gateway', 'rotate-key'],
    ['gateway', 'list-keys'],
    ['gateway', 'backup'],
    ['gateway', 'restore'],
    ['analytics', 'user-export'],
    ...['cost', 'cache', 'routing', 'reliability', 'sessions', 'savings', 'by-key', 'by-team'].map((r) => [
      'analytics',
      r,
    ]),
    ['user', 'forget'],
    ['routing', 'explain'],
  ];
  for (const p of paths) {
    const r = await help(p);
    assert.equal(r.code, 0, `${p.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout, /USAGE/, p.join(' '));
    // README: the store's default follows XDG_CONFIG_HOME
    const dbPath = r.stdout.split('\n').find((l) => l.includes('--db-path'));
    if (dbPath)
      assert.match(
        dbPath,
        /(or|else) \$XDG_CONFIG_HOME\/svc\/svc\.db, i\.e\. ~\/\.config\/svc\/svc\.db\)/,
        p.join(' '),
      );
  }
});

test("svc help [command…] and --help before the command words print that command's help", async () => {
  // `svc help` was the unknown command "help" (exit 2), and `svc --help gateway` printed svc's own help
  const [top, gateway, issueKey] = await Promise.all([
    help([]),
    help(['gateway']),
    help(['gateway', 'issue-key']),
  ]);
  const cases: Array<[string[], SvcResult]> = [
    [['help'], top],
    [['help', 'gateway'], gateway],
    [['--help', 'gateway'], gateway],
    [['help', 'gateway', 'issue-key'], issueKey],
    [['-h', 'gateway', 'issue-key'], issueKey],
    [['gateway', '--help', 'issue-key'], issueKey],
    // before: exit 2, 'Unexpected argument "--help"' / 'Unknown command "help"' (for svc, for svc gateway)
    [['help', 'gateway', '--'], gateway],
    [['--help', 'help'], top],
    [['gateway', 'help'], gateway],
    [['gateway', 'help', 'issue-key'], issueKey],
  ];
  const runs = await Promise.all(cases.map(([args]) => runSvc(args, { env })));
  cases.forEach(([args, expected], i) => {
    assert.equal(runs[i].code, 0, `${args.join(' ')}: ${runs[i].stderr}`);
    assert.equal(runs[i].stdout, expected.stdout, args.join(' '));
  });
  const unknown = await runSvc(['help', 'frobnicate'], { env });
  assert.equal(unknown.code, 2);
  assert.equal(
    unknown.stderr,
    'svc: Unknown command "frobnicate" for svc; run `svc --help` to see the commands.\n',
  );
  // where a command takes an argument, "help" is that argument: the key id revoke-key looks for
  const keyId = await runSvc(['gateway', 'revoke-key', 'help', '--keystore', join(tmp.dir, 'none.json')], {
    env,
  });
  assert.equal(keyId.code, 1, keyId.stderr);
  assert.doesNotMatch(keyId.stdout, /USAGE/);
});

test('an unknown command exits 2 with one sentence on stderr', async () => {
  const [top, gateway] = await Promise.all([
    runSvc(['frobnicate'], { env }),
    // svc gateway runs itself too, but takes no argument: a word after it is a mistyped command of it
    runSvc(['gateway', 'list-key'], { env }),
  ]);
  assert.equal(top.code, 2);
  assert.equal(top.stderr.trim().split('\n').length, 1);
  assert.match(top.stderr, /Unknown command "frobnicate"/);
  assert.equal(gateway.code, 2);
  // before: 'Unexpected argument "list-key" for svc gateway; run `svc gateway --help` for its usage.'
  assert.equal(
    gateway.stderr,
    'svc: Unknown command "list-key" for svc gateway; run `svc gateway --help` to see the commands.\n',
  );
});

// README Commands: a missing command is a usage error; `svc` alone is one like `svc analytics` alone
test('svc, svc analytics, svc user and svc routing without a command exit 2 with one sentence naming the commands', async () => {
  const runs = await Promise.all(
    [[], ['analytics'], ['user'], ['routing']].map(async (p) => [p, await runSvc(p, { env })] as const),
  );
  for (const [p, r] of runs) {
    const name = ['svc', ...p].join(' ');
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    assert.equal(r.stdout, '', name);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`^svc: ${name} needs a command \\(.+\\); run \`${name} --help\``),
      name,
    );
  }
  assert.match(
    runs[0]![1].stderr,
    /\(gateway, serve, chat, analytics, user, routing, backup, restore, forward\)/,
  );
});

// a device would be read without end (readFileSync of /dev/zero grew until memory ran out): only a file is read
test('a models.yaml or routing.yaml path that is a device or a FIFO is refused, not read without end', async () => {
  const fifo = join(tmp.dir, 'policy.fifo');
  execFileSync('mkfifo', [fifo]);
  const explain = (flags: string[]) =>
    runSvc(['routing', 'explain', '--model', 'auto', '--text', 'hi', ...flags], { env, timeoutMs: 10_000 });
  // a server start reads its models.yaml before anything else waits: a FIFO with no writer is refused too
  const keystore = join(tmp.dir, 'fifo-keys.json');
  const issued = await runSvc(
    ['gateway', 'issue-key', '--name', 'f', '--workspace', tmp.dir, '--keystore', keystore],
    { env },
  );
  assert.equal(issued.code, 0, issued.stderr);
  const start = { timeoutMs: 10_000 };
  const [models, routing, routingFifo, gateway, serve] = await Promise.all([
    explain(['--models', '/dev/zero']),
    explain(['--routing', '/dev/zero']),
    explain(['--routing', fifo]),
    runSvc(['gateway', '--port', '0', '--keystore', keystore], {
      ...start,
      env: { ...env, SVC_MODELS: fifo, ANTHROPIC_API_KEY: 'sk-ant-test' },
    }),
    runSvc(['serve', '--port', '0', '--models', fifo], {
      ...start,
      env: { ...env, ANTHROPIC_API_KEY: 'sk-ant-test' },
    }),
  ]);
  for (const [r, path] of [
    [models, '/dev/zero'],
    [gateway, fifo],
    [serve, fifo],
  ] as const) {
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(
      r.stderr.startsWith(
        `svc: Cannot read the model registry ${path} (not a regular file: a device, FIFO or socket); point --models`,
      ),
      r.stderr,
    );
  }
  // a policy that cannot be read is reported and the built-in one shown, as for a missing file; an invalid file
  for (const [r, path] of [
    [routing, '/dev/zero'],
    [routingFifo, fifo],
  ] as const) {
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(
      r.stdout.includes(
        `${path} is invalid (cannot read the routing policy ${path}: not a regular file: a device, FIFO or socket); shown with the built-in policy`,
      ),
      r.stdout,
    );
  }
});

test('an unknown flag exits 2 with one sentence on stderr', async () => {
  const r = await runSvc(['backup', '/tmp/x.db', '--frob'], { env });
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /Unknown option "--frob"/);
  // only a switch has a --no- form; before: 'unexpected error: The "paths[0]" argument must be of type string'
  const negated = await runSvc(['analytics', 'cost', '--no-db-path', 'x'], { env });
  assert.equal(negated.code, 2, negated.stderr);
  assert.match(negated.stderr, /^svc: Unknown option "--no-db-path" for svc analytics cost; /);
  // before: citty read -db-path as the letters -d -b …, and the report ran on the default store
  const oneDash = await runSvc(['analytics', 'cost', '-db-path', '/nowhere/x.db'], { env });
  assert.equal(oneDash.code, 2, oneDash.stderr);
  assert.equal(
    oneDash.stderr,
    'svc: Option "-db-path" of svc analytics cost takes two dashes: write --db-path.\n',
  );
});

test('a flag value with control characters is refused on one line that moves nothing on the terminal', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['gateway', '--port', '\u001b[2J1'], /not "\u241b\[2J1"\.$/], // ESC [2J clears the screen
    [['serve', '--port', '84\n21'], /not "84\u242421"\.$/],
    [['backup', '/tmp/x.db', '--frob\u0007'], /^svc: Unknown option "--frob\u2407" for svc backup; /],
  ];
  const runs = await Promise.all(cases.map(([args]) => runSvc(args, { env })));
  runs.forEach((r, i) => {
    const [args, sentence] = cases[i];
    assert.equal(r.code, 2, `${JSON.stringify(args)}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.indexOf('\n'), r.stderr.length - 1, JSON.stringify(r.stderr));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters that must not reach the terminal
    assert.doesNotMatch(r.stderr.slice(0, -1), /[\u0000-\u001f\u007f]/, JSON.stringify(r.stderr));
    assert.match(r.stderr.trimEnd(), sentence);
  });
});

test('a flag missing its value exits 2', async () => {
  const r = await runSvc(['backup', '/tmp/x.db', '--db-path'], { env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /needs a value/);
});

test('-h or --help as a value is the value, not a request for help', async () => {
  // before: the help, exit 0, and nothing explained (or issued, or forgotten: forget --confirm -- -h)
  const r = await runSvc(['routing', 'explain', '--model', 'auto', '--text', '-h'], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^request +model=auto /);
  assert.doesNotMatch(r.stdout, /USAGE/);
  assert.match((await help(['routing', 'explain'])).stdout, /USAGE svc routing explain/);
});

test('a flag given twice exits 2 naming it, and nothing is done with either value', async () => {
  const at = (name: string) => join(tmp.dir, name);
  const runs = await Promise.all([
    runSvc(['restore', at('b.db'), '--db-path', at('one.db'), '--db-path', at('two.db'), '--force'], { env }),
    runSvc(
      ['gateway', 'issue-key', '--name=a', '--name', 'b', '--workspace', '/tmp', '--keystore', at('k.json')],
      {
        env,
      },
    ),
    runSvc(['user', 'forget', 'usr_x', '--confirm', '--confirm=false', '--db-path', at('one.db')], { env }),
  ]);
  for (const [r, flag] of [
    [runs[0], 'db-path'],
    [runs[1], 'name'],
    [runs[2], 'confirm'],
  ] as const) {
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, `svc: --${flag} is given 2 times; give it once.\n`);
  }
  for (const f of ['one.db', 'two.db', 'k.json']) assert.equal(existsSync(at(f)), false, f);
});

// DECISIONS §2: gateway commands read SVC_GATEWAY_DB_PATH before SVC_DB_PATH, and svc gateway backup does
test('backup and restore help names both store variables, as svc gateway backup reads SVC_GATEWAY_DB_PATH first', async () => {
  for (const p of [['gateway', 'backup'], ['gateway', 'restore'], ['backup'], ['restore']]) {
    const r = await help(p);
    assert.match(r.stdout, /--db-path=<db_path>.*SVC_GATEWAY_DB_PATH.*SVC_DB_PATH/, p.join(' '));
  }
});

test('svc gateway help calls --db-path its trace store, not a store for audit events only', async () => {
  const r = await help(['gateway']);
  const line = r.stdout.split('\n').find((l) => l.includes('--db-path=')) ?? '';
  assert.match(line, /Trace store \(default SVC_GATEWAY_DB_PATH, then SVC_DB_PATH/);
  assert.doesNotMatch(line, /audit/);
});

test('window flags say how a time without a zone is read (UTC), since one is accepted', async () => {
  for (const p of [
    ['analytics', 'cost'],
    ['analytics', 'user-export'],
  ]) {
    const r = await help(p);
    assert.match(r.stdout, /--from=<from>\s+Window start, ISO 8601, UTC without a zone/, p.join(' '));
    assert.doesNotMatch(r.stdout, /with a zone/, p.join(' '));
  }
});

// README Key commands: --user and --team take 1 to 200 letters, digits, "_" or "-" (usr_alice), no ULID
test('issue-key help states the tag shape --user and --team accept', async () => {
  const r = await help(['gateway', 'issue-key']);
  for (const flag of ['user', 'team'])
    assert.match(r.stdout, new RegExp(`--${flag}=<${flag}>.*1 to 200 letters, digits, _ or -`), flag);
  assert.doesNotMatch(r.stdout, /<ulid>/);
});

// README Learned routing: the explained request is estimated like a real one (by script, tools included)
test('routing explain help does not describe the input estimate as characters / 4', async () => {
  const r = await help(['routing', 'explain']);
  assert.match(r.stdout, /--input-tokens=<input_tokens>.*the routing estimate/);
  assert.doesNotMatch(r.stdout, /\/ 4/);
});

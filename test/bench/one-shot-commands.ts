/**
 * CPU of the one-shot commands (a key command, a report, forget, --help): each run from its start to its
 * exit, user + system time as /usr/bin/time reports it, mean of N runs. With two checkouts it alternates
 * them run by run, so both see the same foreign load:
 *
 *   node test/bench/one-shot-commands.ts [--runs 20] [other-checkout/bin/svc]
 *
 * Runs the built bin/svc of this checkout (build first), with NODE_COMPILE_CACHE on as npm test runs it,
 * in a temp HOME with a keystore and a trace store made by issue-key.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SVC_BIN } from '../helpers/svc.ts';

const { values, positionals } = parseArgs({
  options: { runs: { type: 'string', default: '20' } },
  allowPositionals: true,
});
const runs = Number(values.runs);
const bins = positionals.length > 0 ? [positionals[0]!, SVC_BIN] : [SVC_BIN];

const dir = mkdtempSync(join(tmpdir(), 'svc-one-shot-'));
const home = join(dir, 'home');
mkdirSync(join(home, 'ws'), { recursive: true });
const keys = join(home, 'keys.json');
const db = join(home, 'svc.db');
const env = { ...process.env, HOME: home, NODE_COMPILE_CACHE: join(dir, 'compile-cache') };
const timeOut = join(dir, 'time');

const COMMANDS: Array<[string, string[]]> = [
  ['svc --help', ['--help']],
  [
    'svc gateway issue-key',
    [
      'gateway',
      'issue-key',
      '--name',
      'a',
      '--workspace',
      join(home, 'ws'),
      '--keystore',
      keys,
      '--db-path',
      db,
    ],
  ],
  ['svc gateway list-keys', ['gateway', 'list-keys', '--keystore', keys]],
  ['svc analytics cost', ['analytics', 'cost', '--db-path', db]],
  ['svc user forget --confirm', ['user', 'forget', 'usr_x', '--confirm', '--db-path', db]],
  ['svc routing explain', ['routing', 'explain', '--model', 'auto', '--text', 'hello', '--db-path', db]],
  ['svc serve --help', ['serve', '--help']],
];

/** CPU seconds (user + system) of one run. */
function cpu(bin: string, args: string[]): number {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', timeOut, process.execPath, bin, ...args], {
    env,
  });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const [user, sys] = readFileSync(timeOut, 'utf8').trim().split(/\s+/).map(Number);
  return user! + sys!;
}

try {
  execFileSync(process.execPath, [bins[0]!, ...COMMANDS[1]![1]], { env, stdio: 'ignore' }); // the store
  for (const bin of bins) for (const [, args] of COMMANDS) cpu(bin, args); // warm the compile cache
  for (const [label, args] of COMMANDS) {
    const totals = bins.map(() => 0);
    for (let i = 0; i < runs; i++) {
      for (const [b, bin] of bins.entries()) totals[b]! += cpu(bin, args);
    }
    const means = totals.map((t) => t / runs);
    const change =
      means.length === 2 ? ` (${(((means[1]! - means[0]!) / means[0]!) * 100).toFixed(0)} %)` : '';
    console.log(`${label.padEnd(28)} ${means.map((m) => `${m.toFixed(3)} s`).join(' -> ')}${change}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

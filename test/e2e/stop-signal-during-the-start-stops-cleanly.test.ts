/**
 * README §Gateway / §Agent server: SIGTERM or SIGINT stops a server cleanly at any moment, the start
 * included. A signal that came while `svc gateway` or `svc serve` was still loading or opening its store
 * killed it (exit 143 / 130, no log line); now the start ends there, closes what it opened, logs one
 * structured line and exits 0 (DECISIONS §2: success). The signal goes to the process as soon as it has
 * printed anything (its first log line), not once it answers /healthz; a warning the start prints before
 * it opens the store (a host rewritten to loopback, no provider key) makes that line come early.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import {
  collectOutput,
  ensureBuilt,
  freePort,
  makeTempDir,
  SVC_BIN,
  type SvcResult,
} from '../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());
let n = 0;
const home = () => {
  const dir = join(tmp.dir, `h${n++}`);
  mkdirSync(dir);
  return dir;
};

/** Starts `svc <args>` and sends `signal` when its first output arrives; resolves once it has exited. */
async function signalDuringStart(
  args: string[],
  env: NodeJS.ProcessEnv,
  signal: NodeJS.Signals,
): Promise<SvcResult> {
  ensureBuilt();
  const child = spawn(process.execPath, [SVC_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const result = collectOutput(child, 30_000);
  const first = () => child.kill(signal);
  child.stdout?.once('data', first);
  child.stderr?.once('data', first);
  return result;
}

function assertStoppedCleanly(r: SvcResult, signal: NodeJS.Signals): void {
  assert.equal(r.code, 0, `exit code (143/130 is a kill by the signal):\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /^svc: /m, 'no error sentence');
  const lines = r.stderr
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { level: string; msg: string; signal?: string });
  const last = lines[lines.length - 1];
  assert.equal(last.level, 'info', r.stderr);
  assert.match(last.msg, /stopped/, r.stderr);
  assert.equal(lines.find((l) => l.signal !== undefined)?.signal, signal, r.stderr);
}

test('svc gateway sent SIGTERM during its start exits 0 with a log line', async () => {
  const files = gatewayFiles(home());
  await issueKey(files.env);
  const r = await signalDuringStart(
    ['gateway', '--host', '0.0.0.0', '--port', String(await freePort())],
    files.env,
    'SIGTERM',
  );
  assertStoppedCleanly(r, 'SIGTERM');
});

test('svc serve sent SIGINT during its start exits 0 with a log line', async () => {
  const dir = home();
  const files = gatewayFiles(dir, { SVC_DB_PATH: join(dir, 'svc.db'), ANTHROPIC_API_KEY: undefined });
  const r = await signalDuringStart(['serve', '--port', String(await freePort())], files.env, 'SIGINT');
  assertStoppedCleanly(r, 'SIGINT');
});

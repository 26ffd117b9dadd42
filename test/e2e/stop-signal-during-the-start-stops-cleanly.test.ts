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
import { createServer, type Socket } from 'node:net';
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

/**
 * Starts `svc <args>` and sends `signal` when its first output arrives (or when `when` resolves);
 * resolves once it has exited.
 */
async function signalDuringStart(
  args: string[],
  env: NodeJS.ProcessEnv,
  signal: NodeJS.Signals,
  when?: Promise<unknown>,
): Promise<SvcResult> {
  ensureBuilt();
  const child = spawn(process.execPath, [SVC_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const result = collectOutput(child, 30_000);
  const first = () => child.kill(signal);
  if (when) void when.then(first);
  else {
    child.stdout?.once('data', first);
    child.stderr?.once('data', first);
  }
  return result;
}

/** A PostgreSQL that hangs (paused, black-holed): connections are accepted and never answered. */
async function hungPostgres(): Promise<{ url: string; connected: Promise<void>; close(): void }> {
  const sockets = new Set<Socket>();
  let connected!: () => void;
  const first = new Promise<void>((resolve) => {
    connected = resolve;
  });
  const server = createServer((socket) => {
    sockets.add(socket);
    connected();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `postgres://svc@127.0.0.1:${port}/svc`,
    connected: first,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
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

test('a stop while the PostgreSQL connection attempt hangs is acted on at once, not after its timeout', async (t) => {
  for (const [command, line] of [
    ['serve', /agent server stopped during its start/],
    ['gateway', /gateway stopped during its start/],
  ] as const) {
    const pg = await hungPostgres();
    t.after(() => pg.close());
    // the connection attempt would wait SVC_DATABASE_TIMEOUT_MS and then fail the start (exit 1)
    const env = { ...gatewayFiles(home()).env, SVC_DATABASE_URL: pg.url, SVC_DATABASE_TIMEOUT_MS: '60000' };
    const r = await signalDuringStart(
      [command, '--port', String(await freePort())],
      env,
      'SIGTERM',
      pg.connected,
    );
    assertStoppedCleanly(r, 'SIGTERM');
    assert.match(r.stderr, line);
  }
});

test('a SIGHUP (routing.yaml reload) during the start does not end the server; a stop after it is clean', async (t) => {
  // Node's default action for SIGHUP ended the process (exit 129) until the reload listener was installed
  for (const command of ['serve', 'gateway'] as const) {
    const pg = await hungPostgres();
    t.after(() => pg.close());
    const env = { ...gatewayFiles(home()).env, SVC_DATABASE_URL: pg.url, SVC_DATABASE_TIMEOUT_MS: '60000' };
    ensureBuilt();
    const child = spawn(process.execPath, [SVC_BIN, command, '--port', String(await freePort())], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const result = collectOutput(child, 30_000);
    await Promise.race([pg.connected, result]); // a start that failed first is reported by the assertion
    child.kill('SIGHUP');
    child.kill('SIGTERM');
    assertStoppedCleanly(await result, 'SIGTERM');
  }
});

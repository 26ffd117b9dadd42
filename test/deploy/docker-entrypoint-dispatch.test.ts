/**
 * docker/entrypoint.sh and docker/healthcheck.mjs run against the real built `svc` (SVC_BIN) with a
 * temporary keystore and trace store: Docker itself cannot build on the development machines.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { parseLines } from '../helpers/gateway-keys.ts';
import { ensureBuilt, freePort, isolatedEnv, makeTempDir, ROOT, SVC_BIN } from '../helpers/svc.ts';

const ENTRYPOINT = join(ROOT, 'docker/entrypoint.sh');
const HEALTHCHECK = join(ROOT, 'docker/healthcheck.mjs');
const NODE = process.execPath;

const tmp = makeTempDir('svc-entrypoint-');
const children: ChildProcess[] = [];
test.after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  tmp.cleanup();
});

let n = 0;
/** The image's environment, pointed at a private keystore and store; bin/svc's `env node` finds Node 24. */
function imageEnv(extra: Record<string, string | undefined> = {}) {
  const home = join(tmp.dir, `h${n++}`);
  return {
    keystore: join(home, 'etc/keys.json'),
    db: join(home, 'lib/svc.db'),
    env: isolatedEnv(home, {
      PATH: `${dirname(NODE)}:${process.env.PATH}`,
      SVC_BIN,
      SVC_GATEWAY_KEYSTORE: join(home, 'etc/keys.json'),
      SVC_GATEWAY_DB_PATH: join(home, 'lib/svc.db'),
      ...extra,
    }),
  };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  ensureBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const entry = (args: string[], env: NodeJS.ProcessEnv) => run(ENTRYPOINT, args, env);

test('issue-key, list-keys, rotate-key and revoke-key are dispatched to svc gateway', async () => {
  const f = imageEnv();
  const issued = await entry(['issue-key', '--name', 'first', '--workspace', '/workspace'], f.env);
  assert.equal(issued.code, 0, issued.stderr);
  const { key_id: keyId, token } = parseLines(issued.stdout);
  assert.match(keyId, /^gk_/);
  assert.match(token, /^gw_/);
  const keystore = JSON.parse(readFileSync(f.keystore, 'utf8')) as { keys: Array<{ key_id: string }> };
  assert.deepEqual(
    keystore.keys.map((k) => k.key_id),
    [keyId],
  );

  const listed = await entry(['list-keys', '--format', 'json'], f.env);
  assert.equal(listed.code, 0, listed.stderr);
  const keys = (JSON.parse(listed.stdout) as { keys: Array<{ key_id: string; status: string }> }).keys;
  assert.deepEqual(
    keys.map((k) => [k.key_id, k.status]),
    [[keyId, 'active']],
  );

  const rotated = await entry(['rotate-key', keyId, '--grace-period', '1h'], f.env);
  assert.equal(rotated.code, 0, rotated.stderr);
  const newKeyId = parseLines(rotated.stdout).new_key_id;
  assert.match(newKeyId, /^gk_/);

  const revoked = await entry(['revoke-key', newKeyId], f.env);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal(parseLines(revoked.stdout).revoked, newKeyId);
});

test('backup and restore take the gateway form, so SVC_GATEWAY_DB_PATH is the store', async () => {
  const f = imageEnv({ SVC_DB_PATH: join(tmp.dir, 'not-this.db') });
  assert.equal((await entry(['issue-key', '--name', 'a', '--workspace', '/w'], f.env)).code, 0);
  const dest = join(tmp.dir, `backup-${n}.db`);
  const backup = await entry(['backup', dest], f.env);
  assert.equal(backup.code, 0, backup.stderr);
  assert.equal(parseLines(backup.stdout).source, f.db);
  const refused = await entry(['restore', dest], f.env);
  assert.equal(refused.code, 1, 'a live store is not replaced without --force');
  const restored = await entry(['restore', dest, '--force'], f.env);
  assert.equal(restored.code, 0, restored.stderr);
});

test('--help, --version and other subcommands pass through to svc; exit codes are kept', async () => {
  const f = imageEnv();
  const help = await entry(['--help'], f.env);
  assert.equal(help.code, 0);
  for (const cmd of ['gateway', 'serve', 'analytics', 'user', 'backup', 'restore', 'forward']) {
    assert.match(help.stdout, new RegExp(`\\b${cmd}\\b`));
  }
  const version = await entry(['--version'], f.env);
  assert.equal(version.stdout.trim(), JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  const forwardHelp = await entry(['forward', '--help'], f.env);
  assert.equal(forwardHelp.code, 0);
  assert.match(forwardHelp.stdout, /--listen/);
  const gatewayFlagHelp = await entry(['--port', '9', '--help'], f.env);
  assert.match(gatewayFlagHelp.stdout, /issue-key/, 'a leading gateway flag goes to svc gateway');
  const usage = await entry(['list-keys', '--no-such-flag'], f.env);
  assert.equal(usage.code, 2);
  const unknownKey = await entry(['revoke-key', 'gk_00000000000000000000000000'], f.env);
  assert.equal(unknownKey.code, 1);
});

test('with no arguments the gateway starts as the exec-ed node process, passes the health check and stops on SIGTERM with 0', async () => {
  const port = await freePort();
  const f = imageEnv({ SVC_GATEWAY_PORT: String(port), ANTHROPIC_API_KEY: 'test-provider-key' });
  assert.equal((await entry(['issue-key', '--name', 'a', '--workspace', '/w'], f.env)).code, 0);
  const gw = await startEntrypoint([], f.env, port);

  // exec: the entrypoint's own pid now runs node with bin/svc, not a shell.
  const cmdline = readFileSync(`/proc/${gw.child.pid}/cmdline`, 'utf8').split('\0');
  assert.match(cmdline[0], /node$/);
  assert.ok(cmdline.includes(SVC_BIN), cmdline.join(' '));
  assert.ok(cmdline.includes('gateway'), cmdline.join(' '));

  const healthy = await run(NODE, [HEALTHCHECK], f.env);
  assert.equal(healthy.code, 0, healthy.stderr);

  gw.child.kill('SIGTERM');
  assert.equal(await gw.exited, 0, gw.stderr());
  assert.match(gw.stderr(), /gateway stopped/);

  const down = await run(NODE, [HEALTHCHECK], f.env);
  assert.equal(down.code, 1);
  assert.match(down.stderr, new RegExp(`127\\.0\\.0\\.1:${port}/healthz unreachable`));
});

test('the health check asks the address SVC_GATEWAY_HOST binds: ::1 and 127.x.y.z are kept, other hosts are 127.0.0.1', async () => {
  const port = await freePort();
  const f = imageEnv({
    SVC_GATEWAY_PORT: String(port),
    SVC_GATEWAY_HOST: '::1',
    ANTHROPIC_API_KEY: 'test-provider-key',
  });
  assert.equal((await entry(['issue-key', '--name', 'a', '--workspace', '/w'], f.env)).code, 0);
  const gw = await startEntrypoint([], f.env, port, '[::1]');

  const healthy = await run(NODE, [HEALTHCHECK], f.env);
  assert.equal(healthy.code, 0, healthy.stderr);
  // the same gateway is not on 127.0.0.1, and a non-loopback SVC_GATEWAY_HOST means 127.0.0.1 (its warned rewrite)
  const rewritten = await run(NODE, [HEALTHCHECK], { ...f.env, SVC_GATEWAY_HOST: '0.0.0.0' });
  assert.equal(rewritten.code, 1);
  assert.match(rewritten.stderr, new RegExp(`http://127\\.0\\.0\\.1:${port}/healthz unreachable`));
  const other = await run(NODE, [HEALTHCHECK], { ...f.env, SVC_GATEWAY_HOST: '127.0.0.9' });
  assert.match(other.stderr, new RegExp(`http://127\\.0\\.0\\.9:${port}/healthz unreachable`));

  gw.child.kill('SIGTERM');
  assert.equal(await gw.exited, 0, gw.stderr());
});

test('the health check follows what the container runs: --port given as a flag, and serve with its /health', async () => {
  const f = imageEnv({ ANTHROPIC_API_KEY: 'test-provider-key' });
  assert.equal((await entry(['issue-key', '--name', 'a', '--workspace', '/w'], f.env)).code, 0);
  // a gateway moved by --port alone (no SVC_GATEWAY_PORT): its main process says where it listens
  const port = await freePort();
  const gw = await startEntrypoint(['--port', String(port)], f.env, port);
  const gwHealth = await run(NODE, [HEALTHCHECK], { ...f.env, SVC_HEALTHCHECK_PID: String(gw.child.pid) });
  assert.equal(gwHealth.code, 0, gwHealth.stderr);
  gw.child.kill('SIGTERM');
  assert.equal(await gw.exited, 0, gw.stderr());

  // `serve` in the image: the agent server's /health, on its --port
  const servePort = await freePort();
  const serve = spawn(ENTRYPOINT, ['serve', '--port', String(servePort)], {
    env: f.env,
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(serve);
  let serveErr = '';
  serve.stderr.setEncoding('utf8').on('data', (d) => {
    serveErr += d;
  });
  const serveExited = new Promise<number | null>((r) => serve.on('exit', (code) => r(code)));
  await waitForPath(`127.0.0.1:${servePort}`, '/health', serve, () => serveErr);
  const pid = { SVC_HEALTHCHECK_PID: String(serve.pid) };
  const healthy = await run(NODE, [HEALTHCHECK], { ...f.env, ...pid });
  assert.equal(healthy.code, 0, healthy.stderr);
  serve.kill('SIGTERM');
  assert.equal(await serveExited, 0, serveErr);
  // a process that is no svc (this test) reads as the gateway on the address its variables give (on a free
  // port: the default 8422 may be taken by a gateway someone runs on this machine, which would answer)
  const idle = String(await freePort());
  const down = await run(NODE, [HEALTHCHECK], {
    ...f.env,
    ...pid,
    SVC_HEALTHCHECK_PID: String(process.pid),
    SVC_GATEWAY_PORT: idle,
  });
  assert.notEqual(down.code, 0);
  assert.match(down.stderr, new RegExp(`http://127\\.0\\.0\\.1:${idle}/healthz`));
});

test('a leading flag is a gateway option: --port picks the port; without a provider key the start is refused', async () => {
  const f = imageEnv({ ANTHROPIC_API_KEY: 'test-provider-key' });
  assert.equal((await entry(['issue-key', '--name', 'a', '--workspace', '/w'], f.env)).code, 0);
  const port = await freePort();
  const gw = await startEntrypoint(['--port', String(port)], f.env, port);
  gw.child.kill('SIGINT');
  assert.equal(await gw.exited, 0, gw.stderr());

  const refused = await entry(['--port', String(await freePort())], {
    ...f.env,
    ANTHROPIC_API_KEY: undefined,
  });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /ANTHROPIC_API_KEY/);
});

// --- internal ---

/** Starts the entrypoint as a long-running process and waits until /healthz answers on `port`. */
async function startEntrypoint(args: string[], env: NodeJS.ProcessEnv, port: number, host = '127.0.0.1') {
  ensureBuilt();
  const child = spawn(ENTRYPOINT, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => {
    stderr += d;
  });
  child.stdout.resume();
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  await waitForHealthz(`${host}:${port}`, child, () => stderr);
  return { child, exited, stderr: () => stderr };
}

function waitForHealthz(address: string, child: ChildProcess, stderr: () => string): Promise<void> {
  return waitForPath(address, '/healthz', child, stderr);
}

async function waitForPath(
  address: string,
  path: string,
  child: ChildProcess,
  stderr: () => string,
): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null)
      throw new Error(`the entrypoint exited with ${child.exitCode}:\n${stderr()}`);
    try {
      if ((await fetch(`http://${address}${path}`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no answer on ${path}:\n${stderr()}`);
}

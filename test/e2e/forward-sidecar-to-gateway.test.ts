/**
 * `svc forward` in front of a real `svc gateway`, as the chart's sidecar runs it: health, metrics and an
 * authenticated call pass through; a stopped gateway fails the probe; SIGTERM exits 0.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { makeTempDir, type RunningSvc, runSvc, startSvc } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-forward-');
const running: RunningSvc[] = [];
test.after(async () => {
  for (const s of running) await s.stop();
  tmp.cleanup();
});

test('health, metrics and an authenticated request reach the gateway through the forwarder', async () => {
  const home = join(tmp.dir, 'a');
  mkdirSync(home);
  const f = gatewayFiles(home);
  const { token } = await issueKey(f.env);
  const gw = await startSvc(['gateway', '--port', '{port}'], { env: f.env });
  running.push(gw);
  const fwd = await startSvc(
    ['forward', '--listen', '127.0.0.1:{port}', '--target', `127.0.0.1:${gw.port}`],
    {
      env: f.env,
    },
  );
  running.push(fwd);

  const health = await fetch(`${fwd.url}/healthz`);
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as { status: string }).status, 'ok');
  const metrics = await fetch(`${fwd.url}/metrics`);
  assert.equal(metrics.status, 200);
  assert.match(await metrics.text(), /svc_gateway_keys_active 1/);
  // Auth runs behind the forwarder: no token is 401 in the path's shape, the issued token gets past it.
  const anonymous = await fetch(`${fwd.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
  assert.equal(anonymous.status, 401);
  assert.equal(((await anonymous.json()) as { error: { code: string } }).error.code, 'missing_token');
  const authed = await fetch(`${fwd.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.notEqual(authed.status, 401);
  await authed.body?.cancel();

  const listening = fwd
    .output()
    .stderr.split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg === 'forwarding');
  assert.deepEqual(
    { listen: listening?.listen, target: listening?.target },
    { listen: `127.0.0.1:${fwd.port}`, target: `127.0.0.1:${gw.port}` },
  );

  // With the gateway gone the forwarder stays up but the probe fails: the pod turns unready.
  assert.equal(await gw.stop(), 0);
  await assert.rejects(fetch(`${fwd.url}/healthz`));
  await until(() => fwd.output().stderr.includes('upstream connect failed'));
  assert.match(fwd.output().stderr, /"msg":"upstream connect failed".*"code":"ECONNREFUSED"/);
  assert.equal(await fwd.stop('SIGTERM'), 0);
  assert.match(fwd.output().stderr, /"msg":"forward stopped"/);
});

test('bad addresses are usage errors (exit 2) and --help documents the flags', async () => {
  const env = gatewayFiles(tmp.dir).env;
  const bad = await runSvc(['forward', '--listen', '8423'], { env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--listen must be host:port/);
  const badDrain = await runSvc(['forward', '--drain-timeout', 'soon'], { env });
  assert.equal(badDrain.code, 2);
  // longer than a timer holds: the drain was cut off at once (before: it started, the drain then 1 ms)
  const longDrain = await runSvc(['forward', '--drain-timeout', '2147484', '--listen', '127.0.0.1:0'], {
    env,
    timeoutMs: 10_000,
  });
  assert.equal(longDrain.code, 2, longDrain.stderr);
  assert.equal(
    longDrain.stderr,
    'svc: --drain-timeout must be a number of seconds from 0 to 2147483 (for example 30), not "2147484".\n',
  );
  // a target that is the listen address (each connection would open another to itself, without end) or port
  // 0: before, the forwarder started
  const targets: Array<[string[], RegExp]> = [
    [['--listen', '127.0.0.1:18423', '--target', '127.0.0.1:18423'], /is the address svc forward listens on/],
    [['--listen', '0.0.0.0:18423', '--target', 'localhost:18423'], /is the address svc forward listens on/],
    [['--listen', '[::]:18423', '--target', '[::1]:18423'], /is the address svc forward listens on/],
    [['--listen', '127.0.0.1:18423', '--target', 'localhost:18423'], /is the address svc forward listens on/],
    [['--listen', 'localhost:18423', '--target', '127.0.0.1:18423'], /is the address svc forward listens on/],
    [['--listen', '127.0.0.1:18423', '--target', '127.0.0.1:0'], /port 0 is no port to connect to\.$/],
  ];
  const refused = await Promise.all(
    targets.map(([args]) => runSvc(['forward', ...args], { env, timeoutMs: 10_000 })),
  );
  refused.forEach((r, i) => {
    assert.equal(r.code, 2, `${targets[i][0].join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.indexOf('\n'), r.stderr.length - 1, r.stderr);
    assert.match(r.stderr.trimEnd(), /^svc: --target /);
    assert.match(r.stderr.trimEnd(), targets[i][1]);
  });
  const help = await runSvc(['forward', '--help'], { env });
  assert.equal(help.code, 0);
  for (const flag of ['--listen', '--target', '--drain-timeout']) assert.match(help.stdout, new RegExp(flag));
});

for (const [first, second] of [
  ['SIGTERM', 'SIGTERM'],
  ['SIGINT', 'SIGINT'],
] as const) {
  test(`${second} during the drain after ${first} cuts the open connection off and still exits 0`, async (t) => {
    // a target that answers the readiness probe and holds every other request open
    const target = createServer((req, res) => {
      if (req.url === '/healthz') res.end('ok');
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    t.after(() => target.close());
    t.after(() => target.closeAllConnections());
    const { port } = target.address() as AddressInfo;
    const fwd = await startSvc(['forward', '--listen', '127.0.0.1:{port}', '--target', `127.0.0.1:${port}`], {
      env: gatewayFiles(tmp.dir).env,
    });
    running.push(fwd);
    const held = fetch(`${fwd.url}/held`).then(
      () => 'answered',
      () => 'cut off',
    );
    await new Promise((r) => target.once('request', r));
    fwd.child.kill(first);
    await until(() => fwd.output().stderr.includes('draining connections'));
    // a second Ctrl-C used to end it by the signal (exit 130 / 143), without 'forward stopped'
    assert.equal(await fwd.stop(second), 0, fwd.output().stderr);
    assert.equal(await held, 'cut off');
    assert.match(fwd.output().stderr, /"msg":"second stop signal; cutting off the open connections now"/);
    assert.match(fwd.output().stderr, /"msg":"forward stopped"/);
  });
}

// --- internal ---

/** Waits (bounded) for a child's output to catch up. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
}

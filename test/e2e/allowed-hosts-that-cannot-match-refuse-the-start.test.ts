/**
 * An SVC_ALLOWED_HOSTS entry that no Host header can equal (a URL, `*`, a path, a bad port such as 0, an
 * empty label) refuses the start of `svc gateway` and `svc serve` with exit 1 and one sentence naming it;
 * it used to be taken silently, and the name the operator meant was refused with 403 host_not_allowed.
 * Valid entries (names, name:port, IPv4 and IPv6 addresses, as the chart writes them) still start and still
 * admit their Host.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { freePort, makeTempDir, runSvc, startSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());

function statusWithHost(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

test('an entry that can never match refuses the start with one sentence', async () => {
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  for (const entry of ['https://svc.example.com', '*', 'svc/v1', 'svc:99999', 'svc:0', 'svc..ns']) {
    for (const command of ['gateway', 'serve']) {
      const r = await runSvc([command, '--port', String(await freePort())], {
        env: { ...files.env, SVC_ALLOWED_HOSTS: `svc.ns,${entry}` },
        timeoutMs: 15_000,
      });
      assert.equal(r.code, 1, `${command} with ${entry}: exit ${r.code}\n${r.stderr}`);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
      assert.ok(
        r.stderr.startsWith(`svc: SVC_ALLOWED_HOSTS entry "${entry}" is not a host name or address`),
        r.stderr,
      );
    }
  }
});

test('names, name:port and IP addresses as the chart writes them still start and admit their Host', async (t) => {
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  const gw = await startSvc(['gateway', '--port', '{port}'], {
    env: { ...files.env, SVC_ALLOWED_HOSTS: 'svc,svc.ns.svc.cluster.local,my_alias:8423,10.1.2.3,fd00::1,' },
  });
  t.after(() => gw.stop());
  assert.equal(await statusWithHost(gw.port, 'svc.ns.svc.cluster.local:8422'), 200);
  assert.equal(await statusWithHost(gw.port, 'my_alias:8423'), 200);
  assert.equal(await statusWithHost(gw.port, '10.1.2.3:8423'), 200);
  assert.equal(await statusWithHost(gw.port, '[fd00::1]:8423'), 200);
  assert.equal(await statusWithHost(gw.port, 'evil.example.com'), 403);
});

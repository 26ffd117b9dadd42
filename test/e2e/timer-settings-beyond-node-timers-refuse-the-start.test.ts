/**
 * A `*_MS` setting longer than a Node timer holds (2^31 - 1 ms) refuses the start with exit 1 and one
 * sentence; Node would otherwise run the timer after 1 ms (SVC_PATTERN_REFRESH_MS=3000000000 rebuilt the
 * pattern table without pause).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { freePort, makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());

test('svc gateway and svc serve refuse a timer setting beyond 2147483647 ms', async () => {
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  for (const [command, name] of [
    ['gateway', 'SVC_PATTERN_REFRESH_MS'],
    ['gateway', 'SVC_GATEWAY_UPSTREAM_TIMEOUT_MS'],
    ['serve', 'SVC_PATTERN_REFRESH_MS'],
    ['serve', 'SVC_WS_PING_INTERVAL_MS'],
  ] as const) {
    const r = await runSvc([command, '--port', String(await freePort())], {
      env: { ...files.env, [name]: '3000000000' },
      timeoutMs: 15_000,
    });
    assert.equal(r.code, 1, `${command} with ${name}: exit ${r.code}\n${r.stderr}`);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0],
      new RegExp(`^svc: ${name} must be at most 2147483647 .*"3000000000"; fix or unset it`),
    );
  }
});

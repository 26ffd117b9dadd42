/**
 * svc serve and svc gateway write a request log line to stdout per request. A reader that goes away
 * (`svc serve | head`, a log shipper restarting) made the next write an unhandled EPIPE that killed the
 * server, and every running turn with it; the log lines are dropped instead and the server goes on.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { isolatedEnv, makeTempDir, startSvc } from '../helpers/svc.ts';

async function survives(args: string[], env: NodeJS.ProcessEnv, path: string, readyPath: string) {
  const svc = await startSvc(args, { env, readyPath });
  try {
    svc.child.stdout!.destroy(); // the reader is gone: the next request log write fails with EPIPE
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${svc.url}${path}`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    assert.equal(svc.child.exitCode, null, svc.output().stderr);
  } finally {
    assert.equal(await svc.stop('SIGTERM'), 0, svc.output().stderr);
  }
}

test('svc serve answers on after its stdout reader went away, and stops with exit 0', async (t) => {
  const tmp = makeTempDir('svc-closed-log-');
  t.after(() => tmp.cleanup());
  await survives(['serve', '--port', '{port}'], isolatedEnv(tmp.dir), '/health', '/health');
});

test('svc gateway answers on after its stdout reader went away, and stops with exit 0', async (t) => {
  const tmp = makeTempDir('svc-closed-log-');
  t.after(() => tmp.cleanup());
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  await survives(['gateway', '--port', '{port}'], files.env, '/healthz', '/healthz');
});

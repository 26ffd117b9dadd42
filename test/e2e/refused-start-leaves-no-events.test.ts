/**
 * A start that is refused leaves no events in the trace store (DECISIONS §2: exit 1, one sentence). It
 * used to write `bus.subscriber_registered` for each subscriber it had registered before the refusal (a
 * port in use, a bad setting read once the store was open), so the trace told of servers that never ran.
 * Now a port in use is found before the store is touched, and the bus announces its subscribers only once
 * the server listens. A start that succeeds still writes them.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { gatewayFiles, issueKey, readEvents } from '../helpers/gateway-keys.ts';
import { makeTempDir, runSvc, startSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());

/** Event types in the store besides the key's own audit event (issue-key created the store). */
function startEvents(db: string): string[] {
  const store = new DatabaseSync(db);
  try {
    const rows = store
      .prepare("SELECT type FROM events WHERE type <> 'gateway.key_issued' ORDER BY id")
      .all();
    return rows.map((r) => String(r.type));
  } finally {
    store.close();
  }
}

test('a refused start of svc gateway or svc serve writes no events', async (t) => {
  const files = gatewayFiles(tmp.dir, { SVC_DB_PATH: `${tmp.dir}/svc.db` });
  await issueKey(files.env);
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const port = (taken.address() as { port: number }).port;

  for (const command of ['gateway', 'serve']) {
    const r = await runSvc([command, '--port', String(port)], { env: files.env, timeoutMs: 15_000 });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /^svc: Cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE.*; choose another --port\.$/m,
    );
    assert.deepEqual(startEvents(files.db), [], `svc ${command} refused for a port in use`);
  }

  // refused once the store is open and the subscribers are registered (a setting read while assembling)
  const r = await runSvc(['gateway', '--port', '0'], {
    env: { ...files.env, SVC_PATTERN_REFRESH_MS: '3000000000' },
    timeoutMs: 15_000,
  });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^svc: SVC_PATTERN_REFRESH_MS must be at most/);
  assert.deepEqual(startEvents(files.db), [], 'svc gateway refused for a bad setting');

  const gw = await startSvc(['gateway', '--port', '{port}'], { env: files.env });
  assert.equal(await gw.stop(), 0);
  const registered = readEvents(files.db, 'bus.subscriber_registered').map((e) => e.payload.subscriber);
  assert.ok(registered.includes('trace_writer'), `a start that succeeds announces them: ${registered}`);
});

/**
 * `svc serve` on PostgreSQL while the database is away (spec 2: GET /health is 200, 503 only during
 * shutdown): a restart (connections refused) and a server that hangs (bytes held) both leave /health
 * answering 200 with the last session count read, rather than 500 internal_error or no answer, so a
 * liveness probe does not restart a server that is only waiting for its database. A REST call during the
 * hang is 503 store_unavailable once its statement goes unanswered for SVC_DATABASE_TIMEOUT_MS, rather
 * than no answer at all. The outage is a TCP relay between the server and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTestPostgres } from '../helpers/postgres.ts';
import { isolatedEnv, makeTempDir, startSvc } from '../helpers/svc.ts';
import { databaseBehindRelay } from '../helpers/tcp-relay.ts';

const postgres = useTestPostgres();

test('GET /health stays 200 while PostgreSQL is away', { timeout: 90_000 }, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const { relay, viaRelay } = await databaseBehindRelay(t, postgres);
  const home = makeTempDir('svc-health-pg-');
  t.after(() => home.cleanup());
  const server = await startSvc(['serve', '--port', '{port}'], {
    // a statement or connection attempt unanswered for 1 s is an outage (README: default 10 s)
    env: isolatedEnv(home.dir, { SVC_DATABASE_URL: viaRelay.toString(), SVC_DATABASE_TIMEOUT_MS: '1000' }),
    readyPath: '/health',
  });
  t.after(() => server.stop());
  const get = async (path: string, init: RequestInit = {}) => {
    // a hung /health would otherwise hold the test until its timeout
    const r = await fetch(`${server.url}${path}`, { ...init, signal: AbortSignal.timeout(20_000) });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  const created = await fetch(`${server.url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workspace_path: home.dir }),
  });
  assert.equal(created.status, 201);
  await created.arrayBuffer();
  const before = await get('/health');
  assert.equal(before.status, 200);
  assert.equal(before.body.active_sessions, 1);

  relay.down(); // a restart: every connection cut, new ones refused
  const down = await get('/health');
  assert.equal(down.status, 200, JSON.stringify(down.body));
  assert.equal(down.body.status, 'ok');
  assert.equal(down.body.active_sessions, 1, 'the last count read');
  // the other endpoints say the store cannot be reached (503 store_unavailable)
  const sessions = await get('/sessions');
  assert.equal(sessions.status, 503);
  assert.equal((sessions.body.error as { code: string }).code, 'store_unavailable');

  await relay.up();
  while ((await get('/sessions')).status !== 200); // a pooled connection again, for the freeze to hold
  relay.freeze(); // a server that hangs: connections open, nothing answered
  // a request that needs the store (on the pooled connection, whose statement the server leaves
  // unanswered) is refused once its statement goes unanswered, instead of hanging
  const r = await fetch(`${server.url}/sessions`, { signal: AbortSignal.timeout(20_000) });
  assert.equal(r.status, 503);
  assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'store_unavailable');
  assert.equal(r.headers.get('retry-after'), '1');
  assert.equal(r.headers.get('x-should-retry'), 'true');
  const hung = await get('/health');
  assert.equal(hung.status, 200, JSON.stringify(hung.body));
  assert.equal(hung.body.active_sessions, 1);
  relay.thaw();
  assert.equal((await get('/sessions')).status, 200, 'the hung connection is not handed out again');

  const back = await get('/health');
  assert.equal(back.status, 200);
  assert.equal(back.body.active_sessions, 1);
  assert.match(server.output().stderr, /GET \/health cannot read the session count/);
  assert.equal(server.child.exitCode, null, 'the server is still running');
});

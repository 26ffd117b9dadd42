/**
 * PostgreSQL goes away under a running gateway (a restart, a failover) and comes back: the gateway
 * stays up; a capped key is refused at once with 503 budget_store_unavailable (its spend cannot be
 * checked); a call without caps is answered once the database is back, with every event of its turn
 * in the trace; and the capped key works again without a restart. The outage is a TCP relay cut.
 * A session connection (LISTEN, presence lock) whose network dies silently is noticed and replaced
 * (README §PostgreSQL store: each gateway holds its presence lock while it lives), also while the server
 * still keeps the old session and its lock. A stop during a start
 * step the database leaves unanswered (a table locked by VACUUM FULL) is acted on at once.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { ADVISORY_LOCKS } from '#src/store/dialect.ts';
import { openStore } from '#src/store/open.ts';
import type { Database } from '#src/store/schema.ts';
import { startGatewayReplicas } from '../helpers/gateway-replicas.ts';
import { useTestPostgres } from '../helpers/postgres.ts';
import { collectOutput, freePort, SVC_BIN } from '../helpers/svc.ts';
import { databaseBehindRelay } from '../helpers/tcp-relay.ts';

const postgres = useTestPostgres();

test('a gateway outlives a PostgreSQL outage and loses no answered call', { timeout: 120_000 }, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const { direct, relay, viaRelay } = await databaseBehindRelay(t, postgres);
  // a statement (and the session connection's check) unanswered for 1 s is an outage (README: default 10 s)
  const cluster = await startGatewayReplicas(viaRelay.toString(), 1, { SVC_DATABASE_TIMEOUT_MS: '1000' });
  t.after(() => cluster.stop());
  const reader = await openStore({ engine: 'postgres', url: direct.toString() }, { readOnly: true });
  t.after(() => reader.close());
  const gw = cluster.replicas[0];
  const capped = await cluster.issue(['--daily-cap-usd', '5']);
  const free = await cluster.issue();
  const call = (token: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai:gpt-5-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
  for (const key of [capped, free]) {
    for (;;) {
      const r = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key.token}` } });
      await r.arrayBuffer();
      if (r.status === 200) break;
    }
  }
  assert.equal((await call(capped.token)).status, 200);

  relay.down();
  const during = call(free.token);
  const refused = await call(capped.token); // answered while the database is still away
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get('x-should-retry'), 'true');
  assert.equal(refused.headers.get('retry-after'), '1');
  const body = (await refused.json()) as { error: { code: string } };
  assert.equal(body.error.code, 'budget_store_unavailable');

  await relay.up();
  const answered = await during;
  assert.equal(answered.status, 200);
  await answered.json();
  const turnId = answered.headers.get('svc-request-id');
  const types = await reader.kysely
    .selectFrom('events')
    .select('type')
    .where('turn_id', '=', turnId)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    types.map((r) => r.type),
    ['route.decided', 'llm.call_started', 'llm.call_completed', 'turn.completed'],
  );
  // reconnected: the capped key is admitted again (its pool reconnects on the next request)
  let again = await call(capped.token);
  while (again.status === 503) {
    await again.arrayBuffer();
    again = await call(capped.token);
  }
  assert.equal(again.status, 200);
  await again.arrayBuffer();
  assert.equal(gw.child.exitCode, null, 'the gateway is still running');

  // the network of every connection dies silently: PostgreSQL ends their sessions (the presence lock
  // is released), the gateway hears nothing; it notices and holds its presence lock again
  const holder = await waitForPresence(reader.kysely, () => true);
  relay.sever();
  const zombie = await waitForPresence(reader.kysely, (pid) => pid !== holder);
  assert.equal(gw.child.exitCode, null, 'the gateway is still running');

  // the network dies silently for both ends: PostgreSQL keeps the old session, and its presence lock, until
  // it notices (hours, by TCP keepalive). The gateway listens again at once and takes the lock once that
  // session is gone, instead of waiting on it: each wait timed out and reconnected, with no LISTEN
  // meanwhile, and left a server process queued on the lock
  relay.partition();
  const stillHeld = /presence lock is still held by this process's previous session connection/;
  const failed = /cannot reconnect the PostgreSQL session connection/;
  const stderr = () => gw.output().stderr;
  while (!stillHeld.test(stderr()) && !failed.test(stderr())) await new Promise((r) => setTimeout(r, 50));
  assert.doesNotMatch(stderr(), failed);
  relay.heal();
  await waitForPresence(reader.kysely, (pid) => pid !== zombie);
  assert.doesNotMatch(stderr(), failed);
});

test('a stop during a start step the database leaves unanswered is acted on at once', {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const cluster = await startGatewayReplicas(url, 0); // the store and a key, no gateway yet
  t.after(() => cluster.stop());
  // VACUUM FULL events (README: a maintenance-window step) locks out the start's scan of today's spend
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const holding = cluster.store.kysely.transaction().execute(async (trx) => {
    await sql`LOCK TABLE events IN ACCESS EXCLUSIVE MODE`.execute(trx);
    locked();
    await released;
  });
  await isLocked;
  try {
    await stopDuringTheLockedStart(cluster.env, cluster.store.kysely);
  } finally {
    release();
    await holding;
  }
});

async function stopDuringTheLockedStart(env: NodeJS.ProcessEnv, db: Kysely<Database>): Promise<void> {
  const child = spawn(process.execPath, [SVC_BIN, 'gateway', '--port', String(await freePort())], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = collectOutput(child, 20_000); // then killed: the old start waited out the lock
  // the gateway's start waits for the lock
  for (;;) {
    const r = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE application_name = 'svc' AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
        AND datname = current_database()`.execute(db);
    if ((r.rows[0]?.n ?? 0) > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGTERM');
  const r = await exited;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /gateway stopped during its start/);
  assert.doesNotMatch(r.stderr, /^svc: /m, 'no error sentence');
}

/** The pid of the backend holding a gateway's presence lock, once one that `accept`s holds it. */
async function waitForPresence(db: Kysely<Database>, accept: (pid: number) => boolean): Promise<number> {
  for (;;) {
    const r = await sql<{ pid: number }>`
      SELECT pid FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = ${ADVISORY_LOCKS.presence}::int::oid
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(db);
    const pid = r.rows[0]?.pid;
    if (pid !== undefined && accept(pid)) return pid;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

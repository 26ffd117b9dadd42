/**
 * A PostgreSQL restart or failover takes seconds: events written meanwhile wait for the server to come
 * back instead of being dropped after the few quick attempts that cover lock contention, so a gateway
 * that answers during the outage (its final byte waits for `committed`) loses none of those answers'
 * events. The outage is real: the store talks to PostgreSQL through a TCP relay that is cut and restored.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { createBus } from '#src/events/bus.ts';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import type { Logger } from '#src/lib/log.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { openStore } from '#src/store/open.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';
import { databaseBehindRelay } from '../../helpers/tcp-relay.ts';

const postgres = useTestPostgres();

test('events written while PostgreSQL is unreachable are committed once it is back', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const { direct, relay, viaRelay } = await databaseBehindRelay(t, postgres);

  const warnings: Array<{ msg: string; fields: Record<string, unknown> }> = [];
  const log: Logger = {
    ...silentLogger,
    warn: (msg: string, fields?: Record<string, unknown>) =>
      void warnings.push({ msg, fields: fields ?? {} }),
  };
  const store = await openStore({ engine: 'postgres', url: viaRelay.toString() }, { log });
  const writer = createTraceWriter({ store, log });
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  bus.subscribe(writer.subscriber);
  t.after(async () => {
    await writer.stop();
    await store.close();
  });
  await bus.publish({ type: 'turn.completed', payload: { before: true } }).committed;

  relay.down();
  const published = bus.publish({ type: 'turn.completed', payload: { during: true } });
  let settled = false;
  void published.committed.then(() => {
    settled = true;
  });
  // more failed attempts than lock contention gets, then the server comes back
  const retried = () =>
    warnings.some((w) => w.msg.startsWith('trace writer') && Number(w.fields.attempt) >= 9);
  while (!retried() && writer.stats.dropped === 0) await new Promise((r) => setTimeout(r, 50));
  assert.equal(writer.stats.dropped, 0, 'the event was given up while the server was away');
  assert.equal(settled, false);
  await relay.up();
  await published.committed;
  assert.equal(writer.stats.dropped, 0);

  const reader = await openStore({ engine: 'postgres', url: direct.toString() }, { readOnly: true });
  t.after(() => reader.close());
  const row = await reader.kysely
    .selectFrom('events')
    .select('payload')
    .where('id', '=', published.event.id)
    .executeTakeFirst();
  assert.deepEqual(JSON.parse(row?.payload ?? 'null'), { during: true });
});

test('a stop during the outage gives up after the quick attempts instead of waiting it out', {
  timeout: 30_000, // the outage window is 60 s: a stop that waited it out fails here
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const { relay, viaRelay } = await databaseBehindRelay(t, postgres);
  const store = await openStore({ engine: 'postgres', url: viaRelay.toString() });
  t.after(() => store.close());
  const writer = createTraceWriter({ store, log: silentLogger });
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  bus.subscribe(writer.subscriber);
  relay.down();
  const published = bus.publish({ type: 'turn.completed', payload: {} });
  await writer.stop();
  await published.committed;
  assert.ok(writer.stats.dropped >= 1, 'the event was neither written nor dropped'); // (and the subscriber notice)
});

test('a commit PostgreSQL leaves unanswered (paused, black-holed) fails at its bound and is retried, not waited on forever', {
  timeout: 30_000, // without a bound the commit waits for the server, and this test with it
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const { direct, relay, viaRelay } = await databaseBehindRelay(t, postgres);
  const warnings: string[] = [];
  const log: Logger = {
    ...silentLogger,
    warn: (msg: string, fields?: Record<string, unknown>) =>
      void warnings.push(`${msg}: ${String(fields?.message)}`),
  };
  // SVC_DATABASE_TIMEOUT_MS=300: a connection attempt or statement unanswered for 300 ms is an outage
  const store = await openStore({ engine: 'postgres', url: viaRelay.toString(), timeoutMs: 300 }, { log });
  const writer = createTraceWriter({ store, log });
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  bus.subscribe(writer.subscriber);
  t.after(async () => {
    await writer.stop();
    await store.close();
  });
  await bus.publish({ type: 'turn.completed', payload: { before: true } }).committed; // a pooled connection

  relay.freeze(); // the server hangs: connections stay open, nothing is answered
  const published = bus.publish({ type: 'turn.completed', payload: { during: true } });
  const timedOut = () => warnings.some((w) => /trace writer commit failed; retrying: .*timeout/i.test(w));
  while (!timedOut()) await new Promise((r) => setTimeout(r, 50));
  relay.thaw();
  await published.committed;
  assert.equal(writer.stats.dropped, 0, 'the event was dropped');

  const reader = await openStore({ engine: 'postgres', url: direct.toString() }, { readOnly: true });
  t.after(() => reader.close());
  const rows = await reader.kysely
    .selectFrom('events')
    .select('id')
    .where('id', '=', published.event.id)
    .execute();
  assert.equal(rows.length, 1);
  // the connection that waited was dropped: the store goes on answering at once
  await bus.publish({ type: 'turn.completed', payload: { after: true } }).committed;
});

test("a failover's read-only phase (the old primary, now a standby, still answering) is waited out on a new connection", {
  timeout: 30_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = new URL(await postgres.createDatabase());
  const database = url.pathname.slice(1);
  const admin = new pg.Client({ connectionString: postgres.url() });
  await admin.connect();
  t.after(() => admin.end());
  const warnings: string[] = [];
  const log: Logger = {
    ...silentLogger,
    warn: (msg: string, fields?: Record<string, unknown>) =>
      void warnings.push(`${msg}: ${String(fields?.message)}`),
  };
  const store = await openStore({ engine: 'postgres', url: url.toString() }, { log });
  // bounded below the 60 s default: a writer that kept its read-only connection fails here, not by timeout
  const writer = createTraceWriter({ store, log, outageMs: 10_000 });
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  bus.subscribe(writer.subscriber);
  t.after(async () => {
    await writer.stop();
    await store.close();
  });
  await bus.publish({ type: 'turn.completed', payload: { before: true } }).committed;

  // the writer's connections end and new ones reach a server that takes no writes (as through a DNS name
  // still naming the demoted primary)
  await admin.query(`ALTER DATABASE "${database}" SET default_transaction_read_only = on`);
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database]);
  const published = bus.publish({ type: 'turn.completed', payload: { during: true } });
  const refused = () => warnings.some((w) => /trace writer commit failed; retrying: .*read-only/.test(w));
  while (!refused() && writer.stats.dropped === 0) await new Promise((r) => setTimeout(r, 20));
  assert.equal(writer.stats.dropped, 0, 'the event was dropped at the first read-only refusal');
  // the promoted primary: connections made from now on write again
  await admin.query(`ALTER DATABASE "${database}" RESET default_transaction_read_only`);
  await published.committed;
  assert.equal(writer.stats.dropped, 0, 'the event was dropped: the retries kept the read-only connection');
  const rows = await store.kysely
    .selectFrom('events')
    .select('id')
    .where('id', '=', published.event.id)
    .execute();
  assert.equal(rows.length, 1);
});

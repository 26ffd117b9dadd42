/**
 * A PostgreSQL server that ends a connection svc holds (a restart's "terminating connection due to
 * administrator command", a failover, an idle-session kill) must cost at most the work on that
 * connection, never the process: a pooled connection checked out between two queries (inside a
 * transaction, a budget admission) gets the server's FATAL message with no query to hand it to.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { openStore } from '#src/store/open.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();

test('a connection ended by the server while checked out fails its work, the store carries on', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const store = await openStore({ engine: 'postgres', url });
  t.after(() => store.close());
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  t.after(() => admin.end());
  const crashes: unknown[] = [];
  const onUncaught = (err: unknown) => void crashes.push(err);
  process.on('uncaughtException', onUncaught);
  t.after(() => process.off('uncaughtException', onUncaught));

  const inTransaction = store.kysely.transaction().execute(async (trx) => {
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
    // the server ends this backend while the transaction waits between two statements
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    for (;;) {
      const left = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0].pid]);
      if (left.rowCount === 0) break;
    }
    await new Promise((res) => setTimeout(res, 200)); // the FATAL message reaches the client
    await sql`SELECT 1`.execute(trx);
  });
  const failure = await inTransaction.then(
    () => assert.fail('the transaction on an ended connection succeeded'),
    (err: unknown) => err,
  );
  assert.deepEqual(crashes, [], 'the lost connection crashed the process');
  // a lost connection: the work is worth trying again on another one (trace batches, settlements)
  assert.equal(store.dialect.isRetryable(failure), true, String(failure));
  // the broken connection left the pool: the next statements run on healthy ones
  for (let i = 0; i < 12; i++) {
    const r = await sql<{ one: number }>`SELECT 1 AS one`.execute(store.kysely);
    assert.equal(r.rows[0].one, 1);
  }
});

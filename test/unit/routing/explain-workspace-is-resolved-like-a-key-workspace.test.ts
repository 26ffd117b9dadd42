/**
 * `svc routing explain --workspace` names the key's or session's workspace, which the structural fingerprint
 * hashes. Keys (issue-key) and sessions (POST /sessions) store it resolved (`/srv/app/` and `/srv//app` are
 * `/srv/app`; issue-key reads a relative one against the current folder), so explain must resolve it the same
 * way, or a trailing slash shows another fingerprint and "nothing learned" where the server matches.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { describeExplainRequest, explainRoute } from '#src/routing/pattern/explain.ts';
import { fingerprintRequest } from '#src/routing/pattern/fingerprint.ts';
import { DAY_US } from '#src/routing/pattern/router.ts';
import { queryPatternStats } from '#src/routing/pattern/stats-query.ts';
import { buildPatternTable } from '#src/routing/pattern/table.ts';
import { openStore } from '#src/store/open.ts';
import { HAIKU, NOW_US, seedRequests, times } from './pattern-seed.ts';
import { ALL_ADAPTERS, policyOf, registry } from './routing-fixture.ts';

const TEXT = 'fix the failing test in billing';
const ask = (workspace: string) =>
  describeExplainRequest({ model: 'auto', text: TEXT, tools: [], images: false, workspace });

test('explain resolves --workspace as keys and sessions store it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-explain-workspace-'));
  const store = await openStore(join(dir, 'svc.db'));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const stored = ask('/srv/app');
  const print = fingerprintRequest(stored, TEXT);
  seedRequests(store.db, times(25, { print, model: HAIKU, cost: '0.001000' }));
  const policy = policyOf('pattern: { enabled: true }');
  const rows = queryPatternStats(store.db, {
    sinceUs: NOW_US - policy.pattern.lookbackDays * DAY_US,
    version: 'structural',
    minSamples: 1,
  });
  const table = buildPatternTable(rows, policy.pattern, NOW_US);

  for (const given of ['/srv/app/', '/srv//app', '/srv/x/../app']) {
    const facts = ask(given);
    assert.equal(facts.workspacePath, '/srv/app', given);
    const { decision, lines } = explainRoute({
      facts,
      ctx: { policy, registry, availableAdapters: ALL_ADAPTERS },
      table,
      tableSource: 'test',
    });
    assert.equal(decision.fingerprint.structural, print.structural, given);
    assert.deepEqual(decision.chain[3], { policy: 'pattern', model: HAIKU, verdict: 'accepted' }, given);
    assert.match(lines[0], /workspace=\/srv\/app /, given);
  }
  // a relative path is read against the current folder, as issue-key --workspace reads it
  assert.equal(ask('app').workspacePath, resolve('app'));
});

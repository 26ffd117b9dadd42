/**
 * README §Routing policy: `candidates: []` means "every model in models.yaml". The trace store remembers
 * models that have since left models.yaml (the lookback window is 14 days by default); slot 4 must choose
 * the cheapest model that worked among the registered ones, not propose a model no longer configured (which
 * the chain then rejects with model_not_configured, losing the learned choice for the whole window).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseModelRegistry } from '#src/models/registry.ts';
import { resolveRoute } from '#src/routing/chain.ts';
import { compilePolicyText } from '#src/routing/compile-policy.ts';
import type { RouteFacts } from '#src/routing/facts.ts';
import { explainRoute } from '#src/routing/pattern/explain.ts';
import { fingerprintRequest } from '#src/routing/pattern/fingerprint.ts';
import { DAY_US } from '#src/routing/pattern/router.ts';
import { queryPatternStats } from '#src/routing/pattern/stats-query.ts';
import { buildPatternTable, lookupPattern } from '#src/routing/pattern/table.ts';
import { openStore } from '#src/store/open.ts';
import { HAIKU, MINI, NOW_US, SONNET, seedRequests, times } from './pattern-seed.ts';
import { ALL_ADAPTERS, facts } from './routing-fixture.ts';

/** models.yaml after the operator dropped haiku: mini and sonnet stay. */
const REGISTRY = parseModelRegistry(
  `pricing_version: test-1
models:
  - id: anthropic:claude-sonnet-4-5
    tier: balanced
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }
    prices: { input: 3, output: 15 }
  - id: openai:gpt-5-mini
    tier: fast
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 400000, max_output_tokens: 128000 }
    prices: { input: 0.25, output: 2 }
`,
  'models.yaml',
);

test('slot 4 chooses among the models of models.yaml, not a cheaper one that left it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pattern-registered-'));
  const store = await openStore(join(dir, 'svc.db'));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const f: RouteFacts = { ...facts({ workspacePath: '/srv/app', messageCount: 1 }), text: 'fix the test' };
  const print = fingerprintRequest(f, 'fix the test');
  // learned while haiku was configured: haiku cheapest, mini next, both always worked
  seedRequests(store.db, [
    ...times(25, { print, model: HAIKU, cost: '0.001000' }),
    ...times(25, { print, model: MINI, cost: '0.002000', keyId: 'gk_other' }),
    ...times(1, { print, model: SONNET, cost: '0.003000', keyId: 'gk_third' }),
  ]);
  const check = compilePolicyText('pattern: { enabled: true }', 'routing.yaml', { registry: REGISTRY });
  assert.deepEqual(check.errors, []);
  const policy = check.policy!;
  const rows = queryPatternStats(store.db, {
    sinceUs: NOW_US - policy.pattern.lookbackDays * DAY_US,
    version: 'structural',
    minSamples: policy.pattern.minSamples,
  });
  const table = buildPatternTable(rows, policy.pattern, NOW_US);
  const ctx = { policy, registry: REGISTRY, availableAdapters: ALL_ADAPTERS };
  const decision = resolveRoute(f, { ...ctx, hooks: { pattern: (_f, p) => lookupPattern(table, p) } });
  assert.deepEqual(decision.chain[3], { policy: 'pattern', model: MINI, verdict: 'accepted' });
  assert.equal(decision.pattern?.model, MINI);

  // svc routing explain says why haiku is out; it reads every (key, model), one request or more
  const all = queryPatternStats(store.db, { sinceUs: 0, version: 'structural', minSamples: 1 });
  const shown = buildPatternTable(all, policy.pattern, NOW_US);
  const { lines } = explainRoute({ facts: f, ctx, table: shown, tableSource: 'test' });
  const text = lines.join('\n');
  assert.match(
    text,
    new RegExp(
      `${HAIKU}: 100\\.0 % success over 25 requests, median \\$0\\.001000 \\(not in models\\.yaml\\)`,
    ),
  );
  assert.match(text, new RegExp(`${MINI}: .*← chosen`));
  assert.match(text, /matched s1:\S+ → openai:gpt-5-mini \(25 requests, 100\.0 % success/);
  assert.ok(
    lines.includes(
      `               ${SONNET}: 100.0 % success over 1 request, median $0.003000 (below min_samples 20)`,
    ),
    text,
  ); // not "1 requests"
  assert.ok(lines.includes('table        1 key (test)'), text); // one key, not "1 keys"
});

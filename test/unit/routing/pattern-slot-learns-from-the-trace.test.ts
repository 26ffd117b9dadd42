import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '#src/lib/log.ts';
import { resolveRoute } from '#src/routing/chain.ts';
import type { RouteFacts } from '#src/routing/facts.ts';
import { fingerprintRequest } from '#src/routing/pattern/fingerprint.ts';
import { createPatternRouter, DAY_US } from '#src/routing/pattern/router.ts';
import { queryPatternStats, RETRY_WINDOW_US } from '#src/routing/pattern/stats-query.ts';
import { createWorkerStatsReader } from '#src/routing/pattern/stats-worker.ts';
import { buildPatternTable, lookupPattern as lookup } from '#src/routing/pattern/table.ts';
import { openStore, type SqliteStore as Store } from '#src/store/open.ts';
import { busyTimeoutOf } from '#src/store/sqlite.ts';
import { HAIKU, MINI, NOW_US, SONNET, seedRequests, times } from './pattern-seed.ts';
import { ALL_ADAPTERS, facts, policyOf, registry } from './routing-fixture.ts';

const factsA = facts({
  workspacePath: '/srv/app',
  hasTools: true,
  toolNames: ['read_file'],
  messageCount: 1,
});
const factsB = facts({
  workspacePath: '/srv/app',
  hasImages: true,
  estimatedInputTokens: 1600,
  messageCount: 1,
});
const factsC = facts({ workspacePath: '/srv/docs', messageCount: 3 });
const printA = fingerprintRequest(factsA, 'fix the failing test in auth');
const printB = fingerprintRequest(factsB, 'what is in this picture');
const printC = fingerprintRequest(factsC, 'summarize the release notes');

async function tempStore(t: { after: (fn: () => unknown) => void }): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pattern-'));
  const store = await openStore(join(dir, 'svc.db'));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

const ENABLED = 'pattern: { enabled: true }';

/** Routes `f` the way a server would with a table built from `store` now. */
function routeWith(store: Store, yaml: string, f: RouteFacts, text = '') {
  const policy = policyOf(yaml);
  const cfg = policy.pattern;
  const rows = queryPatternStats(store.db, {
    sinceUs: NOW_US - cfg.lookbackDays * DAY_US,
    version: cfg.fingerprint,
    minSamples: cfg.minSamples,
  });
  const table = buildPatternTable(rows, cfg, NOW_US);
  const hooks = {
    pattern: (_f: RouteFacts, print: ReturnType<typeof fingerprintRequest>) => lookup(table, print),
  };
  return resolveRoute({ ...f, text }, { policy, registry, availableAdapters: ALL_ADAPTERS, hooks });
}

test('slot 4 picks the cheap model where it worked and not where it failed', async (t) => {
  const store = await tempStore(t);
  seedRequests(store.db, [
    ...times(25, { print: printA, model: HAIKU, cost: '0.001000' }),
    // other clients (keys) sent the same kinds of request to sonnet: not retries of the haiku ones
    ...times(25, { print: printA, model: SONNET, cost: '0.012000', keyId: 'gk_other' }),
    ...times(15, { print: printB, model: HAIKU, cost: '0.002000' }),
    ...times(10, { print: printB, model: HAIKU, cost: '0.002000', outcome: 'call_failed' }),
    ...times(25, { print: printB, model: SONNET, cost: '0.020000', keyId: 'gk_other' }),
  ]);
  const a = routeWith(store, ENABLED, factsA, 'fix the failing test in auth');
  assert.deepEqual(a.chain[3], { policy: 'pattern', model: HAIKU, verdict: 'accepted' });
  assert.deepEqual(a.pattern, {
    model: HAIKU,
    fingerprint: printA.structural,
    fingerprint_version: 'structural',
    samples: 25,
    success_rate: 1,
    median_cost_usd: '0.001000',
  });
  const b = routeWith(store, ENABLED, factsB);
  assert.equal(
    b.chain[3].model,
    SONNET,
    'haiku failed 10 of 25 image requests: the next cheapest that worked',
  );
  assert.equal(b.pattern?.success_rate, 1);
  assert.equal(
    routeWith(store, 'pattern: { enabled: true, candidates: [haiku] }', factsB).chain[3].verdict,
    'no_match',
  );
});

test('below min_samples, below min_success_rate, disabled, or unseen: no_match', async (t) => {
  const store = await tempStore(t);
  seedRequests(store.db, [
    ...times(19, { print: printA, model: HAIKU }),
    ...times(19, { print: printC, model: HAIKU }),
    { print: printC, model: HAIKU, outcome: 'call_failed' },
  ]);
  assert.equal(routeWith(store, ENABLED, factsA).chain[3].verdict, 'no_match', '19 < 20 samples');
  assert.equal(routeWith(store, 'pattern: { enabled: true, min_samples: 19 }', factsA).chain[3].model, HAIKU);
  // 19 of 20 = 0.95 passes the default rate; 0.96 does not
  assert.equal(routeWith(store, ENABLED, factsC).chain[3].model, HAIKU);
  assert.equal(
    routeWith(store, 'pattern: { enabled: true, min_success_rate: 0.96 }', factsC).chain[3].verdict,
    'no_match',
  );
  assert.equal(
    routeWith(store, 'pattern: { enabled: false, min_samples: 1 }', factsA).chain[3].verdict,
    'no_match',
  );
  assert.equal(routeWith(store, ENABLED, factsB).chain[3].verdict, 'no_match', 'never seen');
});

test('each failure signal of the issue makes a request a failure; a request without a call is no sample', async (t) => {
  const store = await tempStore(t);
  seedRequests(store.db, [
    ...times(3, { print: printA, model: HAIKU }),
    { print: printA, model: HAIKU, outcome: 'call_failed' },
    { print: printA, model: HAIKU, outcome: 'call_cancelled' },
    { print: printA, model: HAIKU, outcome: 'turn_cancelled', sessionId: 'sess_1' },
    { print: printA, model: HAIKU, outcome: 'error_code' },
    { print: printA, model: HAIKU, outcome: 'other_model' },
    { print: printA, model: HAIKU, outcome: 'no_call' },
  ]);
  const rows = queryPatternStats(store.db, { sinceUs: 0, version: 'structural', minSamples: 1 });
  assert.deepEqual(
    rows.map((r) => [r.model, r.samples, r.successes]),
    [[HAIKU, 8, 3]],
  );
});

test('a turn still running is no sample yet; one a killed process left open is a failure', async (t) => {
  // a rebuild while an agent turn ran its tools (first call completed, no turn end) counted the turn as
  // failed, so a model that worked every time dropped below min_success_rate while sessions were busy
  const store = await tempStore(t);
  seedRequests(store.db, [
    ...times(3, { print: printA, model: HAIKU, sessionId: 'sess_busy' }),
    ...times(2, { print: printA, model: HAIKU, sessionId: 'sess_busy', outcome: 'in_flight' }),
    { print: printA, model: HAIKU, sessionId: 'sess_killed', outcome: 'gap' },
  ]);
  const rows = queryPatternStats(store.db, { sinceUs: 0, version: 'structural', minSamples: 1 });
  assert.deepEqual(
    rows.map((r) => [r.model, r.samples, r.successes]),
    [[HAIKU, 4, 3]],
  );
});

test('a retry of the same request on another model fails the first; other follow-ups do not', async (t) => {
  const store = await tempStore(t);
  const at = NOW_US - DAY_US;
  const sameSketchMoreMessages = { ...printA, messages: printA.messages + 2 };
  seedRequests(store.db, [
    // gateway: the same key sends the same request to sonnet 10 minutes later → haiku's request failed
    { print: printA, model: HAIKU, keyId: 'gk_a', atUs: at },
    { print: printA, model: SONNET, keyId: 'gk_a', atUs: at + 600_000_000 },
    // another key, a retry on the same model, a later conversation step, or past the window: not retries
    { print: printA, model: HAIKU, keyId: 'gk_b', atUs: at + 1_000_000_000 },
    { print: printA, model: HAIKU, keyId: 'gk_c', atUs: at + 1_000_000_100 },
    { print: printA, model: HAIKU, keyId: 'gk_b', atUs: at + 1_100_000_000 },
    { print: printA, model: HAIKU, keyId: 'gk_d', atUs: at + 1_200_000_000 },
    { print: sameSketchMoreMessages, model: SONNET, keyId: 'gk_d', atUs: at + 1_200_000_100 },
    { print: printA, model: HAIKU, keyId: 'gk_e', atUs: at + 1_300_000_000 },
    { print: printA, model: SONNET, keyId: 'gk_e', atUs: at + 1_300_000_000 + RETRY_WINDOW_US + 1 },
    // two requests, then a retry of the second on another model: only the second failed
    { print: printA, model: HAIKU, keyId: 'gk_f', atUs: at + 1_400_000_000 },
    { print: printA, model: HAIKU, keyId: 'gk_f', atUs: at + 1_400_000_100 },
    { print: printA, model: SONNET, keyId: 'gk_f', atUs: at + 1_400_000_200 },
    // agent: the next turn of the session asks the same thing of another model → the first turn failed
    { print: printA, model: HAIKU, sessionId: 'sess_x', atUs: at + 2_000_000_000 },
    { print: sameSketchMoreMessages, model: SONNET, sessionId: 'sess_x', atUs: at + 2_100_000_000 },
  ]);
  const rows = queryPatternStats(store.db, { sinceUs: 0, version: 'structural', minSamples: 1 });
  const haiku = rows.find((r) => r.model === HAIKU && r.key === printA.structural);
  assert.deepEqual(
    [haiku?.samples, haiku?.successes],
    [9, 6],
    'gk_a, the second gk_f and sess_x were retried',
  );
});

test('the lookback window bounds the history and the median cost is exact', async (t) => {
  const store = await tempStore(t);
  seedRequests(store.db, [
    ...times(20, { print: printA, model: MINI, cost: '0.000100', atUs: NOW_US - 15 * DAY_US }),
    { print: printA, model: HAIKU, cost: '0.003' },
    { print: printA, model: HAIKU, cost: '0.001' },
    { print: printA, model: HAIKU, cost: '0.0025' },
    { print: printA, model: HAIKU, cost: '0.004' },
    { print: printA, model: HAIKU, cost: '0.9', outcome: 'call_failed' },
  ]);
  const since = NOW_US - 14 * DAY_US;
  const rows = queryPatternStats(store.db, { sinceUs: since, version: 'structural', minSamples: 1 });
  assert.deepEqual(
    rows.map((r) => [r.model, r.samples, r.successes, r.median_low, r.median_high]),
    [[HAIKU, 5, 4, '0.0025', '0.003']],
  );
  const table = buildPatternTable(
    rows,
    policyOf('pattern: { enabled: true, min_samples: 4, min_success_rate: 0.8 }').pattern,
    NOW_US,
  );
  assert.equal(lookup(table, printA)?.median_cost_usd, '0.002750');
  const older = queryPatternStats(store.db, {
    sinceUs: NOW_US - 16 * DAY_US,
    version: 'structural',
    minSamples: 20,
  });
  assert.deepEqual(
    older.map((r) => r.model),
    [MINI],
  );
});

test('hybrid: near-duplicate prompts learn together, an unrelated prompt of the same structure does not match', async (t) => {
  const store = await tempStore(t);
  // 60 modules, each named once: a band holds the requests whose sketch agrees on it, so a pattern
  // whose prompts differ in one word of four fills each shared band with about 40 % of them
  seedRequests(store.db, [
    ...Array.from({ length: 60 }, (_, i) => ({
      print: fingerprintRequest(
        factsA,
        `fix the failing test in ${'abcdefghij'[i % 10]}${'klmnopqrst'[Math.floor(i / 10)]}zone`,
      ),
      model: HAIKU,
    })),
    ...times(28, {
      print: fingerprintRequest(factsA, 'design the database schema for multi tenancy'),
      model: SONNET,
    }),
  ]);
  const yaml = 'pattern: { enabled: true, fingerprint: hybrid }';
  const near = routeWith(store, yaml, factsA, 'Fix the failing test in notifications');
  assert.equal(near.chain[3].model, HAIKU);
  assert.equal(near.pattern?.fingerprint_version, 'hybrid');
  assert.match(near.pattern!.fingerprint, /^s1:[0-9a-f]{16}\/h1:\d+:[0-9a-f]{8}$/);
  assert.ok(near.pattern!.samples >= 20);
  assert.equal(routeWith(store, yaml, factsA, 'write a poem about the sea').chain[3].verdict, 'no_match');
  // structural lumps both kinds together: the cheapest model with enough samples is haiku at 100 %
  assert.equal(routeWith(store, ENABLED, factsA, 'write a poem about the sea').chain[3].model, HAIKU);
});

test('rows of another shape than svc writes are left out; the rest of the history is still learned', async (t) => {
  // one route.decided whose sketch was a string made every hybrid rebuild fail (malformed JSON), a band that
  // is no string a key of null, and a cost that is no decimal failed the table's median: slot 4 learned
  // nothing for the whole lookback window
  const store = await tempStore(t);
  const printText = fingerprintRequest(factsA, 'fix the failing test in auth');
  seedRequests(store.db, [
    ...times(20, { print: printText, model: HAIKU }),
    { print: { ...printText, sketch: 'h1:0:00000000' as unknown as string[] }, model: HAIKU },
    { print: { ...printText, sketch: [null, 7] as unknown as string[] }, model: HAIKU },
    ...times(20, { print: printC, model: HAIKU, cost: 'n/a' }),
  ]);
  for (const fingerprint of ['structural', 'hybrid']) {
    const yaml = `pattern: { enabled: true, fingerprint: ${fingerprint} }`;
    assert.equal(routeWith(store, yaml, factsA, 'fix the failing test in auth').chain[3].model, HAIKU);
    assert.equal(routeWith(store, yaml, factsC, 'summarize the release notes').chain[3].verdict, 'no_match');
  }
  const rows = queryPatternStats(store.db, { sinceUs: 0, version: 'structural', minSamples: 1 });
  const byKey = new Map(rows.map((r) => [r.key, [r.samples, r.successes, r.median_low]]));
  assert.deepEqual(byKey.get(printText.structural), [22, 22, '0.001000']);
  assert.deepEqual(byKey.get(printC.structural), [20, 20, null], 'a cost that is no decimal has no median');
});

test('the router rebuilds in the background, on reload, and serves lookups from the table in force', async (t) => {
  const store = await tempStore(t);
  seedRequests(store.db, times(20, { print: printA, model: HAIKU }));
  let yaml = 'pattern: { enabled: false }';
  const policy = {
    current: () => policyOf(yaml),
    listeners: [] as Array<() => void>,
    onReload(fn: () => void) {
      this.listeners.push(fn);
      return () => {};
    },
  };
  let reads = 0;
  const router = createPatternRouter({
    policy: policy as never,
    readStats: async (p) => {
      reads++;
      return queryPatternStats(store.db, p);
    },
    clock: { nowUs: () => NOW_US },
    log: silentLogger,
    refreshMs: 3_600_000,
  });
  t.after(() => router.stop());
  router.start();
  await router.refresh();
  assert.equal(reads, 0, 'disabled: nothing is read');
  assert.equal(router.hooks.pattern!(factsA, printA), null);
  yaml = ENABLED;
  for (const fn of policy.listeners) fn();
  await router.refresh();
  assert.ok(reads >= 1);
  assert.equal(router.hooks.pattern!(factsA, printA)?.model, HAIKU);
  assert.equal(router.table().entries.size, 1);
});

test('after a reload, the old table never chooses what the new pattern settings forbid, even before its rebuild', async (t) => {
  const store = await tempStore(t);
  seedRequests(store.db, times(20, { print: printA, model: HAIKU }));
  let yaml = ENABLED;
  const policy = {
    current: () => policyOf(yaml),
    listeners: [] as Array<() => void>,
    onReload(fn: () => void) {
      this.listeners.push(fn);
      return () => {};
    },
  };
  // once `hold` is set, a rebuild waits here until the test lets it go on
  let hold = false;
  let release: () => void = () => {};
  const router = createPatternRouter({
    policy: policy as never,
    readStats: async (p) => {
      if (hold) await new Promise<void>((r) => (release = r));
      return queryPatternStats(store.db, p);
    },
    clock: { nowUs: () => NOW_US },
    log: silentLogger,
    refreshMs: 3_600_000,
  });
  t.after(() => {
    hold = false;
    release();
    return router.stop();
  });
  router.start();
  await router.refresh();
  assert.equal(router.hooks.pattern!(factsA, printA)?.model, HAIKU);

  hold = true;
  const settings = [
    'pattern: { enabled: true, candidates: [balanced] }', // haiku is no candidate any more
    'pattern: { enabled: true, min_samples: 50 }', // 20 samples are too few now
    'pattern: { enabled: true, fingerprint: hybrid }', // the table holds structural keys
  ];
  for (const next of settings) {
    yaml = next;
    for (const fn of policy.listeners) fn();
    assert.equal(router.table().entries.size, 1, 'the rebuild has not ended');
    assert.equal(router.hooks.pattern!(factsA, printA), null, next);
  }
  yaml = ENABLED;
  assert.equal(router.hooks.pattern!(factsA, printA)?.model, HAIKU, 'allowed again: the table answers');
});

test('the rebuild worker reads the same statistics as the statement run in process, and stops on abort', async (t) => {
  const store = await tempStore(t);
  seedRequests(store.db, [
    ...times(20, { print: printA, model: HAIKU, cost: '0.0015' }),
    ...times(3, { print: printA, model: HAIKU, outcome: 'call_failed' }),
    ...times(21, { print: printC, model: SONNET, cost: '0.02' }),
  ]);
  const params = { sinceUs: 0, version: 'hybrid', minSamples: 1 } as const;
  const read = createWorkerStatsReader(store.path, busyTimeoutOf(store));
  const fromWorker = await read(params, new AbortController().signal);
  assert.ok(fromWorker.length > 0);
  assert.deepEqual(
    fromWorker.map((r) => ({ ...r })),
    queryPatternStats(store.db, params).map((r) => ({ ...r })),
  );
  const stop = new AbortController();
  stop.abort();
  await assert.rejects(read(params, stop.signal), { code: 'cancelled' });
});

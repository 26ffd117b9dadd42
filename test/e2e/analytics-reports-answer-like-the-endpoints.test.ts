/**
 * `svc analytics cost|cache|routing|reliability|sessions|savings|by-key|by-team` through the real
 * executable on a store file, no server: `--format json` prints exactly the envelope the HTTP endpoint
 * answers (same query functions, checked in-process on the same store), tables for people, and bad flags
 * exit 2 with one sentence.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  queryByKey,
  queryByTeam,
  queryCacheEffectiveness,
  queryCost,
  queryReliability,
  queryRouting,
  querySavings,
  querySessions,
} from '#src/analytics/index.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { openStore } from '#src/store/open.ts';
import { callEvent, routeEvent } from '../helpers/analytics-events.ts';
import { BASE_US, insertEvents, seqId } from '../helpers/event-rows.ts';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-reports-');
test.after(() => tmp.cleanup());
const env = isolatedEnv(tmp.dir);
const db = join(tmp.dir, 'svc.db');
const WINDOW = ['--from', '2026-01-01T00:00:00Z', '--to', '2026-01-08T00:00:00Z'];
const window = { startUs: BASE_US, endUs: BASE_US + 7 * 86_400_000_000 };
const ALL = { gatewayKey: null, user: null, team: null, includeWorkers: true };

test.before(async () => {
  const store = await openStore(db);
  insertEvents(store.db, 60, (i) =>
    i % 4 === 0
      ? routeEvent(seqId(i), {
          at: i * 3_600_000_000,
          chain: [{ policy: 'global_default', model: 'anthropic:claude-sonnet-4-5', verdict: 'accepted' }],
          winner: 0,
          chosen: 'anthropic:claude-sonnet-4-5',
        })
      : callEvent(seqId(i), {
          at: i * 3_600_000_000,
          model: i % 3 ? 'anthropic:claude-sonnet-4-5' : 'openai:gpt-5-mini',
          cost: `0.00${i}`,
          latency: 100 + i,
          key: i % 2 ? 'gk_a' : 'gk_b',
          user: `u${i % 5}`,
          team: i % 2 ? 't1' : null,
        }),
  );
  await store.close();
});

async function json(args: string[]) {
  const r = await runSvc(['analytics', ...args, '--db-path', db, '--format', 'json'], { env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('--format json prints the envelope with the data of the same query functions', async () => {
  const store = await openStore(db);
  const registry = loadModelRegistry(undefined);
  try {
    const k = store.kysely;
    const cases: Array<[string[], unknown]> = [
      [['cost', ...WINDOW], await queryCost(k, { window, groupBy: 'model', filters: ALL })],
      [
        ['cost', ...WINDOW, '--group-by', 'day', '--user', 'u1', '--include-workers', 'false'],
        await queryCost(k, {
          window,
          groupBy: 'day',
          filters: { ...ALL, user: 'u1', includeWorkers: false },
        }),
      ],
      [['cache', ...WINDOW], await queryCacheEffectiveness(k, window)],
      [['routing', ...WINDOW], await queryRouting(k, window)],
      [['reliability', ...WINDOW], await queryReliability(k, window)],
      [['savings', ...WINDOW], await querySavings(k, registry, { window, baseline: undefined })],
      [['by-key', ...WINDOW, '--gateway-key', 'gk_a'], await queryByKey(k, { window, gatewayKey: 'gk_a' })],
      [['by-team', ...WINDOW], await queryByTeam(k, { window, team: null })],
      [['sessions', '--order', 'cost'], await querySessions(k, { order: 'cost', limit: 25 })],
    ];
    for (const [args, data] of cases) {
      const answer = await json(args);
      assert.deepEqual(answer.data, data, args.join(' '));
      assert.equal(answer.current_pricing_version, registry.pricingVersion);
      assert.deepEqual(
        answer.window,
        args[0] === 'sessions'
          ? { start: null, end: null }
          : { start: '2026-01-01T00:00:00.000000Z', end: '2026-01-08T00:00:00.000000Z' },
      );
    }
  } finally {
    await store.close();
  }
});

test('the table view names the window and shows the rows', async () => {
  const r = await runSvc(['analytics', 'cost', ...WINDOW, '--group-by', 'provider', '--db-path', db], {
    env,
  });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(lines[0], /^window 2026-01-01T00:00:00\.000000Z \.\. 2026-01-08T00:00:00\.000000Z/);
  assert.match(lines[1], /^PROVIDER\s+COST_USD\s+INPUT_TOKENS/);
  assert.deepEqual(
    lines.slice(2).map((l) => l.split(/\s+/)[0]),
    ['anthropic', 'openai'],
  );
  const empty = await runSvc(
    [
      'analytics',
      'by-team',
      '--from',
      '9999-12-24T00:00:00Z',
      '--to',
      '9999-12-31T23:59:59.999999Z', // the last microsecond, which a double cannot hold (before: exit 2)
      '--db-path',
      db,
    ],
    { env },
  );
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stdout, /^window 9999-12-24T00:00:00\.000000Z \.\. 9999-12-31T23:59:59\.999999Z /);
  assert.match(empty.stdout, /no data in this window/);
  // the sessions list is not windowed, so its empty answer names no window
  const noSessions = await runSvc(['analytics', 'sessions', '--db-path', db], { env });
  assert.equal(noSessions.code, 0, noSessions.stderr);
  assert.equal(noSessions.stdout, 'pricing builtin-2025-11-01\nnone yet\n');
});

test('the savings table warns that savings_pct is overstated when calls used models missing from the price table', async () => {
  const models = join(tmp.dir, 'sonnet-only.yaml');
  writeFileSync(
    models,
    [
      'pricing_version: sonnet-only',
      'models:',
      '  - id: anthropic:claude-sonnet-4-5',
      '    tier: balanced',
      '    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }',
      '    prices: { input: 3, output: 15 }',
      '',
    ].join('\n'),
  );
  const missing = (await json(['savings', ...WINDOW, '--models', models])).data.rows_missing_from_price_table;
  assert.ok(missing > 1);
  const [unpriced, priced] = await Promise.all(
    [['--models', models], []].map((m) =>
      runSvc(['analytics', 'savings', ...WINDOW, ...m, '--db-path', db], { env }),
    ),
  );
  assert.equal(unpriced.code, 0, unpriced.stderr);
  assert.match(
    unpriced.stdout,
    new RegExp(
      `\\nwarning: ${missing} calls used models missing from the price table, so savings_pct is overstated\\.\\n$`,
    ),
  );
  assert.doesNotMatch(priced.stdout, /warning/);
});

test('the table writes small amounts as decimals (a call of a cheap model costs under $0.000001)', async () => {
  const tiny = join(tmp.dir, 'tiny.db');
  const store = await openStore(tiny);
  insertEvents(store.db, 2, (i) =>
    callEvent(seqId(i), { at: i * 1_000_000, model: 'openai:gpt-5-nano', cost: '0.00000025', key: 'gk_n' }),
  );
  await store.close();
  for (const report of [['cost'], ['cost', '--group-by', 'none'], ['by-key'], ['savings']]) {
    const r = await runSvc(['analytics', ...report, ...WINDOW, '--db-path', tiny], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /\de-\d/, `${report.join(' ')}:\n${r.stdout}`);
    if (report[0] !== 'savings') assert.match(r.stdout, /\s0\.0000005(\s|$)/m, r.stdout);
  }
});

test('json and tables write money to the last digit of its decimal sum, as the endpoints do', async () => {
  // 26 significant digits: a double would print 1234567.891234567 in both views
  const exact = join(tmp.dir, 'exact.db');
  const store = await openStore(exact);
  const costs = ['1234567.891234567', '0.000000000000000042'];
  insertEvents(store.db, 2, (i) =>
    callEvent(seqId(i), { at: i * 1_000_000, cost: costs[i], key: 'gk_x', user: 'u1', team: 't1' }),
  );
  await store.close();
  const SUM = '1234567.891234567000000042';
  for (const [report, field] of [
    [['cost', '--group-by', 'none'], 'cost_usd'],
    [['cost', '--group-by', 'user'], 'cost_usd'],
    [['by-key'], 'cost_usd'],
    [['by-team'], 'cost_usd'],
    [['savings'], 'actual_stamped_usd'],
  ] as const) {
    const args = ['analytics', ...report, ...WINDOW, '--db-path', exact];
    const json = await runSvc([...args, '--format', 'json'], { env });
    assert.equal(json.code, 0, json.stderr);
    assert.match(json.stdout, new RegExp(`"${field}": ${SUM.replace('.', '\\.')}[,\\n]`), report.join(' '));
    const table = await runSvc(args, { env });
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, new RegExp(`\\s${SUM.replace('.', '\\.')}(\\s|$)`, 'm'), table.stdout);
  }
});

test('the cost table names the null bucket, so it never reads as the id "-"', async () => {
  // "-" is a valid user, team and key id (^[A-Za-z0-9_-]{1,200}$); untagged traffic is another row
  const dash = join(tmp.dir, 'dash.db');
  const store = await openStore(dash);
  insertEvents(store.db, 2, (i) =>
    callEvent(seqId(i), {
      at: i * 1_000_000,
      cost: i === 0 ? '0.2' : '0.1',
      user: i === 0 ? '-' : null,
      team: i === 0 ? '-' : null,
      key: i === 0 ? '-' : null,
    }),
  );
  await store.close();
  for (const [groupBy, nullLabel] of [
    ['user', '(untagged)'],
    ['team', '(untagged)'],
    ['gateway_key', '(in-process)'],
  ]) {
    const r = await runSvc(['analytics', 'cost', ...WINDOW, '--group-by', groupBy, '--db-path', dash], {
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    const keys = r.stdout
      .trimEnd()
      .split('\n')
      .slice(2)
      .map((l) => l.split(/\s+/)[0]);
    assert.deepEqual(keys, ['-', nullLabel], r.stdout);
  }
});

test('the by-key table names the in-process inbound shape, so it never reads as an empty figure', async () => {
  // "-" is the tables' empty figure (the token cells of a shape row); an agent call's shape is null
  const shapes = join(tmp.dir, 'shapes.db');
  const store = await openStore(shapes);
  insertEvents(store.db, 2, (i) =>
    callEvent(seqId(i), {
      at: i * 1_000_000,
      cost: i === 0 ? '0.2' : '0.1',
      key: i === 0 ? 'gk_a' : null,
      shape: i === 0 ? 'openai' : null,
    }),
  );
  await store.close();
  const r = await runSvc(['analytics', 'by-key', ...WINDOW, '--db-path', shapes], { env });
  assert.equal(r.code, 0, r.stderr);
  const cells = r.stdout
    .trimEnd()
    .split('\n')
    .slice(2)
    .map((l) => l.split(/\s+/).slice(0, 2));
  assert.deepEqual(
    cells,
    [
      ['gk_a', '(all)'],
      ['gk_a', 'openai'],
      ['(in-process)', '(all)'],
      ['(in-process)', '(in-process)'],
    ],
    r.stdout,
  );
});

test('bad flags exit 2 with one sentence, before the store is opened; a missing store exits 1', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['cost', '--group-by', 'week'], /--group-by "week" is not one of model, provider/],
    [['cost', '--user', 'a b'], /--user filter "a b" is not valid/],
    [['sessions', '--limit', '0'], /--limit "0" is not a whole number from 1 to 500/],
    [['sessions', '--order', 'name'], /--order "name" is not one of cost, recency/],
    [['routing', '--from', 'yesterday'], /--from "yesterday" is not an ISO 8601 timestamp/],
    [['savings', '--baseline', 'openai:nope'], /--baseline "openai:nope" is not a priced model/],
    [['cost', '--format', 'xml'], /--format must be table or json/],
    [['cost', '--include-workers', 'maybe'], /--include-workers "maybe" is not true or false/],
    // a repeated flag is refused as the endpoint refuses user=a&user=b, never answered for the last one
    [['cost', '--user', 'u1', '--user', 'u2'], /--user is given 2 times; give it once/],
    [['cost', '--group-by=none', '--group-by', 'model'], /--group-by is given 2 times; give it once/],
    [['sessions', '--limit', '5', '--limit', '6'], /--limit is given 2 times; give it once/],
  ];
  // a flag is refused before the store is opened: a typo is the same usage error with no store at the path
  const nope = join(tmp.dir, 'nope.db');
  for (const [args, message] of cases) {
    const r = await runSvc(['analytics', ...args, '--db-path', nope], { env });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
  // a price table without a default baseline: the advice names the flag, not the HTTP parameter
  const models = join(tmp.dir, 'openai-only.yaml');
  writeFileSync(
    models,
    [
      'pricing_version: t',
      'models:',
      '  - id: openai:gpt-5-mini',
      '    tier: fast',
      '    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 400000, max_output_tokens: 128000 }',
      '    prices: { input: 0.25, output: 2 }',
      '',
    ].join('\n'),
  );
  const noDefault = await runSvc(['analytics', 'savings', '--models', models, '--db-path', nope], { env });
  assert.equal(noDefault.code, 2, noDefault.stderr);
  assert.match(
    noDefault.stderr,
    /no balanced model to compare against; pass --baseline with a priced model id\.$/m,
  );
  const missing = await runSvc(['analytics', 'cost', '--db-path', nope], { env });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /No trace store at/);
});

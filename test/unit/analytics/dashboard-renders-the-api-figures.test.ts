/**
 * The dashboard without a browser: the tabs rendered from the very answers the page fetches (through the
 * agent app) show the API's numbers (each figure's data-value), the callout exactly when one team passes
 * half the spend, negative savings with a minus sign and the missing-price warning, the chart's bars as
 * the API's buckets, an empty state that says how to get data in, and escaped store strings. The shell
 * at /dashboard/ loads only its own script.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { costSeries } from '#src/analytics/dashboard/charts.ts';
import { savingsView } from '#src/analytics/dashboard/model.ts';
import {
  renderActivityTab,
  renderCostTab,
  renderIdentityTab,
  renderTurn,
} from '#src/analytics/dashboard/render.ts';
import type { SqliteStore } from '#src/store/open.ts';
import { callEvent, seed } from '../../helpers/analytics-events.ts';
import { createAgentAppFixture } from '../agent/agent-app-fixture.ts';

const W1 = { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' };
const W2 = { from: '2026-01-02T00:00:00Z', to: '2026-01-03T00:00:00Z' };
const H = 3_600_000_000;

async function setup(t: { after: (fn: () => unknown) => void }) {
  const fx = await createAgentAppFixture(t);
  seed(fx.store as SqliteStore, [
    // day 1: team t1 spends $6 of $10 (60 %), two models without prices (one with a hostile name)
    (id) =>
      callEvent(id, { at: 1 * H, cost: '6', team: 't1', user: 'alice', key: 'gk_a', input: 100, output: 10 }),
    (id) =>
      callEvent(id, {
        at: 2 * H,
        cost: '3',
        team: 't2',
        user: 'bob',
        key: 'gk_b',
        model: 'openrouter:gone/model',
        input: 100,
      }),
    (id) =>
      callEvent(id, {
        at: 3 * H,
        cost: '1',
        model: 'openai:<img src=x onerror=alert(1)>',
        key: null,
        shape: null,
        session: 'sess_1',
      }),
    // day 2: two teams at exactly half each
    (id) => callEvent(id, { at: 25 * H, cost: '2', team: 't1', key: 'gk_a' }),
    (id) => callEvent(id, { at: 26 * H, cost: '2', team: 't2', key: 'gk_b' }),
  ]);
  const api = async (path: string, params: Record<string, string>) => {
    const res = await fx.call('GET', `/analytics/${path}?${new URLSearchParams(params)}`);
    assert.equal(res.status, 200, path);
    return ((await res.json()) as any).data;
  };
  return { fx, api };
}

const values = (html: string, field: string) =>
  [...html.matchAll(new RegExp(`data-field="${field}"[^>]*data-value="([^"]*)"`, 'g'))].map((m) =>
    Number(m[1]),
  );

test('the Cost tab shows the API figures, negative savings with a minus sign, and the warning', async (t) => {
  const { api } = await setup(t);
  const [total, byModel, savings, cache, days] = await Promise.all([
    api('cost', { ...W1, group_by: 'none' }),
    api('cost', { ...W1, group_by: 'model' }),
    api('savings', { ...W1, baseline: 'openai:gpt-5-nano' }),
    api('cache_effectiveness', W1),
    api('cost', { ...W1, group_by: 'hour' }),
  ]);
  const html = renderCostTab({ total, byModel, savings, cache });
  assert.deepEqual(values(html, 'total-cost'), [total.cost_usd]);
  assert.deepEqual(values(html, 'total-calls'), [3]);
  assert.deepEqual(
    values(html, 'model-cost'),
    byModel.map((r: any) => r.cost_usd),
  );
  assert.ok(savings.savings_usd < 0, 'the nano baseline is cheaper than what ran');
  assert.deepEqual(values(html, 'savings-usd'), [savings.savings_usd]);
  assert.match(html, /data-field="savings-usd"[^>]*>-\$/);
  assert.match(html, /data-field="savings-warning">⚠ 2 calls used models missing from the price table/);
  assert.ok(!html.includes('<img src=x'), 'store strings are escaped');
  assert.ok(html.includes('&#60;img src=x onerror=alert(1)&#62;'));
  assert.deepEqual(
    costSeries(days, 'hour').values,
    days.map((r: any) => r.cost_usd),
  );
  assert.deepEqual(costSeries(days, 'hour').labels, ['01-01 01:00', '01-01 02:00', '01-01 03:00']);
  // over the window asked for, every hour has its bar: $0 where the API answered no bucket
  const filled = costSeries(days, 'hour', W1);
  assert.equal(filled.labels.length, 24);
  assert.deepEqual(filled.labels.slice(0, 5), [
    '01-01 00:00',
    '01-01 01:00',
    '01-01 02:00',
    '01-01 03:00',
    '01-01 04:00',
  ]);
  assert.deepEqual(filled.values.slice(0, 5), [0, ...days.map((r: any) => r.cost_usd), 0]);
  assert.equal(
    filled.values.reduce((a, b) => a + b),
    10,
  );
  const week = costSeries(
    [{ bucket: '2026-01-02', cost_usd: 2 } as any, { bucket: '2026-01-05', cost_usd: 3 } as any],
    'day',
    { from: '2025-12-31T18:30:00.000Z', to: '2026-01-06T12:00:00.000Z' },
  );
  assert.deepEqual(week.labels, [
    '2025-12-31',
    '2026-01-01',
    '2026-01-02',
    '2026-01-03',
    '2026-01-04',
    '2026-01-05',
    '2026-01-06',
  ]);
  assert.deepEqual(week.values, [0, 0, 2, 0, 0, 3, 0]);
});

test('the identity tab calls out the team, developer and key above half the spend, and nobody at exactly half', async (t) => {
  const { api } = await setup(t);
  for (const [w, expected] of [
    [
      W1,
      [
        { kind: 'team', value: 0.6 },
        { kind: 'user', value: 0.6 },
        { kind: 'key', value: 0.6 },
      ],
    ],
    [W2, []],
  ] as const) {
    const [total, teams, users, keys] = await Promise.all([
      api('cost', { ...w, group_by: 'none' }),
      api('by_team', w),
      api('cost', { ...w, group_by: 'user' }),
      api('by_key', w),
    ]);
    const html = renderIdentityTab({ total: total.cost_usd, teams, users, keys });
    const callouts = [...html.matchAll(/data-field="callout" data-kind="(\w+)" data-value="([^"]+)"/g)];
    assert.deepEqual(
      callouts.map((m) => ({ kind: m[1], value: Number(m[2]) })),
      expected,
      w.from,
    );
    assert.deepEqual(
      values(html, 'team-cost'),
      teams.map((x: any) => x.cost_usd),
    );
    assert.deepEqual(
      values(html, 'key-cost'),
      keys.map((x: any) => x.cost_usd),
    );
  }
});

test('a tile or warning about one call says "1 call", not "1 calls"', () => {
  const spend = { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, cache_creation_input_tokens: 0 };
  const html = renderIdentityTab({
    total: 3,
    teams: [{ team_id: 't1', cost_usd: 1, call_count: 1, user_count: 1, by_user: [], ...spend }],
    users: [{ user_id: 'u1', cost_usd: 3, call_count: 2, avg_latency_ms: 1, ...spend }],
    keys: [{ gateway_key_id: 'gk_a', cost_usd: 1, call_count: 1, by_inbound_shape: [], ...spend }],
  });
  const subs = [...html.matchAll(/of spend · ([^<]+)<\/p>/g)].map((m) => m[1]);
  assert.deepEqual(subs, ['1 call', '2 calls', '1 call']);
  const one = savingsView({
    savings_usd: 1,
    savings_pct: 0.5,
    baseline_model: 'anthropic:claude-sonnet-4-5',
    rows_missing_from_price_table: 1,
  });
  assert.match(one.warning ?? '', /^1 call used models missing from the price table/);
});

test('a called-out share just above half never reads as 50.0%', () => {
  const spend = { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, cache_creation_input_tokens: 0 };
  const team = (team_id: string, cost_usd: number) => ({
    team_id,
    cost_usd,
    call_count: 2,
    user_count: 0,
    by_user: [],
    ...spend,
  });
  const html = renderIdentityTab({
    total: 10,
    teams: [team('t1', 5.004), team('t2', 4.996)],
    users: [],
    keys: [],
  });
  assert.match(html, /Top team <strong>t1<\/strong> accounts for 50\.04% of spend/);
  assert.deepEqual(
    [...html.matchAll(/([\d.]+%) of spend · /g)].map((m) => m[1]),
    ['50.04%', '49.96%'],
  );
});

test('an empty window says how to get data in; Activity renders sessions, routing and a turn', async (t) => {
  const { api, fx } = await setup(t);
  const empty = { from: '2025-01-01T00:00:00Z', to: '2025-01-02T00:00:00Z' };
  const [total, byModel, savings, cache] = await Promise.all([
    api('cost', { ...empty, group_by: 'none' }),
    api('cost', { ...empty, group_by: 'model' }),
    api('savings', empty),
    api('cache_effectiveness', empty),
  ]);
  const html = renderCostTab({ total, byModel, savings, cache });
  assert.match(html, /data-field="empty"/);
  assert.match(html, /Point an SDK at the gateway/);
  assert.match(html, /ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:8422/);
  const [sessions, reliability, routing] = await Promise.all([
    api('sessions', { order: 'recency', limit: '25' }),
    api('reliability', W1),
    api('routing', W1),
  ]);
  const activity = renderActivityTab({ sessions, reliability, routing });
  assert.match(activity, /No agent sessions yet/);
  assert.match(activity, /id="turn-form"/);
  assert.deepEqual(values(activity, 'policy-wins').length, 7);
  const turnId = (fx.store as SqliteStore).db
    .prepare('SELECT turn_id FROM events ORDER BY id LIMIT 1')
    .get() as {
    turn_id: string;
  };
  const turn = await api(`turns/${turnId.turn_id}`, {});
  assert.match(renderTurn(turn), /data-field="in-flight">in flight</);
});

test('/dashboard/ is the shell with its own script only, under a strict content security policy', async (t) => {
  const { fx } = await setup(t);
  const res = await fx.call('GET', '/dashboard/');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'; .*connect-src 'self'/);
  const html = await res.text();
  assert.deepEqual(
    [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]),
    ['app.js'],
  );
  assert.doesNotMatch(html, /https?:\/\//, 'nothing from elsewhere: the page works offline');
  for (const tab of ['Cost', 'Activity', 'Spend by identity'])
    assert.match(html, new RegExp(`role="tab"[^>]*>${tab}<`));
  for (const preset of ['today', '7d', '30d', 'custom'])
    assert.match(html, new RegExp(`data-preset="${preset}"`));
  const redirect = await fx.call('GET', '/dashboard');
  assert.equal(redirect.status, 301);
  assert.equal(redirect.headers.get('location'), '/dashboard/');
});

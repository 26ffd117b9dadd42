/**
 * The dashboard in a real browser: headless Chromium (Debian's) opens /dashboard/ on the real `svc serve`
 * over a seeded store and is used as a person would: the 7-day window on load, a custom window typed in
 * the browser's time zone (Asia/Kolkata here) and sent as UTC, the three tabs, the turn drill-down. The
 * figures on the page are the numbers the same /analytics requests answer, the callout shows only above
 * half the spend, negative savings carry a minus sign, an empty store says how to get data in, and no
 * console error or failed request happens on the way.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type AgentServer, startAgentServer } from '../helpers/agent-server.ts';
import { callEvent, HOUR_US } from '../helpers/analytics-events.ts';
import { chromiumSkipReason, launchChromium, recordProblems } from '../helpers/browser.ts';
import { BASE_US, type SeedEvent, seedStore, seqId } from '../helpers/event-rows.ts';
import { makeTempDir } from '../helpers/svc.ts';

const skip = chromiumSkipReason();
const ZONE = 'Asia/Kolkata'; // UTC+05:30: local midnight is not UTC midnight
/** 2026-01-01 and 2026-01-02 (UTC days) typed as local times in ZONE. */
const DAY1 = { from: '2026-01-01T05:30', to: '2026-01-02T05:30', utcFrom: '2026-01-01T00:00:00.000Z' };
const DAY2 = { from: '2026-01-02T05:30', to: '2026-01-03T05:30', utcFrom: '2026-01-02T00:00:00.000Z' };
const M = 1_000_000;

/** Known events: two fixed UTC days and two calls from minutes ago (the 7-day window on load). */
function events(nowUs: number): SeedEvent[] {
  const at = (h: number) => h * HOUR_US;
  const ago = (us: number, e: SeedEvent): SeedEvent => ({ ...e, timestamp_us: nowUs - us });
  const turn =
    (type: string, h: number) =>
    (id: string): SeedEvent => ({
      id,
      timestamp_us: BASE_US + at(h),
      type,
      actor: 'agent',
      session_id: 'sess_1',
      turn_id: 'turn_drill',
      payload: {},
    });
  const list: Array<(id: string) => SeedEvent> = [
    // day 1: $10; team t1 takes 60 %. Re-priced: opus $15 against sonnet's $3 → savings -$12 (-400 %)
    (id) =>
      callEvent(id, {
        at: at(1),
        cost: '6',
        team: 't1',
        user: 'alice',
        key: 'gk_01M88AZXPQ400ZY3CDJAP36CTC',
        model: 'anthropic:claude-opus-4-1',
        input: M,
        output: 0,
      }),
    (id) =>
      callEvent(id, {
        at: at(2),
        cost: '3',
        team: 't2',
        user: 'bob',
        key: 'gk_b',
        model: 'openrouter:gone/model',
        input: 0,
        output: 0,
      }),
    turn('turn.started', 2.5),
    (id) =>
      callEvent(id, {
        at: at(3),
        cost: '1',
        key: null,
        shape: null,
        session: 'sess_1',
        turn: 'turn_drill',
        input: 0,
        output: 0,
      }),
    turn('turn.completed', 3.5),
    // day 2: t1 and t2 at exactly half each
    (id) => callEvent(id, { at: at(25), cost: '2', team: 't1', key: 'gk_01M88AZXPQ400ZY3CDJAP36CTC' }),
    (id) => callEvent(id, { at: at(26), cost: '2', team: 't2', key: 'gk_b' }),
    // minutes ago: $1.50; haiku re-priced at $1 against sonnet's $3 → savings +$2 (66.7 %)
    (id) =>
      ago(
        300_000_000,
        callEvent(id, {
          at: 0,
          cost: '1',
          team: 't3',
          user: 'carol',
          key: 'gk_c',
          model: 'anthropic:claude-haiku-4-5',
          input: M,
          output: 0,
        }),
      ),
    (id) =>
      ago(240_000_000, callEvent(id, { at: 0, cost: '0.5', team: 't3', key: 'gk_c', input: 0, output: 0 })),
  ];
  return list.map((make, i) => make(seqId(i)));
}

type Scope = { after: (fn: () => unknown) => void };

/**
 * The tests share one browser (each gets its own context) and, when they read the same seeded store with
 * the default settings, one server: the dashboard only reads. Both are closed after the file.
 */
const cleanups: Array<() => unknown> = [];
const browserCleanups: Array<() => unknown> = [];
after(async () => {
  // the browser goes first, so no connection of its is open when a server stops
  for (const fn of browserCleanups) await fn();
  for (const fn of cleanups.reverse()) await fn();
});
const fileScope: Scope = { after: (fn) => void cleanups.push(fn) };
let sharedBrowser: Promise<Browser> | undefined;
let sharedSeeded: Promise<AgentServer> | undefined;

/** `svc serve` over a new store, seeded with `events` or empty. */
async function startDashboardServer(t: Scope, seeded: boolean, env: Record<string, string>) {
  const tmp = makeTempDir('svc-pages-');
  t.after(() => tmp.cleanup());
  const list = seeded ? events(Date.now() * 1000) : [];
  await seedStore(join(tmp.dir, 'svc.db'), list.length, (i) => list[i]);
  return startAgentServer(t, { home: tmp.dir, env });
}

async function serveDashboard(
  t: Scope,
  seeded: boolean,
  env: Record<string, string> = {},
  opts: { clock?: boolean } = {},
) {
  sharedBrowser ??= launchChromium({ after: (fn) => void browserCleanups.push(fn) });
  const browser = await sharedBrowser;
  let server: AgentServer;
  if (seeded && Object.keys(env).length === 0) {
    sharedSeeded ??= startDashboardServer(fileScope, true, {});
    server = await sharedSeeded;
  } else {
    server = await startDashboardServer(t, seeded, env);
  }
  const context = await browser.newContext({ timezoneId: ZONE, locale: 'en-US' });
  t.after(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems = recordProblems(page);
  const asked: URL[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/analytics/')) asked.push(url);
  });
  // the page's clock, moved by the test (page.clock.fastForward) to stand for time passing
  if (opts.clock) await page.clock.install({ time: new Date() });
  /** What the server answers to the page's latest request of `path` (with that group_by), fetched anew. */
  const sameAnswer = async (path: string, groupBy?: string) => {
    const url = asked.findLast(
      (u) =>
        u.pathname === `/analytics/${path}` &&
        (groupBy === undefined || u.searchParams.get('group_by') === groupBy),
    );
    assert.ok(url, `the page asked for /analytics/${path}`);
    const res = await fetch(`${server.url}${url.pathname}${url.search}`);
    assert.equal(res.status, 200, url.href);
    return { url, data: ((await res.json()) as any).data };
  };
  await page.goto(`${server.url}/dashboard/`);
  return { page, problems, sameAnswer };
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();
const texts = (page: Page, selector: string) => page.locator(selector).allInnerTexts();
const value = async (page: Page, selector: string) =>
  Number(await page.locator(selector).getAttribute('data-value'));
const values = async (page: Page, selector: string) =>
  (await page.locator(selector).evaluateAll((els) => els.map((e) => e.getAttribute('data-value')))).map(
    Number,
  );

async function customWindow(page: Page, w: { from: string; to: string }) {
  await page.getByRole('button', { name: 'Custom' }).click();
  await page.locator('#custom input[name="from"]').fill(w.from);
  await page.locator('#custom input[name="to"]').fill(w.to);
  await page.getByRole('button', { name: 'Apply' }).click();
}

test('the Cost tab shows the API figures for the 7-day window and a custom window sent as UTC', {
  skip,
}, async (t) => {
  const { page, problems, sameAnswer } = await serveDashboard(t, true);
  // on load: the last 7 days hold only the two recent calls
  await page.locator('[data-field="total-cost"][data-value="1.5"]').waitFor();
  const total = await sameAnswer('cost', 'none');
  assert.equal(total.data.cost_usd, 1.5);
  assert.equal(await text(page, '[data-field="total-cost"]'), '$1.50');
  assert.equal(await text(page, '[data-field="total-calls"]'), String(total.data.call_count));
  const savings = await sameAnswer('savings');
  assert.deepEqual([savings.data.savings_usd, savings.data.savings_pct], [2, 2 / 3]);
  assert.equal(await text(page, '[data-field="savings-usd"]'), '$2.00');
  assert.equal(await text(page, '[data-field="savings-pct"]'), '66.7% of the baseline');
  // the baseline is a case-sensitive model id (?baseline= takes it as written): the heading style keeps it
  const heading = await text(page, '.tile:has([data-field="savings-usd"]) h3');
  assert.ok(heading.endsWith(` ${savings.data.baseline_model}`), heading);
  assert.equal(await page.locator('.tile.negative').count(), 0, 'positive savings are not shown as a loss');
  assert.equal(await page.locator('[data-field="savings-warning"]').count(), 0);

  // a custom window typed in local time reaches the API as the UTC day
  await customWindow(page, DAY1);
  await page.locator('[data-field="savings-warning"]').waitFor();
  const day = await sameAnswer('cost', 'none');
  assert.equal(day.url.searchParams.get('from'), DAY1.utcFrom);
  assert.deepEqual([day.data.cost_usd, day.data.call_count], [10, 3]);
  assert.equal(await text(page, '[data-field="total-cost"]'), '$10.00');
  assert.equal(await text(page, '[data-field="total-calls"]'), '3');
  // the tiles' headline figures read alike: the call count as large as the spend beside it
  const fontSize = (selector: string) =>
    page
      .locator(selector)
      .evaluate((e) => (e.ownerDocument.defaultView as any).getComputedStyle(e).fontSize as string);
  assert.equal(await fontSize('[data-field="total-calls"]'), await fontSize('[data-field="total-cost"]'));
  const byModel = await sameAnswer('cost', 'model');
  assert.deepEqual(
    await values(page, '[data-field="model-cost"]'),
    byModel.data.map((r: any) => r.cost_usd),
  );
  assert.deepEqual(await texts(page, '[data-field="model-cost"]'), ['$6.00', '$3.00', '$1.00']);
  // a table's money reads at the size of its row, not as a tile's headline figure
  assert.deepEqual(
    await page
      .locator('[data-field="model-cost"]')
      .first()
      .evaluate((e) => {
        const view = e.ownerDocument.defaultView as any;
        return [view.getComputedStyle(e).fontSize, view.getComputedStyle(e.parentElement).fontSize];
      }),
    ['14px', '14px'],
  );
  const loss = await sameAnswer('savings');
  assert.deepEqual([loss.data.savings_usd, loss.data.savings_pct], [-12, -4]);
  assert.equal(await value(page, '[data-field="savings-usd"]'), loss.data.savings_usd);
  assert.equal(
    await text(page, '[data-field="savings-usd"]'),
    '-$12.00',
    'negative savings carry a minus sign',
  );
  assert.equal(await text(page, '[data-field="savings-pct"]'), '-400.0% of the baseline');
  assert.equal(await page.locator('.tile.negative [data-field="savings-usd"]').count(), 1, 'shown as a loss');
  assert.match(
    await text(page, '[data-field="savings-warning"]'),
    /1 call used models missing from the price table/,
  );
  // the chart is drawn from the hourly buckets of that UTC day
  const hours = await sameAnswer('cost', 'hour');
  assert.deepEqual(
    hours.data.map((r: any) => [r.bucket, r.cost_usd]),
    [
      ['2026-01-01T01', 6],
      ['2026-01-01T02', 3],
      ['2026-01-01T03', 1],
    ],
  );
  const box = await page.locator('#cost-chart').boundingBox();
  assert.ok(box && box.width > 100 && box.height > 100, 'the chart has room on the page');
  assert.deepEqual(problems, []);
});

test('a preset window ends when a tab asks, not when the page was loaded', { skip }, async (t) => {
  const { page, problems, sameAnswer } = await serveDashboard(t, true, {}, { clock: true });
  await page.locator('[data-field="total-cost"]').waitFor();
  const loaded = Date.parse((await sameAnswer('cost', 'none')).url.searchParams.get('to') ?? '');
  // two hours on the page later, Activity asks up to that moment, so calls made meanwhile count
  await page.clock.fastForward('02:00:00');
  await page.getByRole('tab', { name: 'Activity' }).click();
  await page.locator('#turn-form').waitFor();
  const routing = await sameAnswer('routing');
  assert.ok(Date.parse(routing.url.searchParams.get('to') ?? '') >= loaded + 2 * 3_600_000, routing.url.href);
  assert.deepEqual(problems, []);
});

test('Spend by identity calls out the top team, developer and key only above half the spend', {
  skip,
}, async (t) => {
  const { page, problems, sameAnswer } = await serveDashboard(t, true);
  await page.locator('[data-field="total-cost"]').waitFor();
  await customWindow(page, DAY1);
  await page.locator('[data-field="savings-warning"]').waitFor();
  await page.getByRole('tab', { name: 'Spend by identity' }).click();
  await page.locator('[data-field="callout"]').first().waitFor();
  assert.equal(
    await page.getByRole('tab', { name: 'Spend by identity' }).getAttribute('aria-selected'),
    'true',
  );
  assert.equal(await page.getByRole('tab', { name: 'Cost' }).getAttribute('aria-selected'), 'false');
  // one callout per kind, each in its own section: t1, alice and her key each take 60 %
  assert.deepEqual(await texts(page, '[data-field="callout"]'), [
    'Top team t1 accounts for 60.0% of spend in this window.',
    'Top developer alice accounts for 60.0% of spend in this window.',
    'Top key gk_01M88AZXPQ400ZY3CDJAP36CTC accounts for 60.0% of spend in this window.',
  ]);
  for (const [kind, title] of [
    ['team', 'Teams'],
    ['user', 'Developers'],
    ['key', 'Gateway keys'],
  ])
    assert.equal(
      await page
        .locator('section', { has: page.getByRole('heading', { name: title }) })
        .locator(`[data-field="callout"][data-kind="${kind}"]`)
        .count(),
      1,
      `the ${kind} callout is in the ${title} section`,
    );
  const teams = await sameAnswer('by_team');
  assert.deepEqual(
    await values(page, '[data-field="team-cost"]'),
    teams.data.map((r: any) => r.cost_usd),
  );
  assert.deepEqual(await texts(page, '[data-field="team-cost"]'), ['$6.00', '$3.00', '$1.00']);
  const keys = await sameAnswer('by_key');
  assert.deepEqual(
    await values(page, '[data-field="key-cost"]'),
    keys.data.map((r: any) => r.cost_usd),
  );
  assert.match(await text(page, '.tile[data-kind="team"][data-id="t1"]'), /60\.0% of spend · 1 call$/);
  // ids are case-sensitive: a tile shows the id as the API and the filters spell it, inside its tile
  for (const kind of ['team', 'user', 'key']) {
    for (const tile of await page.locator(`.tile[data-kind="${kind}"][data-id]:not([data-id=""])`).all()) {
      const id = (await tile.getAttribute('data-id')) ?? '';
      assert.equal(await tile.locator('h3').innerText(), id, `${kind} tile ${id}`);
      const [h3, box] = await Promise.all([
        tile.locator('h3').evaluate((e) => e.scrollWidth),
        tile.boundingBox(),
      ]);
      assert.ok(box && h3 <= box.width, `${kind} tile ${id} fits its tile`);
    }
  }

  // the next UTC day: t1 and t2 at exactly half each, so nobody is called out
  await customWindow(page, DAY2);
  await page.locator('[data-field="team-cost"][data-value="2"]').first().waitFor();
  assert.equal((await sameAnswer('by_team')).url.searchParams.get('from'), DAY2.utcFrom);
  assert.deepEqual(await texts(page, '[data-field="team-cost"]'), ['$2.00', '$2.00']);
  assert.equal(await page.locator('[data-field="callout"]').count(), 0, 'exactly half is no callout');
  assert.deepEqual(problems, []);
});

test('Activity shows routing and reliability from the API and opens a turn', { skip }, async (t) => {
  const { page, problems, sameAnswer } = await serveDashboard(t, true);
  await page.locator('[data-field="total-cost"]').waitFor();
  await customWindow(page, DAY1);
  await page.locator('[data-field="savings-warning"]').waitFor();
  await page.getByRole('tab', { name: 'Activity' }).click();
  await page.locator('#turn-form').waitFor();
  assert.equal(await page.getByRole('tab', { name: 'Activity' }).getAttribute('aria-selected'), 'true');
  const routing = await sameAnswer('routing');
  assert.equal(await value(page, '[data-field="hard-failures"]'), routing.data.hard_failures);
  assert.deepEqual(
    await values(page, '[data-field="policy-wins"]'),
    routing.data.wins_by_policy.map((w: any) => w.count),
  );
  assert.equal(routing.data.wins_by_policy.length, 7, 'every slot, zeros included');
  const reliability = await sameAnswer('reliability');
  const sampled = reliability.data.latency_ms_by_model.map((l: any) => String(l.sample_size));
  assert.ok(sampled.length > 0);
  for (const n of sampled) assert.ok((await text(page, 'main')).includes(n));

  // the drill-down: a turn id pasted into the form opens the turn's events in order
  await page.getByLabel('Turn id').fill('turn_drill');
  await page.getByRole('button', { name: 'Open' }).click();
  await page.locator('#turn-detail .turn').waitFor();
  const turn = (await (
    await fetch(`${new URL(page.url()).origin}/analytics/turns/turn_drill`)
  ).json()) as any;
  assert.equal(await text(page, '[data-field="in-flight"]'), turn.data.in_flight ? 'in flight' : 'finished');
  assert.equal(turn.data.in_flight, false);
  assert.deepEqual(
    await page.locator('#turn-detail tbody tr td:nth-child(2)').allInnerTexts(),
    turn.data.events.map((e: any) => e.type),
  );
  assert.deepEqual(
    turn.data.events.map((e: any) => e.type),
    ['turn.started', 'llm.call_completed', 'turn.completed'],
  );
  assert.match(await text(page, '#turn-detail'), /turn_drill\s+in sess_1/);

  // and back to Cost: the tabs switch both ways
  await page.getByRole('tab', { name: 'Cost' }).click();
  await page.locator('[data-field="total-cost"][data-value="10"]').waitFor();
  assert.equal(await page.locator('#turn-form').count(), 0);
  assert.deepEqual(problems, []);
});

test('a slow or failing API: the page says it is loading, then what went wrong, never stale figures', {
  skip,
}, async (t) => {
  const { page, problems } = await serveDashboard(t, true);
  await page.locator('[data-field="total-cost"][data-value="1.5"]').waitFor();
  const error = page.locator('#content .error');

  // a slow answer: the Activity tab shows it is loading, not the Cost tab's figures under its name
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    void page.route('**/analytics/sessions?*', async (route) => {
      resolve();
      await new Promise<void>((r) => {
        release = r;
      });
      // then a proxy's error page, not JSON: its status is the message, not a JSON parse error
      await route.fulfill({ status: 502, contentType: 'text/html', body: '<html>Bad Gateway</html>' });
    });
  });
  await page.getByRole('tab', { name: 'Activity' }).click();
  await held;
  assert.equal(await text(page, '#content'), 'Loading…');
  assert.equal(await page.locator('[data-field="total-cost"]').count(), 0);
  release();
  await error.waitFor();
  assert.equal(
    await text(page, '#content .error'),
    'Could not load: svc serve answered HTTP 502 Bad Gateway.',
  );

  // the server gone: one sentence that says so
  await page.unrouteAll();
  await page.route('**/analytics/**', (route) => route.abort('connectionrefused'));
  await page.getByRole('tab', { name: 'Cost' }).click();
  await page.getByText(/did not answer/).waitFor();
  assert.match(
    await text(page, '#content .error'),
    /^Could not load: svc serve did not answer; is it running\?/,
  );

  // only the chart's answer fails: the figures stay, the chart's place says why
  await page.unrouteAll();
  await page.route(/group_by=(day|hour)/, (route) =>
    route.fulfill({
      status: 503,
      contentType: 'application/json',
      body: JSON.stringify({ error: { code: 'store_unavailable', message: 'The store did not answer.' } }),
    }),
  );
  await page.getByRole('button', { name: '30 days' }).click();
  await page.locator('.chart .error').waitFor();
  assert.equal(await text(page, '.chart .error'), 'The store did not answer.');
  assert.equal(await value(page, '[data-field="total-cost"]'), 1.5);
  assert.deepEqual(
    problems.filter((p) => !/HTTP 50[23]|status of 50[23]|ERR_CONNECTION_REFUSED/.test(p)),
    [],
  );
});

test('an empty store says how to get data in, on every tab', { skip }, async (t) => {
  const { page, problems } = await serveDashboard(t, false);
  await page.locator('[data-field="empty"]').waitFor();
  assert.match(await text(page, '[data-field="empty"]'), /No model calls in this window/);
  assert.match(await text(page, '[data-field="empty"]'), /Point an SDK at the gateway/);
  assert.match(await text(page, '[data-field="empty"]'), /ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:8422/);
  await page.getByRole('tab', { name: 'Activity' }).click();
  await page.getByText('No agent sessions yet').waitFor();
  assert.match(await text(page, 'main'), /No completed calls in this window/);
  await page.getByRole('tab', { name: 'Spend by identity' }).click();
  await page.locator('[data-field="empty"]').waitFor();
  assert.equal(await page.locator('[data-field="callout"]').count(), 0);
  assert.deepEqual(problems, []);
});

test('a price table without a default baseline still shows the Cost tab, with savings marked unavailable', {
  skip,
}, async (t) => {
  // an OpenAI-only models.yaml: no balanced anthropic model, so GET /analytics/savings has no default baseline
  const dir = makeTempDir('svc-pages-models-');
  t.after(() => dir.cleanup());
  const models = join(dir.dir, 'models.yaml');
  writeFileSync(
    models,
    [
      'pricing_version: openai-only',
      'models:',
      '  - id: openai:gpt-5-mini',
      '    tier: fast',
      '    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 400000, max_output_tokens: 128000 }',
      '    prices: { input: 0.25, output: 2 }',
      '',
    ].join('\n'),
  );
  const { page, problems } = await serveDashboard(t, true, { SVC_MODELS: models });
  await page.locator('[data-field="total-cost"][data-value="1.5"]').waitFor();
  assert.match(await text(page, '[data-field="savings-error"]'), /no balanced model/);
  assert.ok((await page.locator('[data-field="model-cost"]').count()) > 0);
  assert.ok((await page.locator('#cost-chart').boundingBox())!.height > 0);
  // the one refused request is the savings figure the page then marks unavailable
  const others = problems.filter((p) => !/\/analytics\/savings|status of 400/.test(p));
  assert.deepEqual(others, []);
});

/**
 * The /analytics namespace mounted on the agent app (app.request): each endpoint answers the envelope
 * (window, current_pricing_version, data) with the version headers; the 7-day default window; every
 * error code of spec 3 and DECISIONS §5 at its status; the export's headers, lines and audit event after
 * the body drained (none when the reader leaves early); forget's answer, idempotence and audit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EventEnvelope } from '#src/events/envelope.ts';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { silentLogger } from '#src/lib/log.ts';
import { parseIsoUs } from '#src/lib/time.ts';
import type { SqliteStore } from '#src/store/open.ts';
import { callEvent, seed } from '../../helpers/analytics-events.ts';
import { insertEvents, seqId } from '../../helpers/event-rows.ts';
import { createAgentAppFixture } from '../agent/agent-app-fixture.ts';

const DAY_US = 86_400_000_000;

async function setup(t: { after: (fn: () => unknown) => void }) {
  const fixture = await createAgentAppFixture(t);
  const fx = { ...fixture, store: fixture.store as SqliteStore };
  const writer = createTraceWriter({ store: fx.store, log: silentLogger });
  fx.bus.subscribe(writer.subscriber);
  t.after(() => writer.stop());
  const audits: Array<{ type: string; actor: string; payload: Record<string, unknown> }> = [];
  fx.bus.subscribe({
    name: 'audit_recorder',
    types: ['analytics.user_exported', 'analytics.user_forgotten'],
    handle: (e: EventEnvelope) => audits.push(e as never),
  });
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fx.call('GET', path, undefined, headers);
    return { res, body: (await res.json()) as any };
  };
  return { fx, audits, get };
}

/** Recent traffic relative to now, so the default window holds it. */
function seedRecent(fx: Awaited<ReturnType<typeof setup>>['fx']) {
  const now = Date.now() * 1000;
  seed(fx.store, [
    (id) => ({
      ...callEvent(id, { at: 0, cost: '0.25', user: 'u1', key: 'gk_a', team: 't1' }),
      timestamp_us: now - DAY_US,
    }),
    (id) => ({
      ...callEvent(id, { at: 0, cost: '0.5', user: 'u1', key: 'gk_a', team: 't1' }),
      timestamp_us: now - 8 * DAY_US,
    }),
  ]);
}

test('every endpoint answers the envelope with version headers; the default window is the last 7 days', async (t) => {
  const { fx, get } = await setup(t);
  seedRecent(fx);
  for (const path of [
    '/analytics/cost',
    '/analytics/cache_effectiveness',
    '/analytics/routing',
    '/analytics/reliability',
    '/analytics/savings',
    '/analytics/by_key',
    '/analytics/by_team',
    '/analytics/sessions',
  ]) {
    const { res, body } = await get(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('svc-api-version'), '1.0', path);
    assert.ok(res.headers.get('svc-api-versions-supported'), path);
    assert.deepEqual(Object.keys(body), ['window', 'current_pricing_version', 'data'], path);
    assert.equal(body.current_pricing_version, 'builtin-2025-11-01', path);
  }
  const { body } = await get('/analytics/cost?group_by=none');
  const start = parseIsoUs(body.window.start)!;
  const end = parseIsoUs(body.window.end)!;
  assert.equal(end - start, 7 * DAY_US);
  assert.equal(body.data.cost_usd, 0.25, 'only the call of the last 7 days');
  assert.deepEqual((await get('/analytics/sessions')).body.window, { start: null, end: null });
  const explicit = await get(
    '/analytics/cost?group_by=none&from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00%2B02:00',
  );
  assert.deepEqual(explicit.body.window, {
    start: '2000-01-01T00:00:00.000000Z',
    end: '2099-12-31T22:00:00.000000Z',
  });
  assert.equal(explicit.body.data.cost_usd, 0.75);
  const toOnly = await get('/analytics/cost?group_by=none&to=2026-03-08T00:00:00Z');
  assert.equal(toOnly.body.window.start, '2026-03-01T00:00:00.000000Z');
});

test('money is written to the last digit of its decimal sum, beyond what a double holds', async (t) => {
  // 1234567.891234567 (the nano-dollar path) + 0.000000000000000042 (decimal_sum): 26 significant
  // digits, which JSON.stringify of a double would cut to 1234567.891234567
  const { fx } = await setup(t);
  const now = Date.now() * 1000;
  const call = (cost: string, key: string) => (id: string) => ({
    ...callEvent(id, { at: 0, cost, user: 'u1', key, team: 't1' }),
    timestamp_us: now - DAY_US,
  });
  seed(fx.store, [call('1234567.891234567', 'gk_a'), call('0.000000000000000042', 'gk_b')]);
  const SUM = '1234567.891234567000000042';
  const text = async (path: string) => {
    const res = await fx.call('GET', path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, path);
    return res.text();
  };
  const money = (body: string, field: string) =>
    [...body.matchAll(new RegExp(`"${field}":(-?[0-9.]+)[,}]`, 'g'))].map((m) => m[1]);
  assert.deepEqual(money(await text('/analytics/cost?group_by=none'), 'cost_usd'), [SUM]);
  assert.deepEqual(money(await text('/analytics/cost?group_by=user'), 'cost_usd'), [SUM]);
  assert.deepEqual(money(await text('/analytics/cost?group_by=day'), 'cost_usd'), [SUM]);
  // team and its one user carry the sum; the keys each carry their own call, at both levels
  assert.deepEqual(money(await text('/analytics/by_team'), 'cost_usd'), [SUM, SUM]);
  assert.deepEqual(money(await text('/analytics/by_key'), 'cost_usd'), [
    '1234567.891234567',
    '1234567.891234567',
    '0.000000000000000042',
    '0.000000000000000042',
  ]);
  assert.deepEqual(money(await text('/analytics/savings'), 'actual_stamped_usd'), [SUM]);
  // a client reading doubles gets the same number as before
  const parsed = JSON.parse(await text('/analytics/cost?group_by=none'));
  assert.equal(parsed.data.cost_usd, 1234567.891234567);
});

test('every error code is answered at its status in the service error body', async (t) => {
  const { fx, get } = await setup(t);
  const cases: Array<[string, number, string]> = [
    ['/analytics/cost?group_by=week', 400, 'invalid_group_by'],
    ['/analytics/cost?group_by=model;DROP', 400, 'invalid_group_by'],
    ['/analytics/sessions?order=name', 400, 'invalid_order'],
    ['/analytics/cost?gateway_key=gk%25', 400, 'invalid_gateway_key'],
    ['/analytics/by_key?gateway_key=', 400, 'invalid_gateway_key'],
    [`/analytics/cost?user=${'u'.repeat(201)}`, 400, 'invalid_user'],
    ["/analytics/cost?team=t'1", 400, 'invalid_team'],
    ['/analytics/by_team?team=a.b', 400, 'invalid_team'],
    ['/analytics/user/u%20x/export', 400, 'invalid_user_id'],
    ['/analytics/user//export', 400, 'invalid_user_id'],
    ['/analytics/savings?baseline=openai:nope', 400, 'unknown_baseline_model'],
    ['/analytics/turns/turn_missing', 404, 'turn_not_found'],
    ['/analytics/cost?from=yesterday', 400, 'invalid_window'],
    ['/analytics/routing?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 400, 'invalid_window'],
    ['/analytics/user/u1/export?to=2026-02-30T00:00:00Z', 400, 'invalid_window'],
    ['/analytics/sessions?limit=0', 400, 'invalid_limit'],
    ['/analytics/sessions?limit=501', 400, 'invalid_limit'],
    ['/analytics/sessions?limit=ten', 400, 'invalid_limit'],
    ['/analytics/cost?include_workers=maybe', 400, 'validation_error'],
    // a parameter given twice is not answered for one of its values
    ['/analytics/cost?user=a&user=b', 400, 'invalid_user'],
    ['/analytics/by_team?team=a&team=a', 400, 'invalid_team'],
    ['/analytics/cost?group_by=model&group_by=day', 400, 'invalid_group_by'],
    ['/analytics/reliability?from=2026-01-01T00:00:00Z&from=2026-01-02T00:00:00Z', 400, 'invalid_window'],
    ['/analytics/sessions?limit=5&limit=10', 400, 'invalid_limit'],
    ['/analytics/user/u1/export?to=2026-02-01T00:00:00Z&to=2026-03-01T00:00:00Z', 400, 'invalid_window'],
  ];
  for (const [path, status, code] of cases) {
    const { res, body } = await get(path);
    assert.equal(res.status, status, path);
    assert.equal(body.error.code, code, path);
    assert.equal(typeof body.error.message, 'string', path);
  }
  const forget = await fx.call('POST', '/analytics/user/u$1/forget');
  assert.equal(forget.status, 400);
  assert.equal(((await forget.json()) as any).error.code, 'invalid_user_id');
  const forgetNobody = await fx.call('POST', '/analytics/user//forget');
  assert.equal(forgetNobody.status, 400);
  assert.equal(((await forgetNobody.json()) as any).error.code, 'invalid_user_id');
  const old = await get('/analytics/cost', { 'svc-api-version': '0.9' });
  assert.equal(old.res.status, 410);
  assert.equal(old.body.error.code, 'version_unsupported');
  assert.equal((await get('/analytics/sessions?limit=500')).res.status, 200);
  // a parameter no endpoint reads may repeat, as any unknown parameter is ignored
  assert.equal((await get('/analytics/cost?utm=a&utm=b')).res.status, 200);
});

test('the export streams JSON lines with its headers and is audited once the body drained', async (t) => {
  const { fx, audits } = await setup(t);
  insertEvents(fx.store.db, 1200, (i) => ({
    ...callEvent(seqId(i), { at: i, user: i % 3 === 0 ? 'u_x' : 'u_other', cost: '0.000100' }),
  }));
  const res = await fx.call('GET', '/analytics/user/u_x/export');
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/jsonl');
  assert.equal(res.headers.get('content-disposition'), 'attachment; filename=u_x.jsonl');
  assert.equal(res.headers.get('x-svc-row-count'), '400');
  assert.equal(res.headers.get('svc-api-version'), '1.0');
  const text = await res.text();
  const lines = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(lines.length, 400);
  assert.ok(lines.every((l) => l.payload.user_id === 'u_x' && l.payload.cost_usd === '0.000100'));
  assert.deepEqual(Object.keys(lines[0]), [
    'id',
    'timestamp',
    'session_id',
    'turn_id',
    'parent_event_id',
    'type',
    'actor',
    'sensitivity',
    'payload',
  ]);
  const audit = await waitFor(() => audits.find((e) => e.type === 'analytics.user_exported'));
  assert.equal(audit.actor, 'user');
  assert.deepEqual(
    [audit.payload.user_id, audit.payload.row_count, audit.payload.byte_count],
    ['u_x', 400, Buffer.byteLength(text)],
  );
});

test('a reader that leaves early gets no audit event claiming a full export', async (t) => {
  const { fx, audits } = await setup(t);
  insertEvents(fx.store.db, 3000, (i) => callEvent(seqId(i), { at: i, user: 'u_big' }));
  const res = await fx.call('GET', '/analytics/user/u_big/export');
  const reader = res.body!.getReader();
  await reader.read();
  await reader.cancel();
  // a later export of another user drains and is audited; the cancelled one never is
  insertEvents(fx.store.db, 1, () => callEvent('01ZZZZ', { at: 1, user: 'u_small' }));
  await (await fx.call('GET', '/analytics/user/u_small/export')).text();
  await waitFor(() => audits.find((e) => e.payload.user_id === 'u_small'));
  assert.deepEqual(
    audits.map((e) => e.payload.user_id),
    ['u_small'],
  );
});

test('forget pseudonymises every row of the user, audits every call, and a repeat rewrites none', async (t) => {
  const { fx, audits } = await setup(t);
  insertEvents(fx.store.db, 5, (i) => callEvent(seqId(i), { at: i, user: i < 3 ? 'u_gone' : 'u_stays' }));
  const first = await fx.call('POST', '/analytics/user/u_gone/forget');
  assert.equal(first.status, 200);
  const a = (await first.json()) as any;
  assert.deepEqual(Object.keys(a), ['user_id', 'pseudonym', 'pseudonymized_rows', 'completed_at']);
  assert.equal(a.user_id, 'u_gone');
  assert.match(a.pseudonym, /^redacted_[0-9a-f]{12}$/);
  assert.equal(a.pseudonymized_rows, 3);
  assert.ok(parseIsoUs(a.completed_at));
  const second = (await (await fx.call('POST', '/analytics/user/u_gone/forget')).json()) as any;
  assert.deepEqual([second.pseudonym, second.pseudonymized_rows], [a.pseudonym, 0]);
  const users = fx.store.db
    .prepare('SELECT user_id, count(*) AS n FROM events WHERE type = ? GROUP BY user_id ORDER BY user_id')
    .all('llm.call_completed');
  assert.deepEqual(
    users.map((r) => ({ ...r })),
    [
      { user_id: a.pseudonym, n: 3 },
      { user_id: 'u_stays', n: 2 },
    ],
  );
  assert.deepEqual(
    audits.map((e) => [e.type, e.actor, e.payload.pseudonymized_rows]),
    [
      ['analytics.user_forgotten', 'user', 3],
      ['analytics.user_forgotten', 'user', 0],
    ],
  );
});

// --- internal ---

/** Resolves with fn()'s first defined value, checking after each turn of the event loop (bounded). */
async function waitFor<T>(fn: () => T | undefined): Promise<T> {
  for (let i = 0; i < 2000; i++) {
    const value = fn();
    if (value !== undefined) return value;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error('the awaited event never came');
}

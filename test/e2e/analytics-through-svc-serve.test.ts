/**
 * The /analytics namespace through the real `svc serve` over a socket: a spend answer from a seeded
 * store; the user export streamed to a client and audited once the response finished, never for a
 * client that disconnects mid-body; forget through HTTP rewrites the rows the export then no longer has;
 * the dashboard page and its bundled script.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { startAgentServer, withStore } from '../helpers/agent-server.ts';
import { callEvent } from '../helpers/analytics-events.ts';
import { seedStore, seqId } from '../helpers/event-rows.ts';
import { makeTempDir } from '../helpers/svc.ts';

const DAY_US = 86_400_000_000;

async function serve(t: { after: (fn: () => unknown) => void }) {
  const tmp = makeTempDir('svc-analytics-e2e-');
  t.after(() => tmp.cleanup());
  const now = Date.now() * 1000;
  // 3,000 calls of the last day: a third by u_big (many export chunks), one by u_small
  await seedStore(join(tmp.dir, 'svc.db'), 3001, (i) => ({
    ...callEvent(seqId(i), {
      at: 0,
      cost: '0.000123',
      user: i === 3000 ? 'u_small' : i % 3 === 0 ? 'u_big' : 'u_other',
      team: 'team_core',
    }),
    timestamp_us: now - DAY_US + i,
  }));
  return startAgentServer(t, { home: tmp.dir });
}

const audits = (db: string) =>
  withStore(db, (s) =>
    (
      s
        .prepare("SELECT actor, payload FROM events WHERE type = 'analytics.user_exported' ORDER BY id")
        .all() as Array<{
        actor: string;
        payload: string;
      }>
    ).map((r) => ({ actor: r.actor, ...JSON.parse(r.payload) })),
  );

/** Polls the store until `fn` holds (the audit commits right after the response finished). */
async function eventually(fn: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail('the store never showed the expected rows');
}

test('spend, export with its audit after the response finished, and forget over HTTP', async (t) => {
  const server = await serve(t);
  const cost = await server.api('GET', '/analytics/cost?group_by=team');
  assert.equal(cost.status, 200);
  assert.deepEqual(
    cost.body.data.map((r: any) => [r.team_id, r.cost_usd, r.call_count]),
    [['team_core', 0.369123, 3001]],
  );
  // the years' first and last microseconds, which a double cannot hold (before: 400 invalid_window
  // 'falls outside the years 0000 to 9999', the last one rounded onto year 10000)
  const utmost = await server.api(
    'GET',
    '/analytics/cost?group_by=team&from=0000-01-01T00:00:00.000001Z&to=9999-12-31T23:59:59.999999Z',
  );
  assert.equal(utmost.status, 200, JSON.stringify(utmost.body));
  assert.deepEqual(utmost.body.window, {
    start: '0000-01-01T00:00:00.000001Z',
    end: '9999-12-31T23:59:59.999999Z',
  });
  assert.deepEqual(utmost.body.data, cost.body.data);

  const res = await fetch(`${server.url}/analytics/user/u_big/export`);
  assert.equal(res.headers.get('x-svc-row-count'), '1000');
  assert.equal(res.headers.get('content-disposition'), 'attachment; filename=u_big.jsonl');
  const text = await res.text();
  assert.equal(text.trimEnd().split('\n').length, 1000);
  await eventually(() => audits(server.db).length === 1);
  assert.deepEqual(audits(server.db)[0], {
    actor: 'user',
    user_id: 'u_big',
    row_count: 1000,
    byte_count: Buffer.byteLength(text),
    window: { start: null, end: null },
  });

  const forget = await server.api('POST', '/analytics/user/u_small/forget');
  assert.equal(forget.status, 200);
  assert.equal(forget.body.pseudonymized_rows, 1);
  const after = await fetch(`${server.url}/analytics/user/u_small/export`);
  assert.equal(after.headers.get('x-svc-row-count'), '0');
  assert.equal(await after.text(), '');
  // the request log, which forget cannot rewrite, never names the user: its path says :user_id
  const logged = () =>
    server.svc
      .output()
      .stdout.split('\n')
      .filter((l) => l.includes('"msg":"request"'))
      .map((l) => JSON.parse(l).path as string)
      .filter((p) => p.startsWith('/analytics/user/'));
  await eventually(() => logged().length === 3);
  assert.deepEqual(logged(), [
    '/analytics/user/:user_id/export',
    '/analytics/user/:user_id/forget',
    '/analytics/user/:user_id/export',
  ]);
  assert.doesNotMatch(server.svc.output().stdout + server.svc.output().stderr, /u_small|u_big/);
});

test('the dashboard page and its bundled script (Chart.js inside) are served by svc serve', async (t) => {
  const server = await serve(t);
  const page = await fetch(`${server.url}/dashboard/`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<script src="app\.js"><\/script>/);
  const script = await fetch(`${server.url}/dashboard/app.js`);
  assert.equal(script.status, 200);
  assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/);
  const js = await script.text();
  assert.ok(js.length > 50_000, `a bundle with the chart library, not a stub (${js.length} bytes)`);
  assert.ok(js.includes('Spend (USD)') && js.includes('/analytics/'), 'the dashboard code itself');
});

test('a HEAD of an export answers its headers and exports nothing: no rows read, no audit event', async (t) => {
  const server = await serve(t);
  for (const [user, rows] of [
    ['u_nobody', '0'],
    ['u_big', '1000'],
  ]) {
    const head = await fetch(`${server.url}/analytics/user/${user}/export`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('x-svc-row-count'), rows);
    assert.equal(head.headers.get('content-disposition'), `attachment; filename=${user}.jsonl`);
    assert.equal(await head.text(), '');
  }
  // a full export afterwards is the only one audited: nobody received an export from the HEADs
  await (await fetch(`${server.url}/analytics/user/u_small/export`)).text();
  await eventually(() => audits(server.db).length >= 1);
  assert.deepEqual(
    audits(server.db).map((a) => a.user_id),
    ['u_small'],
  );
});

test('a client that disconnects mid-body leaves no analytics.user_exported behind', async (t) => {
  const server = await serve(t);
  const port = Number(new URL(server.url).port);
  await new Promise<void>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/analytics/user/u_big/export' }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
  // a complete export afterwards is audited; the interrupted one never is
  await (await fetch(`${server.url}/analytics/user/u_small/export`)).text();
  await eventually(() => audits(server.db).length >= 1);
  assert.deepEqual(
    audits(server.db).map((a) => a.user_id),
    ['u_small'],
  );
  const health = await server.api('GET', '/health');
  assert.equal(health.status, 200, 'the server lives on');
});

/**
 * Three `svc gateway` processes on one PostgreSQL database act as one gateway (issue 15): 50 concurrent
 * requests spread over them against a cap that admits 10 never spend past it; a revocation is refused
 * by every replica within 1 s without restart; kill -9 of one replica loses no answered request's
 * events, and a replica started afterwards names only the dead replica's open turns, not a live one's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { compare, formatDecimal, mul, parseDecimal, sumDecimals } from '#src/lib/decimal.ts';
import { worstCaseCost } from '#src/models/pricing.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { boundCallTokens } from '#src/models/token-bound.ts';
import { decode } from '../helpers/budget-probes.ts';
import { startGatewayReplicas } from '../helpers/gateway-replicas.ts';
import { useTestPostgres } from '../helpers/postgres.ts';
import { runSvc } from '../helpers/svc.ts';

const postgres = useTestPostgres();

const MODEL = 'anthropic:claude-haiku-4-5';
const MAX_TOKENS = 100;
const BODY = { model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'budget probe' }] };
const registry = loadModelRegistry(undefined);
const BOUND = boundCallTokens(decode('anthropic', BODY), registry.get(MODEL)!, JSON.stringify(BODY));
const CAP = formatDecimal(mul(worstCaseCost(registry, MODEL, BOUND).cost, parseDecimal('10')));
// every admitted call costs exactly its worst case, and slow headers keep all 50 in flight together
const CAP_REPLY = `slow-headers=300;usage=in:0,cache_write:${BOUND.inputTokens},out:${MAX_TOKENS}`;

/** One request in either shape; `text` may carry [[fake:…]] directives. */
function send(url: string, token: string, i: number, text = 'budget probe', signal?: AbortSignal) {
  const body = JSON.stringify({ ...BODY, messages: [{ role: 'user', content: text }] });
  return i % 2 === 0
    ? fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': token,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body,
        signal,
      })
    : fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
        signal,
      });
}

test('three gateway replicas on one PostgreSQL database act as one', { timeout: 150_000 }, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const cluster = await startGatewayReplicas(await postgres.createDatabase(), 3);
  t.after(() => cluster.stop());
  const { store } = cluster;
  const urls = () => cluster.replicas.map((r) => r.url);
  /** ms until every replica answers a request with `token` with `status` (Infinity after 5 s). */
  const reachEvery = (token: string, status: number) => {
    const since = performance.now();
    return Promise.all(
      urls().map(async (url, i) => {
        for (;;) {
          const r = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
          await r.arrayBuffer();
          if (r.status === status) return performance.now() - since;
          if (performance.now() - since > 5_000) return Number.POSITIVE_INFINITY;
          await new Promise((res) => setTimeout(res, 10 + i));
        }
      }),
    );
  };
  const issue = async (args: string[] = []) => {
    const key = await cluster.issue(args);
    const ms = await reachEvery(key.token, 200);
    for (const m of ms) assert.ok(m <= 1_000, `a replica still refused a new key after ${m} ms`);
    return { ...key, acceptedAfterMs: ms };
  };

  await t.test(
    '50 concurrent requests over 3 replicas against a cap that admits 10 never spend past it',
    async () => {
      const { keyId, token } = await issue(['--daily-cap-usd', CAP]);
      cluster.fake.setDefault(CAP_REPLY);
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          send(urls()[i % 3], token, i).then(async (r) => ({ r, body: await r.json() })),
        ),
      );
      cluster.fake.setDefault(undefined);
      const ok = responses.filter((x) => x.r.status === 200);
      assert.equal(ok.length, 10);
      for (const x of responses.filter((y) => y.r.status !== 200)) {
        assert.equal(x.r.status, 429);
        assert.equal((x.body as { error: { code: string } }).error.code, 'quota_exceeded');
      }
      // every replica enforced the one shared cap: each answered, and refusals came from more than one
      // (which replica wins the admissions is a race the test does not pin: under load one may take all ten)
      const port = (x: { r: Response }) => new URL(x.r.url).port;
      assert.equal(new Set(responses.map(port)).size, 3);
      const refusedBy = new Set(responses.filter((x) => x.r.status === 429).map(port));
      assert.ok(refusedBy.size >= 2, `refusals came from ${refusedBy.size} replica(s)`);
      const completed = await store.kysely
        .selectFrom('events')
        .select('cost_usd')
        .where('type', '=', 'llm.call_completed')
        .where('gateway_key_id', '=', keyId)
        .execute();
      assert.equal(completed.length, 10);
      const spent = sumDecimals(completed.map((c) => String(c.cost_usd)));
      assert.equal(compare(spent, parseDecimal(CAP)), 0, `${formatDecimal(spent)} spent of ${CAP}`);
      // settlements are written after the answers: wait until all ten are in the shared window
      await waitFor('the ten settlements', async () => {
        const w = await store.kysely
          .selectFrom('budget_windows')
          .select('spent_usd')
          .where('key_id', '=', keyId)
          .where('cap_kind', '=', 'daily')
          .executeTakeFirst();
        return w !== undefined && compare(parseDecimal(w.spent_usd), parseDecimal(CAP)) === 0;
      });
      await waitFor(
        'the alert committed',
        async () =>
          (
            await store.kysely
              .selectFrom('events')
              .select('id')
              .where('type', '=', 'quota.alert')
              .where('gateway_key_id', '=', keyId)
              .execute()
          ).length > 0,
      );
      const alerts = await store.kysely
        .selectFrom('events')
        .select('id')
        .where('type', '=', 'quota.alert')
        .where('gateway_key_id', '=', keyId)
        .execute();
      assert.equal(alerts.length, 1, 'one 80 % alert, whichever replica crossed it');
    },
  );

  await t.test(
    'an issued key works and a revoked one is refused on every replica within 1 s, without restart',
    async (st) => {
      const { keyId, token, acceptedAfterMs } = await issue();
      const revoked = await runSvc(['gateway', 'revoke-key', keyId], { env: cluster.env });
      assert.equal(revoked.code, 0, revoked.stderr);
      const refusedAfterMs = await reachEvery(token, 401);
      const show = (ms: number[]) => ms.map((m) => `${Math.round(m)} ms`).join(', ');
      st.diagnostic(
        `new key accepted after ${show(acceptedAfterMs)}; revoked key refused after ${show(refusedAfterMs)}`,
      );
      for (const ms of refusedAfterMs)
        assert.ok(ms <= 1_000, `a replica still accepted the key after ${ms} ms`);
    },
  );

  await t.test(
    'kill -9 of a replica loses no answered request; a new replica names only its open turns',
    async (st) => {
      const { token } = await issue();
      const [victim, survivor] = cluster.replicas;
      const survivorHang = new AbortController();
      st.after(() => survivorHang.abort()); // else the survivor's stop waits for it
      const hangs = [
        send(victim.url, token, 0, '[[fake:hang]]').catch(() => undefined),
        send(survivor.url, token, 1, '[[fake:hang]]', survivorHang.signal).catch(() => undefined),
      ];
      await waitFor('the two hanging calls committed as started', async () => (await openCalls()) === 2);
      const before = await completedTurns();
      // a burst whose answers arrive over ~2 s; the victim dies early in it
      const burst = Array.from({ length: 40 }, (_, i) =>
        send(victim.url, token, i, `[[fake:slow-headers=${50 * i}]]`)
          .then(async (r) => ({
            status: r.status,
            turn: r.headers.get('svc-request-id'),
            body: await r.text(),
          }))
          .catch(() => ({ status: 0, turn: null, body: '' })),
      );
      await waitFor('part of the burst answered', async () => (await completedTurns()) >= before + 10);
      victim.child.kill('SIGKILL');
      await victim.stop();
      const outcomes = await Promise.all(burst);
      const answered = outcomes.filter((o) => o.status === 200 && o.body.length > 0);
      assert.ok(answered.length >= 5 && answered.length < 40, `${answered.length} answered before the kill`);
      for (const o of answered) {
        const types = await store.kysely
          .selectFrom('events')
          .select('type')
          .where('turn_id', '=', o.turn)
          .orderBy('id')
          .execute();
        assert.deepEqual(
          types.map((r) => r.type),
          ['route.decided', 'llm.call_started', 'llm.call_completed', 'turn.completed'],
          `answered turn ${o.turn}`,
        );
      }

      await cluster.add();
      const gaps = await sql<{ turn_id: string; origin: string | null }>`
      SELECT g.turn_id, (SELECT s.origin FROM events s WHERE s.turn_id = g.turn_id AND s.type = 'route.decided') AS origin
      FROM events g WHERE g.type = 'bus.gap_detected'`.execute(store.kysely);
      const victimOrigin = await originOf(answered[0].turn as string);
      assert.ok(gaps.rows.length >= 1, 'the victim left at least its hanging turn open');
      for (const g of gaps.rows)
        assert.equal(g.origin, victimOrigin, `gap ${g.turn_id} belongs to the dead replica`);
      survivorHang.abort();
      await Promise.all(hangs);
    },
  );

  async function openCalls(): Promise<number> {
    const r = await sql<{ n: number }>`SELECT count(*) AS n FROM events s WHERE s.type = 'llm.call_started'
      AND NOT EXISTS (SELECT 1 FROM events c WHERE c.parent_event_id = s.id)`.execute(store.kysely);
    return Number(r.rows[0].n);
  }
  async function completedTurns(): Promise<number> {
    const r = await sql<{
      n: number;
    }>`SELECT count(*) AS n FROM events WHERE type = 'turn.completed'`.execute(store.kysely);
    return Number(r.rows[0].n);
  }
  async function originOf(turn: string): Promise<string | null> {
    const r = await sql<{
      origin: string | null;
    }>`SELECT origin FROM events WHERE turn_id = ${turn} LIMIT 1`.execute(store.kysely);
    return r.rows[0]?.origin ?? null;
  }
});

async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

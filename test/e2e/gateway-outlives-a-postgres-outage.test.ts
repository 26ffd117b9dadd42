/**
 * PostgreSQL goes away under a running gateway (a restart, a failover) and comes back: the gateway
 * stays up; a capped key is refused at once with 503 budget_store_unavailable (its spend cannot be
 * checked); a call without caps is answered once the database is back, with every event of its turn
 * in the trace; and the capped key works again without a restart. The outage is a TCP relay cut.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '#src/store/open.ts';
import { startGatewayReplicas } from '../helpers/gateway-replicas.ts';
import { useTestPostgres } from '../helpers/postgres.ts';
import { startTcpRelay } from '../helpers/tcp-relay.ts';

const postgres = useTestPostgres();

test('a gateway outlives a PostgreSQL outage and loses no answered call', { timeout: 120_000 }, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const direct = new URL(await postgres.createDatabase());
  const relay = await startTcpRelay(direct.hostname, Number(direct.port));
  t.after(() => relay.down());
  const viaRelay = new URL(direct);
  viaRelay.port = String(relay.port);
  const cluster = await startGatewayReplicas(viaRelay.toString(), 1);
  t.after(() => cluster.stop());
  const reader = await openStore({ engine: 'postgres', url: direct.toString() }, { readOnly: true });
  t.after(() => reader.close());
  const gw = cluster.replicas[0];
  const capped = await cluster.issue(['--daily-cap-usd', '5']);
  const free = await cluster.issue();
  const call = (token: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai:gpt-5-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
  for (const key of [capped, free]) {
    for (;;) {
      const r = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key.token}` } });
      await r.arrayBuffer();
      if (r.status === 200) break;
    }
  }
  assert.equal((await call(capped.token)).status, 200);

  relay.down();
  const during = call(free.token);
  const refused = await call(capped.token); // answered while the database is still away
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get('x-should-retry'), 'true');
  assert.equal(refused.headers.get('retry-after'), '1');
  const body = (await refused.json()) as { error: { code: string } };
  assert.equal(body.error.code, 'budget_store_unavailable');

  await relay.up();
  const answered = await during;
  assert.equal(answered.status, 200);
  await answered.json();
  const turnId = answered.headers.get('svc-request-id');
  const types = await reader.kysely
    .selectFrom('events')
    .select('type')
    .where('turn_id', '=', turnId)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    types.map((r) => r.type),
    ['route.decided', 'llm.call_started', 'llm.call_completed', 'turn.completed'],
  );
  // reconnected: the capped key is admitted again (its pool reconnects on the next request)
  let again = await call(capped.token);
  while (again.status === 503) {
    await again.arrayBuffer();
    again = await call(capped.token);
  }
  assert.equal(again.status, 200);
  await again.arrayBuffer();
  assert.equal(gw.child.exitCode, null, 'the gateway is still running');
});

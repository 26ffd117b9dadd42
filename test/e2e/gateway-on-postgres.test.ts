/**
 * `svc gateway` with SVC_DATABASE_URL: the store is the PostgreSQL database (no SQLite file appears), a
 * call through each SDK leaves its events there in order, and the audit events of the key commands too.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { openStore } from '#src/store/open.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { useTestPostgres } from '../helpers/postgres.ts';

const postgres = useTestPostgres();

test('a gateway on PostgreSQL writes every event of its calls to the database', {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const stack = await startGatewayStack({ env: { SVC_DATABASE_URL: url } });
  t.after(() => stack.stop());
  const a = await stack.anthropic.messages
    .create({
      model: 'anthropic:claude-haiku-4-5',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'hi' }],
    })
    .withResponse();
  const o = await stack.openai.chat.completions
    .create({ model: 'openai:gpt-5-mini', messages: [{ role: 'user', content: 'hi' }], stream: true })
    .withResponse();
  for await (const _ of o.data) {
    // drain the stream
  }
  const turns = [a.response.headers.get('svc-request-id'), o.response.headers.get('svc-request-id')];
  assert.equal(await stack.gw.stop(), 0);
  assert.equal(existsSync(stack.files.db), false, 'no SQLite store was created');

  const store = await openStore({ engine: 'postgres', url });
  t.after(() => store.close());
  for (const turn of turns) {
    const rows = await store.kysely
      .selectFrom('events')
      .select(['type', 'gateway_key_id', 'cost_usd'])
      .where('turn_id', '=', turn)
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.type),
      ['route.decided', 'llm.call_started', 'llm.call_completed', 'turn.completed'],
    );
    assert.equal(rows[2].gateway_key_id, stack.keyId);
    assert.match(rows[2].cost_usd ?? '', /^\d+\.\d+$/);
  }
  const issued = await store.kysely
    .selectFrom('events')
    .select('type')
    .where('type', '=', 'gateway.key_issued')
    .execute();
  assert.equal(issued.length, 1);
});

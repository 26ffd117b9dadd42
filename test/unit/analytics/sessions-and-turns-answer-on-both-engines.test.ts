/**
 * The analytics reads that need no SQLite index answer alike on SQLite and PostgreSQL: the sessions list
 * (both orders) and the turn drill-down (in_flight, messages, 404). The spend endpoints refuse a
 * PostgreSQL store with 501 not_implemented (their SQL reads SQLite's migration-0004 indexes).
 */
import assert from 'node:assert/strict';
import { assertAnalyticsIndexes, querySessions, queryTurn } from '#src/analytics/index.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { formatUs } from '#src/lib/time.ts';
import { openStore, type Store } from '#src/store/open.ts';
import { describeEachEngine } from '../../helpers/engines.ts';
import { BASE_US } from '../../helpers/event-rows.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();
const at = (us: number) => formatUs(BASE_US + us);

async function seeded(store: Store) {
  const db = store.kysely;
  for (const [id, cost, updated] of [
    ['sess_a', '0.9', 30],
    ['sess_b', '10.25', 10],
  ] as const) {
    await db
      .insertInto('sessions')
      .values({
        id,
        workspace_path: '/w',
        active_model: 'anthropic:claude-sonnet-4-5',
        created_at: at(0),
        updated_at: at(updated),
        routing_policy_version: 'v1',
        cost_so_far_usd: cost,
      })
      .execute();
  }
  await db
    .insertInto('messages')
    .values({
      id: 'm1',
      session_id: 'sess_a',
      turn_id: 'turn_a',
      role: 'user',
      content: '[]',
      created_at: at(99),
    })
    .execute();
  await store.appendEvents(
    (['turn.started', 'turn.completed'] as const).map((type, i) => ({
      id: `01ENG${i}`,
      timestamp: at(100 + i),
      timestamp_us: BASE_US + 100 + i,
      session_id: 'sess_a',
      turn_id: 'turn_a',
      type,
      actor: 'agent',
      payload: '{}',
      parent_event_id: null,
      sensitivity: 'pseudonymous',
    })),
  );
}

describeEachEngine('sessions and turns', postgres, (engine) => {
  engine.test('answer the same on this engine', async (t) => {
    const store = await openStore(await engine.target());
    t.after(() => store.close());
    await seeded(store);
    assert.deepEqual(
      (await querySessions(store.kysely, { order: 'recency', limit: 25 })).map((s) => [s.id, s.cost_usd]),
      [
        ['sess_a', 0.9],
        ['sess_b', 10.25],
      ],
    );
    assert.deepEqual(
      (await querySessions(store.kysely, { order: 'cost', limit: 1 })).map((s) => s.id),
      ['sess_b'],
    );
    const turn = await queryTurn(store.kysely, 'turn_a', BASE_US + 1000);
    assert.deepEqual(
      [turn.session_id, turn.in_flight, turn.events.map((e) => e.type), turn.messages.map((m) => m.id)],
      ['sess_a', false, ['turn.started', 'turn.completed'], ['m1']],
    );
    await assert.rejects(
      queryTurn(store.kysely, 'turn_x', BASE_US),
      (err) => isSvcError(err) && err.status === 404,
    );
    if (store.engine === 'postgres')
      assert.throws(
        () => assertAnalyticsIndexes(store),
        (err) => isSvcError(err) && err.code === 'not_implemented',
      );
    else assertAnalyticsIndexes(store);
  });
});

/**
 * Every analytics read answers alike on SQLite and PostgreSQL: the sessions list (both orders), the turn
 * drill-down (in_flight, messages, 404), and each spend endpoint (cost under every group_by, filter set
 * and window; cache_effectiveness, routing, reliability, savings, by_key, by_team) over the same events
 * as a SQLite store, with exact sums past the nano-dollar range and nearest-rank percentiles; a stored cost
 * that is no number is left out of the sums on both engines, never failing the query.
 */
import assert from 'node:assert/strict';
import { querySessions, queryTurn } from '#src/analytics/index.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { formatUs } from '#src/lib/time.ts';
import { openStore, type Store } from '#src/store/open.ts';
import { describeEachEngine, sqliteEngine } from '../../helpers/engines.ts';
import { BASE_US } from '../../helpers/event-rows.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';
import { seedSpend, spendAnswers } from '../../helpers/spend-answers.ts';

const postgres = useTestPostgres();
const reference = sqliteEngine();
const at = (us: number) => formatUs(BASE_US + us);

/** A session row with this stored cost, last updated `updated` µs after BASE_US. */
async function addSession(store: Store, id: string, cost: string, updated = 0) {
  await store.kysely
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

async function seeded(store: Store) {
  const db = store.kysely;
  await addSession(store, 'sess_a', '0.9', 30);
  await addSession(store, 'sess_b', '10.25', 10);
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

describeEachEngine('analytics reads', postgres, (engine) => {
  engine.test('sessions and turns answer the same on this engine', async (t) => {
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
  });

  engine.test('order=cost ranks stored costs exactly, past what a float can tell apart', async (t) => {
    const store = await openStore(await engine.target());
    t.after(() => store.close());
    // 10.25 + 1e-17 is the same double as 10.25 (and the same float4, PostgreSQL's REAL); a cast ranks the
    // two as a tie, which id DESC would break the wrong way; 9.99… has fewer integer digits than 10.25
    await addSession(store, 'sess_a', '10.25000000000000001');
    await addSession(store, 'sess_b', '10.25');
    await addSession(store, 'sess_c', '9.99999999999999999999');
    await addSession(store, 'sess_d', '100');
    assert.deepEqual(
      (await querySessions(store.kysely, { order: 'cost', limit: 25 })).map((s) => s.id),
      ['sess_d', 'sess_a', 'sess_b', 'sess_c'],
    );
  });

  engine.test('every spend endpoint answers as on SQLite over the same events', async (t) => {
    const store = await openStore(await engine.target());
    const sqlite = await openStore(await reference.target());
    t.after(async () => {
      await store.close();
      await sqlite.close();
    });
    await seedSpend(store);
    await seedSpend(sqlite);
    const answers = await spendAnswers(store);
    assert.deepEqual(answers, await spendAnswers(sqlite));
    // anchors, so equal answers cannot be equally empty: an exact sum past the nano range, the
    // nearest ranks of 1..20 (10 and 19), routing's hard failures and the failure classes
    const week = answers.get('cost WEEK none all') as { cost_usd: number; call_count: number };
    // 12345678901.123456789 + 1.4 + 0.0009 + 1e-7 + 1e-9 + 20 × 0.001 + 6 × 5e-10 = 12345678902.544356893
    // (the 0.25 a cancelled agent call stamps on llm.call_failed is not spend); the call whose cost is 'n/a'
    // counts as a call without cost
    assert.equal(week.cost_usd, Number('12345678902.544356893'));
    assert.equal(week.call_count, 36);
    const reliability = answers.get('reliability WEEK') as { latency_ms_by_model: unknown[] };
    assert.deepEqual(reliability.latency_ms_by_model[0], {
      model: 'anthropic:claude-haiku-4-5',
      p50: 10,
      p95: 19,
      sample_size: 20,
    });
    const routing = answers.get('routing WEEK') as { hard_failures: number; rejections: unknown[] };
    assert.equal(routing.hard_failures, 3);
    assert.deepEqual(routing.rejections, [
      { policy: 'rule', validation_failure: 'model_not_configured', count: 2 },
    ]);
  });
});

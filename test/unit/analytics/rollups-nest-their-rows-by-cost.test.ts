/**
 * GET /analytics/by_key, by_team and cache_effectiveness queries: per-key spend with its inbound shapes,
 * per-team spend with distinct tagged users and per-user rows (null buckets for untagged and in-process
 * traffic), both levels by cost descending; cache ratios over uncached + read + write input.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queryByKey, queryByTeam, queryCacheEffectiveness } from '#src/analytics/index.ts';
import { callEvent, DAY_US, seed, tempStore, windowOf } from '../../helpers/analytics-events.ts';

const WINDOW = windowOf(0, DAY_US);

async function seeded(t: { after: (fn: () => unknown) => void }) {
  const store = await tempStore(t);
  seed(store, [
    (id) => callEvent(id, { at: 1, key: 'gk_a', shape: 'anthropic', cost: '0.5', user: 'u1', team: 't1' }),
    (id) => callEvent(id, { at: 2, key: 'gk_a', shape: 'openai', cost: '0.7', user: 'u2', team: 't1' }),
    (id) => callEvent(id, { at: 3, key: 'gk_a', shape: 'openai', cost: '0.1', user: 'u2', team: 't1' }),
    (id) => callEvent(id, { at: 4, key: 'gk_b', shape: 'anthropic', cost: '0.25', user: null, team: 't1' }),
    (id) => callEvent(id, { at: 5, key: 'gk_b', shape: 'anthropic', cost: '2', user: 'u3', team: null }),
    (id) => callEvent(id, { at: 6, key: null, shape: null, session: 'sess_1', cost: '0.05' }),
  ]);
  return store;
}

test('by_key: each key with its inbound shapes, in-process traffic under a null key', async (t) => {
  const store = await seeded(t);
  const rows = await queryByKey(store.kysely, { window: WINDOW, gatewayKey: null });
  assert.deepEqual(
    rows.map((r) => [r.gateway_key_id, r.cost_usd, r.call_count, r.by_inbound_shape]),
    [
      ['gk_b', 2.25, 2, [{ inbound_shape: 'anthropic', call_count: 2, cost_usd: 2.25 }]],
      [
        'gk_a',
        1.3,
        3,
        [
          { inbound_shape: 'openai', call_count: 2, cost_usd: 0.8 },
          { inbound_shape: 'anthropic', call_count: 1, cost_usd: 0.5 },
        ],
      ],
      [null, 0.05, 1, [{ inbound_shape: null, call_count: 1, cost_usd: 0.05 }]],
    ],
  );
  assert.deepEqual(Object.keys(rows[0]), [
    'gateway_key_id',
    'cost_usd',
    'input_tokens',
    'output_tokens',
    'cached_input_tokens',
    'cache_creation_input_tokens',
    'call_count',
    'by_inbound_shape',
  ]);
  const one = await queryByKey(store.kysely, { window: WINDOW, gatewayKey: 'gk_a' });
  assert.deepEqual(
    one.map((r) => r.gateway_key_id),
    ['gk_a'],
  );
});

test('by_team: distinct tagged users and per-user rows, untagged in null buckets', async (t) => {
  const store = await seeded(t);
  const rows = await queryByTeam(store.kysely, { window: WINDOW, team: null });
  assert.deepEqual(
    rows.map((r) => [r.team_id, r.cost_usd, r.call_count, r.user_count, r.by_user]),
    [
      [
        null,
        2.05,
        2,
        1,
        [
          { user_id: 'u3', cost_usd: 2, call_count: 1 },
          { user_id: null, cost_usd: 0.05, call_count: 1 },
        ],
      ],
      [
        't1',
        1.55,
        4,
        2,
        [
          { user_id: 'u2', cost_usd: 0.8, call_count: 2 },
          { user_id: 'u1', cost_usd: 0.5, call_count: 1 },
          { user_id: null, cost_usd: 0.25, call_count: 1 },
        ],
      ],
    ],
  );
  assert.deepEqual(
    (await queryByTeam(store.kysely, { window: WINDOW, team: 't1' })).map((r) => r.team_id),
    ['t1'],
  );
});

test('cache_effectiveness: ratios over uncached + read + write input, null with no input', async (t) => {
  const store = await tempStore(t);
  seed(store, [
    (id) => callEvent(id, { at: 1, input: 100, cached: 300, creation: 100 }),
    (id) => callEvent(id, { at: 2, input: 0, cached: 500, creation: 0 }),
    (id) => callEvent(id, { at: 3, model: 'openai:gpt-5-nano', input: 0, cached: 0, creation: 0 }),
  ]);
  assert.deepEqual(await queryCacheEffectiveness(store.kysely, WINDOW), [
    {
      model: 'anthropic:claude-sonnet-4-5',
      uncached_input_tokens: 100,
      cached_input_tokens: 800,
      cache_creation_tokens: 100,
      hit_rate: 0.8,
      cache_write_share: 0.1,
      call_count: 2,
    },
    {
      model: 'openai:gpt-5-nano',
      uncached_input_tokens: 0,
      cached_input_tokens: 0,
      cache_creation_tokens: 0,
      hit_rate: null,
      cache_write_share: null,
      call_count: 1,
    },
  ]);
});

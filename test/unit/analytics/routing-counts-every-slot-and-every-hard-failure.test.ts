/**
 * GET /analytics/routing's query: wins by policy in all seven slots (zeros included), hard failures
 * (winner_index -1 or outside the chain), rejections from every chain entry with verdict rejected (those
 * of hard failures too), and wins by chosen model.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queryRouting } from '#src/analytics/index.ts';
import { DAY_US, routeEvent, seed, tempStore, windowOf } from '../../helpers/analytics-events.ts';

const SONNET = 'anthropic:claude-sonnet-4-5';
const MINI = 'openai:gpt-5-mini';
const noMatch = (policy: string) => ({ policy, verdict: 'no_match' });
const accepted = (policy: string, model: string) => ({ policy, model, verdict: 'accepted' });
const rejected = (policy: string, model: string, validation_failure: string) => ({
  policy,
  model,
  verdict: 'rejected',
  validation_failure,
});

test('wins, hard failures and rejections are counted from each chain', async (t) => {
  const store = await tempStore(t);
  const defaults = [
    noMatch('per_message_override'),
    noMatch('manual_sticky'),
    noMatch('rule'),
    noMatch('pattern'),
  ];
  seed(store, [
    // three wins of global_default, one after a rejected rule
    ...[0, 1].map(
      (i) => (id: string) =>
        routeEvent(id, {
          at: i,
          chain: [
            ...defaults,
            noMatch('delegate_request'),
            noMatch('workspace_default'),
            accepted('global_default', SONNET),
          ],
          winner: 6,
          chosen: SONNET,
        }),
    ),
    (id) =>
      routeEvent(id, {
        at: 2,
        chain: [
          noMatch('per_message_override'),
          noMatch('manual_sticky'),
          rejected('rule', 'openai:nope', 'model_not_configured'),
          noMatch('pattern'),
          noMatch('delegate_request'),
          noMatch('workspace_default'),
          accepted('global_default', SONNET),
        ],
        winner: 6,
        chosen: SONNET,
      }),
    // a per-message override wins at index 0
    (id) =>
      routeEvent(id, { at: 3, chain: [accepted('per_message_override', MINI)], winner: 0, chosen: MINI }),
    // hard failures: nothing accepted (-1), and an index past the chain; their rejections still count
    (id) =>
      routeEvent(id, {
        at: 4,
        chain: [rejected('per_message_override', 'openai:gpt-4o', 'model_not_allowed')],
        winner: -1,
      }),
    (id) =>
      routeEvent(id, {
        at: 5,
        chain: [rejected('rule', 'openai:nope', 'model_not_configured'), accepted('global_default', SONNET)],
        winner: 7,
        chosen: SONNET,
      }),
    // outside the window
    (id) =>
      routeEvent(id, { at: 8 * DAY_US, chain: [accepted('manual_sticky', MINI)], winner: 0, chosen: MINI }),
  ]);
  const r = await queryRouting(store.kysely, windowOf(0, 7 * DAY_US));
  assert.deepEqual(r.wins_by_policy, [
    { policy: 'per_message_override', count: 1 },
    { policy: 'manual_sticky', count: 0 },
    { policy: 'rule', count: 0 },
    { policy: 'pattern', count: 0 },
    { policy: 'delegate_request', count: 0 },
    { policy: 'workspace_default', count: 0 },
    { policy: 'global_default', count: 3 },
  ]);
  assert.equal(r.hard_failures, 2);
  assert.deepEqual(r.rejections, [
    { policy: 'rule', validation_failure: 'model_not_configured', count: 2 },
    { policy: 'per_message_override', validation_failure: 'model_not_allowed', count: 1 },
  ]);
  assert.deepEqual(r.wins_by_model, [
    { chosen_model: SONNET, count: 3 },
    { chosen_model: MINI, count: 1 },
  ]);
});

test('an empty window answers all seven slots at zero and empty lists', async (t) => {
  const store = await tempStore(t);
  const r = await queryRouting(store.kysely, windowOf(0, DAY_US));
  assert.equal(r.wins_by_policy.length, 7);
  assert.ok(r.wins_by_policy.every((w) => w.count === 0));
  assert.deepEqual([r.hard_failures, r.rejections, r.wins_by_model], [0, [], []]);
});

test('odd chains (not an array, non-object entries, a fractional index) count as hard failures, never errors', async (t) => {
  const store = await tempStore(t);
  seed(store, [
    (id) => ({
      ...routeEvent(id, { at: 1, chain: [], winner: 0 }),
      payload: { chain: 'x', winner_index: 0 },
    }),
    (id) => ({
      ...routeEvent(id, { at: 2, chain: [], winner: 0 }),
      payload: { chain: ['rejected', 7, null], winner_index: 1.5 },
    }),
  ]);
  const r = await queryRouting(store.kysely, windowOf(0, DAY_US));
  assert.equal(r.hard_failures, 2);
  assert.deepEqual(r.rejections, []);
});

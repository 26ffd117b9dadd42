/**
 * Each key's spend since 00:00 UTC (the routing predicate cost_today_above) on both engines: seeded from
 * the trace (every llm.call_completed and a priced llm.call_failed of the day, per key; agent traffic and
 * yesterday left out), raised by settled calls, and back to zero when a new UTC day begins.
 */
import assert from 'node:assert/strict';
import { loadSpendToday } from '#src/gateway/spend-today.ts';
import { formatDecimal, parseDecimal } from '#src/lib/decimal.ts';
import { formatUs } from '#src/lib/time.ts';
import { openStore } from '#src/store/open.ts';
import { describeEachEngine } from '../../helpers/engines.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();
const DAY_US = 86_400_000_000;
const MIDNIGHT = Date.UTC(2026, 10, 22) * 1000;

describeEachEngine('spend today', postgres, (engine) => {
  engine.test(
    'seeded per key from today’s calls, raised by settlements, reset at UTC midnight',
    async (t) => {
      const store = await openStore(await engine.target());
      t.after(() => store.close());
      let n = 0;
      const event = (atUs: number, type: string, payload: Record<string, unknown>) => ({
        id: `01JZ00000000000000000000${String(++n).padStart(2, '0')}`,
        timestamp: formatUs(atUs),
        timestamp_us: atUs,
        session_id: null,
        turn_id: `t${n}`,
        type,
        actor: 'gateway',
        payload: JSON.stringify(payload),
        parent_event_id: null,
        sensitivity: 'pseudonymous',
      });
      await store.appendEvents([
        event(MIDNIGHT - 1, 'llm.call_completed', { gateway_key_id: 'gk_a', cost_usd: '5' }), // yesterday
        event(MIDNIGHT, 'llm.call_completed', { gateway_key_id: 'gk_a', cost_usd: '0.10' }),
        event(MIDNIGHT + 1, 'llm.call_failed', { gateway_key_id: 'gk_a', cost_usd: '0.02' }),
        event(MIDNIGHT + 2, 'llm.call_failed', { gateway_key_id: 'gk_a', error_class: 'overloaded' }),
        event(MIDNIGHT + 3, 'llm.call_completed', { gateway_key_id: 'gk_b', cost_usd: '0.5' }),
        event(MIDNIGHT + 4, 'llm.call_completed', { gateway_key_id: null, cost_usd: '7' }), // agent traffic
      ]);
      let now = MIDNIGHT + 3_600_000_000;
      const spend = await loadSpendToday(store, { nowUs: () => now });
      const of = (k: string) => formatDecimal(spend.of(k), 2);
      assert.equal(of('gk_a'), '0.12');
      assert.equal(of('gk_b'), '0.50');
      assert.equal(of('gk_c'), '0.00');
      spend.add('gk_a', parseDecimal('0.03'));
      spend.add('gk_c', parseDecimal('1'));
      assert.equal(of('gk_a'), '0.15');
      assert.equal(of('gk_c'), '1.00');
      now = MIDNIGHT + DAY_US; // the next UTC day
      assert.equal(of('gk_a'), '0.00');
      spend.add('gk_a', parseDecimal('0.25'));
      assert.equal(of('gk_a'), '0.25');
      assert.equal(of('gk_b'), '0.00');
    },
  );
});

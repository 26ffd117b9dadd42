/**
 * @module Each gateway key's spend since 00:00 UTC today, which the routing predicate `cost_today_above`
 * reads (spec 3 item 5). Seeded from the trace store once at start (the same events a budget settles:
 * SPEND_EVENT_TYPES) and raised by every call this process settles; a new UTC day starts at zero. Every key
 * counts, capped or not. With several replicas on PostgreSQL each one adds only its own calls after start.
 * Counted per budget like the caps (budgetKeyIdOf): a rotated key's successor continues its spend.
 */
import { type Kysely, sql } from 'kysely';
import { add, type Decimal, parseDecimal, ZERO } from '../lib/decimal.ts';
import type { Clock } from '../lib/time.ts';
import { dialectOf, engineOfKysely } from '../store/dialect.ts';
import type { Store } from '../store/open.ts';
import type { Database } from '../store/schema.ts';
import { SPEND_EVENT_TYPES, windowStartUs } from './quota.ts';

export interface SpendToday {
  /** USD the keys of a budget (budgetKeyIdOf) spent since 00:00 UTC today. */
  of(budgetKeyId: string): Decimal;
  /** A call of one of the budget's keys was settled at this cost. */
  add(budgetKeyId: string, cost: Decimal): void;
}

/** `budgetOf`: which budget each key's spend in the trace counts against (the keystore at start). */
export async function loadSpendToday(
  store: Store,
  clock: Clock,
  budgetOf: (keyId: string) => string = (keyId) => keyId,
): Promise<SpendToday> {
  let dayStartUs = windowStartUs('daily', clock.nowUs());
  let spent = new Map<string, Decimal>();
  const rows = await store.kysely
    .selectFrom('events')
    .select(['gateway_key_id', store.dialect.decimalSum(sql.ref('cost_usd')).as('total')])
    .where('type', 'in', SPEND_EVENT_TYPES)
    .where('timestamp_us', '>=', dayStartUs)
    .where('gateway_key_id', 'is not', null)
    .groupBy('gateway_key_id')
    .execute();
  for (const r of rows) {
    if (!r.gateway_key_id) continue;
    const budget = budgetOf(r.gateway_key_id);
    spent.set(budget, add(spent.get(budget) ?? ZERO, parseDecimal(r.total)));
  }

  // a day that began after start: this process saw all of it
  const today = (): Map<string, Decimal> => {
    const start = windowStartUs('daily', clock.nowUs());
    if (start !== dayStartUs) {
      dayStartUs = start;
      spent = new Map();
    }
    return spent;
  };
  return {
    of: (budgetKeyId) => today().get(budgetKeyId) ?? ZERO,
    add(budgetKeyId, cost) {
      const map = today();
      map.set(budgetKeyId, add(map.get(budgetKeyId) ?? ZERO, cost));
    },
  };
}

/**
 * USD the agent server's own calls (in-process traffic: no gateway key) spent since 00:00 UTC today, read
 * from the trace store when a turn is routed: turns come at a person's pace, and the store is then exact
 * across restarts and across several `svc serve` processes on one store.
 */
export async function inProcessSpendToday(db: Kysely<Database>, clock: Clock): Promise<Decimal> {
  const row = await db
    .selectFrom('events')
    .select(dialectOf(engineOfKysely(db)).decimalSum(sql.ref('cost_usd')).as('total'))
    .where('type', 'in', SPEND_EVENT_TYPES)
    .where('timestamp_us', '>=', windowStartUs('daily', clock.nowUs()))
    .where('gateway_key_id', 'is', null)
    .executeTakeFirst();
  return row?.total == null ? ZERO : parseDecimal(row.total);
}

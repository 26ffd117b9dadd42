/**
 * @module Seeds the quota manager from the trace store once at start: settled spend per budget in the
 * current UTC day and month, and which 80 % alerts were already sent in those windows. Spend is what the
 * running manager settled: every llm.call_completed, and the priced usage a broken stream stamps on its
 * llm.call_failed (SPEND_EVENT_TYPES). Events name the key used; `budgetOf` (the keystore at start)
 * counts a rotated key's spend with the keys it shares its budget with.
 */
import { sql } from 'kysely';
import { add, type Decimal, parseDecimal, ZERO } from '../lib/decimal.ts';
import type { Store } from '../store/open.ts';
import { type CapKind, type QuotaSeed, SPEND_EVENT_TYPES, windowStartUs } from './quota.ts';

export async function loadQuotaSeed(
  store: Store,
  nowUs: number,
  budgetOf: (keyId: string) => string = (keyId) => keyId,
): Promise<QuotaSeed> {
  const starts: Record<CapKind, number> = {
    daily: windowStartUs('daily', nowUs),
    monthly: windowStartUs('monthly', nowUs),
  };
  const spent: Record<CapKind, Map<string, Decimal>> = { daily: new Map(), monthly: new Map() };
  const alerted = new Set<string>();
  for (const kind of ['daily', 'monthly'] as const) {
    const rows = await store.kysely
      .selectFrom('events')
      .select(['gateway_key_id', store.dialect.decimalSum(sql.ref('cost_usd')).as('total')])
      .where('type', 'in', SPEND_EVENT_TYPES)
      .where('timestamp_us', '>=', starts[kind])
      .where('gateway_key_id', 'is not', null)
      .groupBy('gateway_key_id')
      .execute();
    for (const r of rows) {
      if (!r.gateway_key_id) continue;
      const budget = budgetOf(r.gateway_key_id);
      spent[kind].set(budget, add(spent[kind].get(budget) ?? ZERO, parseDecimal(r.total)));
    }
    const alerts = await store.kysely
      .selectFrom('events')
      .select('gateway_key_id')
      .where('type', '=', 'quota.alert')
      .where('timestamp_us', '>=', starts[kind])
      .where(store.dialect.jsonText(sql.ref('payload'), '$.cap_kind'), '=', kind)
      .execute();
    for (const a of alerts) if (a.gateway_key_id) alerted.add(`${budgetOf(a.gateway_key_id)}\u0000${kind}`);
  }
  return {
    spentSince(budgetKeyId, sinceUs) {
      for (const kind of ['daily', 'monthly'] as const) {
        if (starts[kind] === sinceUs) {
          return spent[kind].get(budgetKeyId) ?? ZERO;
        }
      }
      return ZERO; // a window that began after start: this process saw all of it
    },
    alertedSince(budgetKeyId, kind, sinceUs) {
      return sinceUs === starts[kind] && alerted.has(`${budgetKeyId}\u0000${kind}`);
    },
  };
}

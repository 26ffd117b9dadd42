/**
 * @module GET /analytics/by_key (spec 3): spend per gateway key (null for in-process agent traffic),
 * each with its spend per inbound shape; both levels by exact cost descending.
 */
import { type Kysely, sql } from 'kysely';
import { toNumber } from '../../lib/decimal.ts';
import { engineOfKysely } from '../../store/dialect.ts';
import type { Database } from '../../store/schema.ts';
import {
  byCostDescending,
  decodeSpend,
  EMPTY_SPEND,
  encodeSpendFields,
  mergeSpend,
  runSpendQuery,
  type SpendColumns,
  type SpendTotals,
  spendSource,
} from '../spend.ts';
import type { TimeWindow } from '../window.ts';

export interface ByKeyRow extends ReturnType<typeof encodeSpendFields> {
  gateway_key_id: string | null;
  call_count: number;
  by_inbound_shape: Array<{ inbound_shape: string | null; call_count: number; cost_usd: number }>;
}

export async function queryByKey(
  db: Kysely<Database>,
  q: { window: TimeWindow; gatewayKey: string | null },
): Promise<ByKeyRow[]> {
  const filter = q.gatewayKey === null ? sql`TRUE` : sql`gateway_key_id = ${q.gatewayKey}`;
  const source = spendSource(q.window, filter, ['gateway_key_id', 'inbound_shape'], engineOfKysely(db));
  const rows = await runSpendQuery(
    db,
    (mode) => sql<SpendColumns & { gateway_key_id: string | null; inbound_shape: string | null }>`
      SELECT gateway_key_id, inbound_shape, ${source.aggregates(mode)} ${source.from}
      GROUP BY gateway_key_id, inbound_shape`,
  );
  const keys = new Map<
    string | null,
    { totals: SpendTotals; shapes: Array<{ shape: string | null; t: SpendTotals }> }
  >();
  for (const r of rows) {
    const t = decodeSpend(r);
    const key = keys.get(r.gateway_key_id) ?? { totals: EMPTY_SPEND, shapes: [] };
    key.totals = mergeSpend(key.totals, t);
    key.shapes.push({ shape: r.inbound_shape, t });
    keys.set(r.gateway_key_id, key);
  }
  const list = [...keys].map(([id, k]) => ({ id, ...k }));
  return byCostDescending(
    list,
    (k) => k.totals.cost,
    (k) => k.id,
  ).map((k) => ({
    gateway_key_id: k.id,
    ...encodeSpendFields(k.totals),
    call_count: k.totals.callCount,
    by_inbound_shape: byCostDescending(
      k.shapes,
      (s) => s.t.cost,
      (s) => s.shape,
    ).map((s) => ({ inbound_shape: s.shape, call_count: s.t.callCount, cost_usd: toNumber(s.t.cost) })),
  }));
}

/**
 * @module GET /analytics/by_key (spec 3): spend per gateway key (null for in-process agent traffic),
 * each with its spend per inbound shape; both levels by exact cost descending.
 */
import { type Kysely, sql } from 'kysely';
import { toNumber } from '../../lib/decimal.ts';
import type { Database } from '../../store/schema.ts';
import { withExactMoney } from '../money.ts';
import { encodeSpendFields } from '../spend.ts';
import type { TimeWindow } from '../window.ts';
import { querySpendTree } from './spend-tree.ts';

export interface ByKeyRow extends ReturnType<typeof encodeSpendFields> {
  gateway_key_id: string | null;
  call_count: number;
  by_inbound_shape: Array<{ inbound_shape: string | null; call_count: number; cost_usd: number }>;
}

export async function queryByKey(
  db: Kysely<Database>,
  q: { window: TimeWindow; gatewayKey: string | null },
): Promise<ByKeyRow[]> {
  const where = q.gatewayKey === null ? sql`TRUE` : sql`gateway_key_id = ${q.gatewayKey}`;
  const keys = await querySpendTree(db, {
    window: q.window,
    where,
    outer: 'gateway_key_id',
    inner: 'inbound_shape',
  });
  return keys.map((k) =>
    withExactMoney(
      {
        gateway_key_id: k.id,
        ...encodeSpendFields(k.totals),
        call_count: k.totals.callCount,
        by_inbound_shape: k.leaves.map((s) =>
          withExactMoney(
            { inbound_shape: s.id, call_count: s.totals.callCount, cost_usd: toNumber(s.totals.cost) },
            { cost_usd: s.totals.cost },
          ),
        ),
      },
      { cost_usd: k.totals.cost },
    ),
  );
}

/**
 * @module Spend in two levels (by_key: key → inbound shape; by_team: team → user): one GROUP BY over both
 * columns, folded into outer groups that hold their totals and their inner groups, both levels by exact
 * cost descending (ties by id, nulls last).
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { engineOfKysely } from '../../store/dialect.ts';
import type { Database } from '../../store/schema.ts';
import type { SpendColumn } from '../read-paths.ts';
import {
  byCostDescending,
  decodeSpend,
  EMPTY_SPEND,
  mergeSpend,
  runSpendQuery,
  type SpendColumns,
  type SpendTotals,
  spendSource,
} from '../spend.ts';
import type { TimeWindow } from '../window.ts';

export interface SpendLeaf {
  id: string | null;
  totals: SpendTotals;
}

export interface SpendBranch extends SpendLeaf {
  /** The inner groups, by exact cost descending. */
  leaves: SpendLeaf[];
}

/** Spend of the window's calls matching `where`, grouped by `outer` and within it by `inner`. */
export async function querySpendTree(
  db: Kysely<Database>,
  q: { window: TimeWindow; where: RawBuilder<unknown>; outer: SpendColumn; inner: SpendColumn },
): Promise<SpendBranch[]> {
  const source = spendSource(q.window, q.where, [q.outer, q.inner], engineOfKysely(db));
  const outer = sql.ref(q.outer);
  const inner = sql.ref(q.inner);
  const rows = await runSpendQuery(
    db,
    (mode) => sql<SpendColumns & { outer_id: string | null; inner_id: string | null }>`
      SELECT ${outer} AS outer_id, ${inner} AS inner_id, ${source.aggregates(mode)} ${source.from}
      GROUP BY ${outer}, ${inner}`,
  );
  const branches = new Map<string | null, SpendBranch>();
  for (const r of rows) {
    const totals = decodeSpend(r);
    const branch = branches.get(r.outer_id) ?? { id: r.outer_id, totals: EMPTY_SPEND, leaves: [] };
    branch.totals = mergeSpend(branch.totals, totals);
    branch.leaves.push({ id: r.inner_id, totals });
    branches.set(r.outer_id, branch);
  }
  return descending([...branches.values()]).map((b) => ({ ...b, leaves: descending(b.leaves) }));
}

// --- internal ---

function descending<T extends SpendLeaf>(list: T[]): T[] {
  return byCostDescending(
    list,
    (x) => x.totals.cost,
    (x) => x.id,
  );
}

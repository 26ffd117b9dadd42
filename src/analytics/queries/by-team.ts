/**
 * @module GET /analytics/by_team (spec 3): spend per team (null for untagged traffic) with its distinct
 * tagged users and spend per user (null bucket for untagged); both levels by exact cost descending.
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

export interface ByTeamRow extends ReturnType<typeof encodeSpendFields> {
  team_id: string | null;
  call_count: number;
  user_count: number;
  by_user: Array<{ user_id: string | null; cost_usd: number; call_count: number }>;
}

export async function queryByTeam(
  db: Kysely<Database>,
  q: { window: TimeWindow; team: string | null },
): Promise<ByTeamRow[]> {
  const filter = q.team === null ? sql`TRUE` : sql`team_id = ${q.team}`;
  const source = spendSource(q.window, filter, ['team_id', 'user_id'], engineOfKysely(db));
  const rows = await runSpendQuery(
    db,
    (mode) => sql<SpendColumns & { team_id: string | null; user_id: string | null }>`
      SELECT team_id, user_id, ${source.aggregates(mode)} ${source.from} GROUP BY team_id, user_id`,
  );
  const teams = new Map<
    string | null,
    { totals: SpendTotals; users: Array<{ id: string | null; t: SpendTotals }> }
  >();
  for (const r of rows) {
    const t = decodeSpend(r);
    const team = teams.get(r.team_id) ?? { totals: EMPTY_SPEND, users: [] };
    team.totals = mergeSpend(team.totals, t);
    team.users.push({ id: r.user_id, t });
    teams.set(r.team_id, team);
  }
  const list = [...teams].map(([id, team]) => ({ id, ...team }));
  return byCostDescending(
    list,
    (x) => x.totals.cost,
    (x) => x.id,
  ).map((x) => ({
    team_id: x.id,
    ...encodeSpendFields(x.totals),
    call_count: x.totals.callCount,
    user_count: x.users.filter((u) => u.id !== null).length,
    by_user: byCostDescending(
      x.users,
      (u) => u.t.cost,
      (u) => u.id,
    ).map((u) => ({ user_id: u.id, cost_usd: toNumber(u.t.cost), call_count: u.t.callCount })),
  }));
}

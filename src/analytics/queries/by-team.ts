/**
 * @module GET /analytics/by_team (spec 3): spend per team (null for untagged traffic) with its distinct
 * tagged users and spend per user (null bucket for untagged); both levels by exact cost descending.
 */
import { type Kysely, sql } from 'kysely';
import { toNumber } from '../../lib/decimal.ts';
import type { Database } from '../../store/schema.ts';
import { withExactMoney } from '../money.ts';
import { encodeSpendFields } from '../spend.ts';
import type { TimeWindow } from '../window.ts';
import { querySpendTree } from './spend-tree.ts';

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
  const where = q.team === null ? sql`TRUE` : sql`team_id = ${q.team}`;
  const teams = await querySpendTree(db, { window: q.window, where, outer: 'team_id', inner: 'user_id' });
  return teams.map((t) =>
    withExactMoney(
      {
        team_id: t.id,
        ...encodeSpendFields(t.totals),
        call_count: t.totals.callCount,
        user_count: t.leaves.filter((u) => u.id !== null).length,
        by_user: t.leaves.map((u) =>
          withExactMoney(
            { user_id: u.id, cost_usd: toNumber(u.totals.cost), call_count: u.totals.callCount },
            { cost_usd: u.totals.cost },
          ),
        ),
      },
      { cost_usd: t.totals.cost },
    ),
  );
}

/**
 * @module GET /analytics/sessions (spec 3): the stored sessions, most recently updated or most costly
 * first. `order` maps through ORDER_BY (a whitelist), never into SQL text; not time-windowed.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { parseDecimal, toNumber } from '../../lib/decimal.ts';
import type { Database } from '../../store/schema.ts';
import { withExactMoney } from '../money.ts';
import type { SessionOrder } from '../params.ts';

export interface SessionSummary {
  id: string;
  workspace_path: string;
  active_model: string;
  cost_usd: number;
  turn_count: number;
  created_at: string;
  updated_at: string;
}

export async function querySessions(
  db: Kysely<Database>,
  q: { order: SessionOrder; limit: number },
): Promise<SessionSummary[]> {
  const r = await sql<{
    id: string;
    workspace_path: string;
    active_model: string;
    cost_so_far_usd: string;
    turn_count: number;
    created_at: string;
    updated_at: string;
  }>`SELECT id, workspace_path, active_model, cost_so_far_usd, turn_count, created_at, updated_at
    FROM sessions ORDER BY ${ORDER_BY[q.order]} LIMIT ${q.limit}`.execute(db);
  return r.rows.map((s) => {
    const cost = parseDecimal(s.cost_so_far_usd);
    const row = {
      id: s.id,
      workspace_path: s.workspace_path,
      active_model: s.active_model,
      cost_usd: toNumber(cost),
      turn_count: Number(s.turn_count),
      created_at: s.created_at,
      updated_at: s.updated_at,
    };
    return withExactMoney(row, { cost_usd: cost });
  });
}

// --- internal ---

const ORDER_BY: Record<SessionOrder, RawBuilder<unknown>> = {
  // updated_at is fixed-width ISO 8601 UTC, so text order is time order (index sessions_updated)
  recency: sql`updated_at DESC, id DESC`,
  // exact on both engines: a stored cost is a plain decimal (no sign, exponent or leading zero), so more
  // integer digits rank higher and equal counts rank as text; a cast to REAL (a double on SQLite, a float4
  // on PostgreSQL) tied costs that differ past its precision
  cost: sql`length(cost_so_far_usd) - length(ltrim(cost_so_far_usd, '0123456789')) DESC, cost_so_far_usd DESC, id DESC`,
};

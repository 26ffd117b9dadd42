/**
 * @module GET /analytics/routing (spec 3): route.decided events in the window, by the winning entry of
 * their chain. Wins and hard failures come from the route index alone; rejections walk the chains of
 * only the events whose payload mentions "rejected" (the index's prefilter), so the walk stays small.
 */
import { type Kysely, sql } from 'kysely';
import { POLICY_NAMES, type PolicyName } from '../../routing/facts.ts';
import { engineOfKysely } from '../../store/dialect.ts';
import type { Database } from '../../store/schema.ts';
import { expr, fromRoutes, timeRange } from '../read-paths.ts';
import { PG_PAYLOAD } from '../read-paths-postgres.ts';
import type { TimeWindow } from '../window.ts';

export interface RoutingData {
  wins_by_policy: Array<{ policy: PolicyName; count: number }>;
  hard_failures: number;
  rejections: Array<{ policy: string | null; validation_failure: string | null; count: number }>;
  wins_by_model: Array<{ chosen_model: string; count: number }>;
}

export async function queryRouting(db: Kysely<Database>, window: TimeWindow): Promise<RoutingData> {
  const engine = engineOfKysely(db);
  // the expressions are read in a co-routine (LIMIT -1): as keys of this GROUP BY, SQLite would
  // recompute them from every payload instead of reading the route index. PostgreSQL's winner index is
  // NULL unless a JSON integer, which SQLite's typeof() = 'integer' tells apart.
  const integer = engine === 'sqlite' ? sql`typeof(wi) = 'integer'` : sql`wi IS NOT NULL`;
  const limit = engine === 'sqlite' ? sql`LIMIT -1` : sql``;
  const wins = await sql<{ hard: number; policy: string | null; chosen_model: string | null; n: number }>`
    SELECT
      CASE WHEN ${integer} AND wi >= 0 AND wi < len THEN 0 ELSE 1 END AS hard,
      policy, chosen_model, count(*) AS n
    FROM (
      SELECT ${expr('winnerIndex', engine)} AS wi, ${expr('chainLength', engine)} AS len,
        ${expr('winnerPolicy', engine)} AS policy, ${expr('chosenModel', engine)} AS chosen_model
      ${fromRoutes(window, engine)} ${limit}
    ) AS routes
    GROUP BY 1, 2, 3`.execute(db);
  const byPolicy = new Map<string, number>();
  const byModel = new Map<string, number>();
  let hardFailures = 0;
  for (const r of wins.rows) {
    const n = Number(r.n);
    if (r.hard) {
      hardFailures += n;
      continue;
    }
    if (r.policy !== null) byPolicy.set(r.policy, (byPolicy.get(r.policy) ?? 0) + n);
    if (r.chosen_model !== null) byModel.set(r.chosen_model, (byModel.get(r.chosen_model) ?? 0) + n);
  }
  return {
    // all seven slots in chain order, zeros included
    wins_by_policy: POLICY_NAMES.map((policy) => ({ policy, count: byPolicy.get(policy) ?? 0 })),
    hard_failures: hardFailures,
    rejections: await (engine === 'sqlite' ? queryRejections(db, window) : queryRejectionsPg(db, window)),
    wins_by_model: [...byModel]
      .map(([chosen_model, count]) => ({ chosen_model, count }))
      .sort((a, b) => b.count - a.count || a.chosen_model.localeCompare(b.chosen_model)),
  };
}

// --- internal ---

/** Chain entries with verdict rejected, hard-failure events included; most frequent first. */
async function queryRejections(db: Kysely<Database>, window: TimeWindow): Promise<RoutingData['rejections']> {
  // a non-object entry's value is plain SQL text, which ->> would refuse: the CASE reads objects only.
  // The prefilter is compared with 1: as a bare boolean term SQLite evaluates it on the payload.
  const r = await sql<{ policy: string | null; validation_failure: string | null; n: number }>`
    SELECT entry.value ->> 'policy' AS policy, entry.value ->> 'validation_failure' AS validation_failure,
      count(*) AS n
    FROM events INDEXED BY events_route, json_each(events.payload, '$.chain') AS entry
    WHERE events.type = 'route.decided' AND ${timeRange(window, sql.raw('events.timestamp_us'))}
      AND (${expr('mayHoldRejection')}) = 1
      AND CASE WHEN entry.type = 'object' THEN entry.value ->> 'verdict' END = 'rejected'
    GROUP BY 1, 2`.execute(db);
  return sortRejections(r.rows);
}

/** queryRejections on PostgreSQL: the chain's entries through json_array_elements. */
async function queryRejectionsPg(
  db: Kysely<Database>,
  window: TimeWindow,
): Promise<RoutingData['rejections']> {
  const r = await sql<{ policy: string | null; validation_failure: string | null; n: number }>`
    SELECT entry.value ->> 'policy' AS policy, entry.value ->> 'validation_failure' AS validation_failure,
      count(*) AS n
    FROM events CROSS JOIN LATERAL (SELECT ${sql.raw(PG_PAYLOAD)}::json -> 'chain' AS chain OFFSET 0) AS parsed
      CROSS JOIN LATERAL json_array_elements(CASE WHEN json_typeof(parsed.chain) = 'array'
      THEN parsed.chain ELSE '[]'::json END) AS entry(value)
    WHERE events.type = 'route.decided' AND ${timeRange(window, sql.raw('events.timestamp_us'))}
      AND ${expr('mayHoldRejection', 'postgres')}
      AND CASE WHEN json_typeof(entry.value) = 'object' THEN entry.value ->> 'verdict' END = 'rejected'
    GROUP BY 1, 2`.execute(db);
  return sortRejections(r.rows);
}

function sortRejections(
  rows: Array<{ policy: string | null; validation_failure: string | null; n: number }>,
): RoutingData['rejections'] {
  return rows
    .map((x) => ({ policy: x.policy, validation_failure: x.validation_failure, count: Number(x.n) }))
    .sort(
      (a, b) =>
        b.count - a.count ||
        String(a.policy).localeCompare(String(b.policy)) ||
        String(a.validation_failure).localeCompare(String(b.validation_failure)),
    );
}

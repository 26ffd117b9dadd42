/**
 * @module PATTERN_STATS_SQL (stats-query.ts) on a PostgreSQL store: the same samples, successes, retries
 * and median costs, in one statement over the pool (asynchronous, so no worker thread). Each payload is read
 * as json with its \u0000 escapes as \ufffd (PostgreSQL refuses to extract from a payload holding one);
 * a sketch is compared as its text (json has no equality); the median ranks costs as exact decimals and
 * keys and models come back in byte order, as SQLite's binary collation sorts them.
 */
import { type Kysely, sql } from 'kysely';
import { errorMessage, SvcError } from '../../lib/errors.ts';
import { runLongStatements } from '../../store/statement-bounds.ts';
import { STRUCTURAL_REVISION } from './fingerprint.ts';
import type { PatternStatsParams } from './stats-query.ts';
import { RETRY_WINDOW_US } from './stats-query.ts';
import type { StatsReader } from './stats-worker.ts';
import type { PatternStatRow } from './table.ts';

/**
 * Reads the statistics from `db` (a PostgreSQL store's Kysely), bounded like a report's statements. A stop
 * cancels the statement on the server (pg_cancel_backend) before it answers: the pool's end waits for every
 * connection it lent, so a statement left to run would hold the stop for as long as it takes.
 */
export function createPostgresStatsReader(db: Kysely<any>): StatsReader {
  return (params, signal) => {
    if (signal.aborted) return Promise.reject(aborted());
    return new Promise<PatternStatRow[]>((resolve, reject) => {
      /** The backend running the statement, once known. */
      let pid: number | undefined;
      /** The cancel sent for it: the connection goes back to the pool only once that has landed. */
      let cancelling: Promise<void> | undefined;
      const onAbort = () => {
        cancelling =
          pid === undefined
            ? Promise.resolve()
            : sql`SELECT pg_cancel_backend(${pid})`.execute(db).then(
                () => undefined,
                () => undefined,
              );
        void cancelling.then(() => reject(aborted()));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      runLongStatements(() =>
        db.connection().execute(async (conn) => {
          pid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(conn)).rows[0]?.pid;
          if (signal.aborted) throw aborted();
          try {
            return await queryPatternStatsPostgres(conn, params);
          } finally {
            // the connection goes back to the pool: a cancel from now on could stop another's statement, and
            // one already sent must land first (on this idle backend it cancels nothing)
            pid = undefined;
            if (cancelling) await cancelling;
          }
        }),
      )
        .then(resolve, (err: unknown) =>
          reject(
            signal.aborted
              ? aborted()
              : new SvcError('store_error', {
                  message: `pattern statistics query failed: ${errorMessage(err)}`,
                }),
          ),
        )
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  };
}

/** What slot 4 learns from a PostgreSQL store: the rows queryPatternStats reads from a SQLite one. */
export async function queryPatternStatsPostgres(
  db: Kysely<any>,
  p: PatternStatsParams,
): Promise<PatternStatRow[]> {
  const r = await sql<{
    key: string;
    model: string;
    samples: string;
    successes: string;
    median_low: string | null;
    median_high: string | null;
  }>`
WITH routes AS MATERIALIZED (
  SELECT id, turn_id, timestamp_us,
    j ->> 'chosen_model' AS model,
    j -> 'fingerprint' ->> 'structural' AS structural,
    CASE WHEN json_typeof(j -> 'fingerprint' -> 'sketch') = 'array' THEN j -> 'fingerprint' -> 'sketch' END AS sketch,
    CASE
      WHEN session_id IS NOT NULL THEN 's ' || session_id
      WHEN gateway_key_id IS NOT NULL THEN 'k ' || gateway_key_id || ' ' || (j -> 'fingerprint' ->> 'messages')
      ELSE 'r ' || id
    END AS caller
  FROM events CROSS JOIN LATERAL (SELECT ${json('events')} AS j OFFSET 0) AS parsed
  WHERE type = 'route.decided' AND timestamp_us >= ${p.sinceUs} AND turn_id IS NOT NULL
    AND j ->> 'chosen_model' IS NOT NULL
),
twins AS (
  SELECT r.*,
    lead(model) OVER w AS next_model,
    lead(timestamp_us) OVER w AS next_at
  FROM routes r
  WINDOW w AS (PARTITION BY caller, sketch::text ORDER BY id)
),
samples AS MATERIALIZED (
  SELECT r.structural, r.sketch, r.model,
    (SELECT CASE WHEN json_typeof(j -> 'cost_usd') = 'string' AND (j ->> 'cost_usd') ~ ${DECIMAL}
        THEN j ->> 'cost_usd' END
      FROM (SELECT t.payload FROM events t
        WHERE t.turn_id = r.turn_id AND t.type IN ('turn.completed', 'turn.cancelled') ORDER BY t.id LIMIT 1) AS t
      CROSS JOIN LATERAL (SELECT ${json('t')} AS j OFFSET 0) AS parsed) AS cost,
    (EXISTS (SELECT 1 FROM events t WHERE t.turn_id = r.turn_id AND t.type = 'turn.completed'
        AND (${json('t')} ->> 'error_code') IS NULL)
      AND NOT EXISTS (SELECT 1 FROM events t WHERE t.turn_id = r.turn_id AND (
        t.type IN ('llm.call_failed', 'turn.cancelled')
        OR (t.type = 'llm.call_completed'
          AND ((${json('t')} ->> 'error_class') IS NOT NULL OR t.model IS DISTINCT FROM r.model))))
      AND NOT (r.next_model IS NOT NULL AND r.next_model <> r.model
        AND r.next_at <= r.timestamp_us + ${RETRY_WINDOW_US})
    )::int AS ok
  FROM twins r
  WHERE r.structural LIKE ${`${STRUCTURAL_REVISION}:%`}
    AND EXISTS (SELECT 1 FROM events c
      WHERE c.turn_id = r.turn_id AND c.type IN ('llm.call_completed', 'llm.call_failed'))
    AND EXISTS (SELECT 1 FROM events e
      WHERE e.turn_id = r.turn_id AND e.type IN ('turn.completed', 'turn.cancelled', 'bus.gap_detected'))
),
keyed AS MATERIALIZED (
  SELECT structural AS key, model, ok, cost FROM samples WHERE ${p.version}::text = 'structural'
  UNION ALL
  SELECT s.structural || '/' || (b.value #>> '{}'), s.model, s.ok, s.cost
  FROM samples s CROSS JOIN LATERAL json_array_elements(s.sketch) AS b(value)
  WHERE ${p.version}::text = 'hybrid' AND json_typeof(b.value) = 'string'
),
totals AS MATERIALIZED (
  SELECT key, model, count(*) AS samples, sum(ok) AS successes
  FROM keyed GROUP BY key, model HAVING count(*) >= ${p.minSamples}
),
ranked AS (
  SELECT k.key, k.model, k.cost,
    row_number() OVER (PARTITION BY k.key, k.model ORDER BY k.cost::numeric, k.cost COLLATE "C") AS rn,
    count(*) OVER (PARTITION BY k.key, k.model) AS n
  FROM keyed k JOIN totals t ON t.key = k.key AND t.model = k.model
  WHERE k.ok = 1 AND k.cost IS NOT NULL
),
medians AS (
  SELECT key, model,
    max(CASE WHEN rn = (n + 1) / 2 THEN cost END) AS median_low,
    max(CASE WHEN rn = n / 2 + 1 THEN cost END) AS median_high
  FROM ranked GROUP BY key, model
)
SELECT t.key, t.model, t.samples, t.successes, m.median_low, m.median_high
FROM totals t LEFT JOIN medians m ON m.key = t.key AND m.model = t.model
ORDER BY t.key COLLATE "C", t.model COLLATE "C"`.execute(db);
  return r.rows.map((row) => ({
    key: row.key,
    model: row.model,
    samples: Number(row.samples),
    successes: Number(row.successes),
    median_low: row.median_low,
    median_high: row.median_high,
  }));
}

// --- internal ---

/** A plain decimal (`0.001`, `12`), as svc writes a cost; stats-query.ts's decimalOrNull on SQLite. */
const DECIMAL = String.raw`^[0-9]+(\.[0-9]+)?$`;

/** The payload of the events row `alias` as json, its \u0000 escapes read as \ufffd. */
function json(alias: string) {
  return sql.raw(String.raw`replace(${alias}.payload, '\u0000', '\ufffd')::json`);
}

function aborted(): SvcError {
  return new SvcError('cancelled', { message: 'the pattern table rebuild was stopped' });
}

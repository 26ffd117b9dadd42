/**
 * @module What slot 4 learns, read from the trace store alone in one SQL statement (run by the rebuild
 * worker, and in process by `svc routing explain` and tests). A sample is one routed request (a gateway
 * request, or an agent turn) whose route.decided carries a fingerprint, that made at least one call and has
 * ended (turn.completed, turn.cancelled, or the bus.gap_detected of a restart after a kill).
 * It succeeded when its turn completed without an error code, no llm.call_failed, no cancelled call or
 * turn, no call on another model, and was not retried on another model: the next request of the same
 * session (agent), or of the same gateway key with the same message count (gateway), with the same sketch
 * within RETRY_WINDOW_US went to another model (found with one window function, not a scan per request).
 * Its cost is the turn's cost_usd. Aggregated per (key, model) with the median cost.
 */
import type { DatabaseSync } from 'node:sqlite';
import { type FingerprintVersion, STRUCTURAL_REVISION } from './fingerprint.ts';
import type { PatternStatRow } from './table.ts';

/** A later request counts as a retry of an earlier one only within this window: 30 minutes. */
export const RETRY_WINDOW_US = 30 * 60 * 1_000_000;

export interface PatternStatsParams {
  /** Only requests routed at or after this time (epoch µs): now − lookback_days. */
  sinceUs: number;
  version: FingerprintVersion;
  /** Groups with fewer samples are left out (1 returns every group, as explain wants). */
  minSamples: number;
}

/** Named parameters of PATTERN_STATS_SQL (node:sqlite binds them without the leading colon). */
export function statsBindings(p: PatternStatsParams): Record<string, number | string> {
  return {
    since: p.sinceUs,
    version: p.version,
    min_samples: p.minSamples,
    retry_window: RETRY_WINDOW_US,
    revision: `${STRUCTURAL_REVISION}:%`,
  };
}

/** Runs the statement on this thread (node:sqlite is synchronous: never on a server's request path). */
export function queryPatternStats(db: DatabaseSync, p: PatternStatsParams): PatternStatRow[] {
  return db.prepare(PATTERN_STATS_SQL).all(statsBindings(p)) as unknown as PatternStatRow[];
}

/** `text` when it is a plain decimal (`0.001`, `12`), as svc writes a cost, else NULL. */
function decimalOrNull(text: string): string {
  return `CASE WHEN ${text} GLOB '[0-9]*' AND ${text} NOT GLOB '*[^0-9.]*' AND ${text} NOT GLOB '*.*.*' AND ${text} NOT GLOB '*.' THEN ${text} END`;
}

export const PATTERN_STATS_SQL = `
WITH routes AS MATERIALIZED (
  SELECT id, turn_id, timestamp_us,
    json_extract(payload, '$.chosen_model') AS model,
    json_extract(payload, '$.fingerprint.structural') AS structural,
    -- a fingerprint or cost of another shape than svc writes (another tool's rows, a hand edit) is left out
    -- of that sample, never a failed rebuild: json_each over a string is malformed JSON, a band that is no
    -- string makes no key, a cost that is no decimal string has no median
    CASE WHEN json_type(payload, '$.fingerprint.sketch') = 'array'
      THEN json_extract(payload, '$.fingerprint.sketch') END AS sketch,
    -- whose next request with the same sketch would be a retry: the session, or the key and message count
    CASE
      WHEN session_id IS NOT NULL THEN 's ' || session_id
      WHEN gateway_key_id IS NOT NULL
        THEN 'k ' || gateway_key_id || ' ' || json_extract(payload, '$.fingerprint.messages')
      ELSE 'r ' || id
    END AS caller
  FROM events
  WHERE type = 'route.decided' AND timestamp_us >= :since AND turn_id IS NOT NULL
    AND json_extract(payload, '$.chosen_model') IS NOT NULL
),
twins AS (
  SELECT r.*,
    lead(model) OVER w AS next_model,
    lead(timestamp_us) OVER w AS next_at
  FROM routes r
  WINDOW w AS (PARTITION BY caller, sketch ORDER BY id)
),
samples AS MATERIALIZED (
  SELECT r.structural, r.sketch, r.model,
    (SELECT CASE WHEN json_type(t.payload, '$.cost_usd') = 'text' THEN ${decimalOrNull("json_extract(t.payload, '$.cost_usd')")} END
      FROM events t
      WHERE t.turn_id = r.turn_id AND t.type IN ('turn.completed', 'turn.cancelled') ORDER BY t.id LIMIT 1) AS cost,
    (EXISTS (SELECT 1 FROM events t WHERE t.turn_id = r.turn_id AND t.type = 'turn.completed'
        AND json_extract(t.payload, '$.error_code') IS NULL)
      AND NOT EXISTS (SELECT 1 FROM events t WHERE t.turn_id = r.turn_id AND (
        t.type IN ('llm.call_failed', 'turn.cancelled')
        OR (t.type = 'llm.call_completed'
          AND (json_extract(t.payload, '$.error_class') IS NOT NULL OR t.model IS NOT r.model))))
      AND NOT (r.next_model IS NOT NULL AND r.next_model <> r.model
        AND r.next_at <= r.timestamp_us + :retry_window)
    ) AS ok
  FROM twins r
  WHERE r.structural LIKE :revision
    AND EXISTS (SELECT 1 FROM events c
      WHERE c.turn_id = r.turn_id AND c.type IN ('llm.call_completed', 'llm.call_failed'))
    -- a turn still running (an agent's tools between two calls) is no sample yet, not a failure
    AND EXISTS (SELECT 1 FROM events e
      WHERE e.turn_id = r.turn_id AND e.type IN ('turn.completed', 'turn.cancelled', 'bus.gap_detected'))
),
keyed AS MATERIALIZED (
  SELECT structural AS key, model, ok, cost FROM samples WHERE :version = 'structural'
  UNION ALL
  SELECT s.structural || '/' || b.value, s.model, s.ok, s.cost
  FROM samples s, json_each(s.sketch) b WHERE :version = 'hybrid' AND b.type = 'text'
),
totals AS MATERIALIZED (
  SELECT key, model, count(*) AS samples, sum(ok) AS successes
  FROM keyed GROUP BY key, model HAVING count(*) >= :min_samples
),
ranked AS (
  SELECT k.key, k.model, k.cost,
    row_number() OVER (PARTITION BY k.key, k.model ORDER BY CAST(k.cost AS REAL), k.cost) AS rn,
    count(*) OVER (PARTITION BY k.key, k.model) AS n
  FROM keyed k JOIN totals t ON t.key = k.key AND t.model = k.model
  WHERE k.ok AND k.cost IS NOT NULL
),
medians AS (
  SELECT key, model,
    max(CASE WHEN rn = (n + 1) / 2 THEN cost END) AS median_low,
    max(CASE WHEN rn = n / 2 + 1 THEN cost END) AS median_high
  FROM ranked GROUP BY key, model
)
SELECT t.key, t.model, t.samples, t.successes, m.median_low, m.median_high
FROM totals t LEFT JOIN medians m ON m.key = t.key AND m.model = t.model
ORDER BY t.key, t.model
`;

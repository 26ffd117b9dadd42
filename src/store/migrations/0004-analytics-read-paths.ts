import { type Kysely, sql } from 'kysely';

/**
 * Frozen. Read paths of the /analytics namespace (spec 3, issue 12): two covering partial indexes on
 * expressions, so a windowed query reads one index range and never a payload, and an index for the
 * sessions list by recency. Expressions, not generated columns: a STRICT table computes and type-checks
 * every generated column on every insert, while an index expression is computed only for the rows its
 * WHERE admits. src/analytics/read-paths.ts repeats each expression verbatim (SQLite matches them as
 * written); a unit test holds the two together. No expression can fail on valid JSON: a failing one
 * would refuse the event. Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // spend: every stamped cost of a model call (llm.call_completed, and the partial usage an agent's
  // cancelled call records on llm.call_failed). Leading UTC hour: group_by=hour|day reads in index order.
  await sql`CREATE INDEX events_spend ON events (
      timestamp_us / 3600000000,
      timestamp_us,
      type,
      model,
      provider,
      ${sql.raw(COST_NANO)},
      cost_usd,
      json_extract(payload, '$.input_tokens'),
      json_extract(payload, '$.output_tokens'),
      json_extract(payload, '$.cached_input_tokens'),
      json_extract(payload, '$.cache_creation_input_tokens'),
      json_extract(payload, '$.latency_ms'),
      session_id,
      json_extract(payload, '$.parent_session_id'),
      gateway_key_id,
      user_id,
      team_id,
      json_extract(payload, '$.inbound_shape')
    ) WHERE type IN ('llm.call_completed', 'llm.call_failed') AND cost_usd IS NOT NULL`.execute(db);
  await sql`CREATE INDEX events_route ON events (
      timestamp_us,
      json_extract(payload, '$.winner_index'),
      json_array_length(payload, '$.chain'),
      ${sql.raw(WINNER_POLICY)},
      json_extract(payload, '$.chosen_model'),
      instr(payload, '"rejected"') > 0
    ) WHERE type = 'route.decided'`.execute(db);
  await sql`CREATE INDEX sessions_updated ON sessions (updated_at DESC, id DESC)`.execute(db);
  await sql`PRAGMA user_version = 4`.execute(db);
}

// --- internal ---

/** cost_usd in 10^-9 USD when it is plain text of <= 9 integer and <= 9 fraction digits, else NULL. */
const COST_NANO = `CASE WHEN cost_usd GLOB '[0-9]*' AND cost_usd NOT GLOB '*[^0-9.]*' AND cost_usd NOT GLOB '*.*.*' AND instr(cost_usd || '.', '.') BETWEEN 2 AND 10 AND length(cost_usd) - instr(cost_usd || '.', '.') <= 9 THEN CAST(substr(cost_usd, 1, instr(cost_usd || '.', '.') - 1) AS INTEGER) * 1000000000 + CAST(substr(substr(cost_usd, instr(cost_usd || '.', '.') + 1) || '000000000', 1, 9) AS INTEGER) END`;

/** The winning entry's policy when winner_index is an integer inside the chain, else NULL. */
const WINNER_POLICY = `CASE WHEN json_type(payload, '$.winner_index') = 'integer' AND json_extract(payload, '$.winner_index') >= 0 AND json_extract(payload, '$.winner_index') < json_array_length(payload, '$.chain') THEN json_extract(payload, '$.chain[' || json_extract(payload, '$.winner_index') || '].policy') END`;

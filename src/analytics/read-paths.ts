/**
 * @module The SQL the analytics queries read through: the two covering indexes of migration 0004 and
 * their expressions, repeated verbatim (SQLite uses an indexed expression only when the query spells it
 * the same way; test/unit/analytics/no-endpoint-scans-the-events-table.test.ts holds them together). Every
 * fragment is a constant: request values only ever reach SQL as bound parameters. On PostgreSQL the same
 * names read read-paths-postgres.ts (no INDEXED BY, no co-routine LIMIT), selected by each `engine`.
 */
import { type RawBuilder, sql } from 'kysely';
import type { EngineName } from '../store/dialect.ts';
import { PG_EVENTS, PG_EXPR } from './read-paths-postgres.ts';
import type { TimeWindow } from './window.ts';

const US_PER_HOUR = 3_600_000_000;

/** Index expressions, by what they read. */
export const EXPR = {
  hour: 'timestamp_us / 3600000000',
  costNano: `CASE WHEN cost_usd GLOB '[0-9]*' AND cost_usd NOT GLOB '*[^0-9.]*' AND cost_usd NOT GLOB '*.*.*' AND instr(cost_usd || '.', '.') BETWEEN 2 AND 10 AND length(cost_usd) - instr(cost_usd || '.', '.') <= 9 THEN CAST(substr(cost_usd, 1, instr(cost_usd || '.', '.') - 1) AS INTEGER) * 1000000000 + CAST(substr(substr(cost_usd, instr(cost_usd || '.', '.') + 1) || '000000000', 1, 9) AS INTEGER) END`,
  inputTokens: "json_extract(payload, '$.input_tokens')",
  outputTokens: "json_extract(payload, '$.output_tokens')",
  cachedInputTokens: "json_extract(payload, '$.cached_input_tokens')",
  cacheCreationInputTokens: "json_extract(payload, '$.cache_creation_input_tokens')",
  latencyMs: "json_extract(payload, '$.latency_ms')",
  parentSessionId: "json_extract(payload, '$.parent_session_id')",
  inboundShape: "json_extract(payload, '$.inbound_shape')",
  winnerIndex: "json_extract(payload, '$.winner_index')",
  chainLength: "json_array_length(payload, '$.chain')",
  winnerPolicy: `CASE WHEN json_type(payload, '$.winner_index') = 'integer' AND json_extract(payload, '$.winner_index') >= 0 AND json_extract(payload, '$.winner_index') < json_array_length(payload, '$.chain') THEN json_extract(payload, '$.chain[' || json_extract(payload, '$.winner_index') || '].policy') END`,
  chosenModel: "json_extract(payload, '$.chosen_model')",
  mayHoldRejection: `instr(payload, '"rejected"') > 0`,
} as const;

/** An index expression as a SQL fragment, on `engine`. */
export function expr(name: keyof typeof EXPR, engine: EngineName = 'sqlite'): RawBuilder<unknown> {
  return sql.raw(engine === 'sqlite' ? EXPR[name] : PG_EXPR[name]);
}

/**
 * `FROM events INDEXED BY events_spend WHERE <the index's own WHERE> AND <window>`, narrowed to the rows
 * spend is read from: the stamped cost of `llm.call_completed` (spec 3: "Source: llm.call_completed events
 * with stamped cost"). The index also holds the costed llm.call_failed of cancelled agent calls; its own
 * WHERE stays spelled out so SQLite can prove the index applies. INDEXED BY because the planner, which
 * cannot see that the index covers its expressions, would pick events_type_time and parse every payload;
 * SQLite refuses the query outright if the index is missing.
 */
export function fromSpend(window: TimeWindow, engine: EngineName = 'sqlite'): RawBuilder<unknown> {
  if (engine === 'postgres')
    return sql`FROM ${sql.raw(PG_EVENTS)} WHERE type = 'llm.call_completed'
      AND cost_usd IS NOT NULL AND ${timeRange(window)}`;
  return sql`FROM events INDEXED BY events_spend
    WHERE type IN ('llm.call_completed', 'llm.call_failed') AND cost_usd IS NOT NULL
    AND type = 'llm.call_completed' AND ${hourRange(window)} AND ${timeRange(window)}`;
}

/** `FROM events INDEXED BY events_route WHERE type = 'route.decided' AND <window>`. */
export function fromRoutes(window: TimeWindow, engine: EngineName = 'sqlite'): RawBuilder<unknown> {
  if (engine === 'postgres')
    return sql`FROM ${sql.raw(PG_EVENTS)} WHERE type = 'route.decided' AND ${timeRange(window)}`;
  return sql`FROM events INDEXED BY events_route WHERE type = 'route.decided' AND ${timeRange(window)}`;
}

/**
 * What the spend index holds, by the plain names the queries use: each an index expression or a column.
 * `spendRows` projects them under these names.
 */
export const SPEND_COLUMNS = {
  hour: EXPR.hour,
  type: 'type',
  model: 'model',
  provider: 'provider',
  session_id: 'session_id',
  parent_session_id: EXPR.parentSessionId,
  gateway_key_id: 'gateway_key_id',
  user_id: 'user_id',
  team_id: 'team_id',
  inbound_shape: EXPR.inboundShape,
  cost_nano: EXPR.costNano,
  cost_usd: 'cost_usd',
  input_tokens: EXPR.inputTokens,
  output_tokens: EXPR.outputTokens,
  cached_input_tokens: EXPR.cachedInputTokens,
  cache_creation_input_tokens: EXPR.cacheCreationInputTokens,
  latency_ms: EXPR.latencyMs,
} as const;
export type SpendColumn = keyof typeof SPEND_COLUMNS;

/** SPEND_COLUMNS on `engine`. */
export function spendColumns(engine: EngineName): Record<SpendColumn, string> {
  return engine === 'sqlite' ? SPEND_COLUMNS : PG_SPEND_COLUMNS;
}

const PG_SPEND_COLUMNS: Record<SpendColumn, string> = {
  ...SPEND_COLUMNS,
  hour: PG_EXPR.hour,
  parent_session_id: PG_EXPR.parentSessionId,
  inbound_shape: PG_EXPR.inboundShape,
  cost_nano: PG_EXPR.costNano,
  input_tokens: PG_EXPR.inputTokens,
  output_tokens: PG_EXPR.outputTokens,
  cached_input_tokens: PG_EXPR.cachedInputTokens,
  cache_creation_input_tokens: PG_EXPR.cacheCreationInputTokens,
  latency_ms: PG_EXPR.latencyMs,
};

/**
 * The window's spend rows with plain column names (`names`, default all), as a subquery to aggregate over. SQLite reads the
 * indexed expressions here, but recomputes them from the payload when they are the keys of an outer
 * GROUP BY or window sort; LIMIT -1 keeps it a separate co-routine (a subquery with a LIMIT is never
 * flattened into an aggregate), so every value comes from the index.
 */
export function spendRows(
  window: TimeWindow,
  where: RawBuilder<unknown> = sql`TRUE`,
  names: readonly SpendColumn[] = Object.keys(SPEND_COLUMNS) as SpendColumn[],
  engine: EngineName = 'sqlite',
): RawBuilder<unknown> {
  const source = spendColumns(engine);
  const columns = names.map((alias) => sql.raw(`${source[alias]} AS ${alias}`));
  const limit = engine === 'sqlite' ? sql` LIMIT -1` : sql``;
  return sql`(SELECT ${sql.join(columns)} ${fromSpend(window, engine)} AND ${where}${limit}) AS spend`;
}

/** `timestamp_us` inside the window: `from` inclusive, `to` exclusive. */
export function timeRange(window: TimeWindow, column = sql.raw('timestamp_us')): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  if (window.startUs !== null) parts.push(sql`${column} >= ${window.startUs}`);
  if (window.endUs !== null) parts.push(sql`${column} < ${window.endUs}`);
  return parts.length === 0 ? sql`TRUE` : sql.join(parts, sql` AND `);
}

/** The window's UTC hours, for the spend index's leading column (the exact bounds follow separately). */
function hourRange(window: TimeWindow): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  const hour = expr('hour');
  if (window.startUs !== null) parts.push(sql`${hour} >= ${Math.floor(window.startUs / US_PER_HOUR)}`);
  if (window.endUs !== null) parts.push(sql`${hour} <= ${Math.floor((window.endUs - 1) / US_PER_HOUR)}`);
  return parts.length === 0 ? sql`TRUE` : sql.join(parts, sql` AND `);
}

/** Start of UTC hour `hour` in epoch microseconds. */
export function hourStartUs(hour: number): number {
  return hour * US_PER_HOUR;
}

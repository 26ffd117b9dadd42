/**
 * @module Spend measures over the spend index: exact cost, token sums, latency and call count, as SQL
 * aggregates and their decoded totals. Cost is summed as integer nano-dollars (the index stores them)
 * plus decimal_sum over any cost the nano form cannot hold, so the sum is exact and needs no JS call per
 * row; should the integer sum overflow (about $9.2 billion in one group), the query runs again with
 * decimal_sum over every row. On PostgreSQL every cost is one exact NUMERIC sum of the cost_usd text.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { add, compare, type Decimal, parseDecimal, toNumber, ZERO } from '../lib/decimal.ts';
import { type EngineName, pgCostNumeric } from '../store/dialect.ts';
import type { Database } from '../store/schema.ts';
import { fromSpend, type SpendColumn, spendColumns, spendRows } from './read-paths.ts';
import type { TimeWindow } from './window.ts';

export interface SpendTotals {
  cost: Decimal;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheCreationInputTokens: number;
  /** Sum and count of the rows that carry a latency (for the mean). */
  latencySumMs: number;
  latencyCount: number;
  callCount: number;
}

/** The aggregate columns as SQL rows carry them. */
export interface SpendColumns {
  cost_nano: string | null;
  cost_rest: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cached_input_tokens: number | null;
  cache_creation_input_tokens: number | null;
  latency_sum_ms: number | null;
  latency_count: number;
  call_count: number;
}

export type CostMode = 'nano' | 'decimal';

const ZERO_TEXT = /^0(\.0*)?$/;

/** The spendRows columns spendAggregates reads; project only these plus the GROUP BY keys (width costs). */
const MEASURE_COLUMNS = [
  'cost_nano',
  'cost_usd',
  'input_tokens',
  'output_tokens',
  'cached_input_tokens',
  'cache_creation_input_tokens',
  'latency_ms',
] as const satisfies readonly SpendColumn[];

/** MEASURE_COLUMNS plus `keys`. */
function measuredWith(...keys: SpendColumn[]): SpendColumn[] {
  return [...keys, ...MEASURE_COLUMNS];
}

/** Spend columns stored as such (not index expressions): a GROUP BY on them reads the index directly. */
const STORED_COLUMNS: ReadonlySet<SpendColumn> = new Set<SpendColumn>([
  'type',
  'model',
  'provider',
  'session_id',
  'gateway_key_id',
  'user_id',
  'team_id',
]);

/**
 * `FROM …` and `spendAggregates(mode, over)` for spend grouped by `keys` (their plain names). Stored
 * columns group straight over the index, about 15 % faster; a key that is an index expression groups
 * over spendRows, since SQLite would recompute an expression key from every payload.
 */
export function spendSource(
  window: TimeWindow,
  where: RawBuilder<unknown>,
  keys: readonly SpendColumn[],
  engine: EngineName = 'sqlite',
): { from: RawBuilder<unknown>; aggregates: (mode: CostMode) => RawBuilder<unknown> } {
  if (keys.every((k) => STORED_COLUMNS.has(k)))
    return {
      from: sql`${fromSpend(window, engine)} AND ${where}`,
      aggregates: (mode) => spendAggregates(mode, 'index', engine),
    };
  return {
    from: sql`FROM ${spendRows(window, where, measuredWith(...keys), engine)}`,
    aggregates: (mode) => spendAggregates(mode, 'rows', engine),
  };
}

/**
 * The select list of SpendColumns (aggregates; add GROUP BY keys beside it), over `spendRows` (plain
 * names) or straight over the spend index (its expressions; for GROUP BY on the leading hour, or none).
 */
export function spendAggregates(
  mode: CostMode,
  over: 'rows' | 'index' = 'rows',
  engine: EngineName = 'sqlite',
): RawBuilder<unknown> {
  const c = (name: SpendColumn) => sql.raw(over === 'rows' ? name : spendColumns(engine)[name]);
  if (engine === 'postgres')
    return sql`NULL AS cost_nano, CAST(sum(${pgCostNumeric(c('cost_usd'))}) AS text) AS cost_rest,
      sum(${c('input_tokens')}) AS input_tokens,
      sum(${c('output_tokens')}) AS output_tokens,
      sum(${c('cached_input_tokens')}) AS cached_input_tokens,
      sum(${c('cache_creation_input_tokens')}) AS cache_creation_input_tokens,
      sum(${c('latency_ms')}) AS latency_sum_ms,
      count(${c('latency_ms')}) AS latency_count,
      count(*) AS call_count`;
  const cost =
    mode === 'nano'
      ? sql`CAST(sum(${c('cost_nano')}) AS TEXT) AS cost_nano,
          decimal_sum(${c('cost_usd')}) FILTER (WHERE (${c('cost_nano')}) IS NULL) AS cost_rest`
      : sql`NULL AS cost_nano, decimal_sum(${c('cost_usd')}) AS cost_rest`;
  return sql`${cost},
    sum(${c('input_tokens')}) AS input_tokens,
    sum(${c('output_tokens')}) AS output_tokens,
    sum(${c('cached_input_tokens')}) AS cached_input_tokens,
    sum(${c('cache_creation_input_tokens')}) AS cache_creation_input_tokens,
    total(${c('latency_ms')}) AS latency_sum_ms,
    count(${c('latency_ms')}) AS latency_count,
    count(*) AS call_count`;
}

/**
 * Runs `build('nano')`, or `build('decimal')` only when SQLite reports an integer overflow; `build`
 * returns the whole query, its cost columns from `spendAggregates(mode)`.
 */
export async function runSpendQuery<R>(
  db: Kysely<Database>,
  build: (mode: CostMode) => RawBuilder<R>,
): Promise<R[]> {
  try {
    return (await build('nano').execute(db)).rows;
  } catch (err) {
    if (!(err instanceof Error) || !/integer overflow/i.test(err.message)) throw err;
    return (await build('decimal').execute(db)).rows;
  }
}

export function decodeSpend(row: SpendColumns): SpendTotals {
  const nano: Decimal = row.cost_nano === null ? ZERO : { units: BigInt(row.cost_nano), scale: 9 };
  // decimal_sum over no row is '0.000000': the common case, skipped without parsing
  const rest = row.cost_rest === null || ZERO_TEXT.test(row.cost_rest) ? null : parseDecimal(row.cost_rest);
  return {
    cost: rest === null ? nano : add(nano, rest),
    inputTokens: Number(row.input_tokens ?? 0),
    outputTokens: Number(row.output_tokens ?? 0),
    cachedInputTokens: Number(row.cached_input_tokens ?? 0),
    cacheCreationInputTokens: Number(row.cache_creation_input_tokens ?? 0),
    latencySumMs: Number(row.latency_sum_ms ?? 0),
    latencyCount: Number(row.latency_count),
    callCount: Number(row.call_count),
  };
}

export const EMPTY_SPEND: SpendTotals = {
  cost: ZERO,
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  cacheCreationInputTokens: 0,
  latencySumMs: 0,
  latencyCount: 0,
  callCount: 0,
};

export function mergeSpend(a: SpendTotals, b: SpendTotals): SpendTotals {
  return {
    cost: add(a.cost, b.cost),
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    latencySumMs: a.latencySumMs + b.latencySumMs,
    latencyCount: a.latencyCount + b.latencyCount,
    callCount: a.callCount + b.callCount,
  };
}

/** The money and token fields every spend row carries (spec 3: cost_usd as a JSON number). */
export function encodeSpendFields(t: SpendTotals) {
  return {
    cost_usd: toNumber(t.cost),
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    cached_input_tokens: t.cachedInputTokens,
    cache_creation_input_tokens: t.cacheCreationInputTokens,
  };
}

/** Mean latency in milliseconds, to the microsecond; null when no row carried one. */
export function averageLatencyMs(t: SpendTotals): number | null {
  return t.latencyCount === 0 ? null : Math.round((t.latencySumMs / t.latencyCount) * 1000) / 1000;
}

/**
 * Sorts by exact cost descending, then by `tieKey` ascending (nulls last) so equal costs keep one order.
 * Doubles order first (rounding is monotonic, so different doubles order as the exact values do); only
 * equal doubles are compared exactly, which keeps a sort of tens of thousands of rows off bigint math.
 */
export function byCostDescending<T>(
  rows: T[],
  cost: (row: T) => Decimal,
  tieKey: (row: T) => string | null,
): T[] {
  const keyed = rows.map((row) => ({ row, cost: cost(row), approx: toNumber(cost(row)), tie: tieKey(row) }));
  keyed.sort((a, b) => {
    if (a.approx !== b.approx) return b.approx - a.approx;
    const c = compare(b.cost, a.cost);
    if (c !== 0) return c;
    if (a.tie === b.tie) return 0;
    if (a.tie === null) return 1;
    if (b.tie === null) return -1;
    return a.tie < b.tie ? -1 : 1;
  });
  return keyed.map((k) => k.row);
}

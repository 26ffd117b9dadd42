/**
 * @module Spend measures over the spend index: exact cost, token sums, latency and call count, as SQL
 * aggregates and their decoded totals. Cost is summed as integer nano-dollars (the index stores them)
 * plus decimal_sum over any cost the nano form cannot hold, so the sum is exact and needs no JS call per
 * row; should the integer sum overflow (about $9.2 billion in one group), the query runs again with
 * decimal_sum over every row.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { add, compare, type Decimal, parseDecimal, toNumber, ZERO } from '../lib/decimal.ts';
import type { Database } from '../store/schema.ts';
import { SPEND_COLUMNS, type SpendColumn } from './read-paths.ts';

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

/** The spendRows columns spendAggregates reads; project only these plus the GROUP BY keys (width costs). */
export const MEASURE_COLUMNS = [
  'cost_nano',
  'cost_usd',
  'input_tokens',
  'output_tokens',
  'cached_input_tokens',
  'cache_creation_input_tokens',
  'latency_ms',
] as const satisfies readonly SpendColumn[];

/** MEASURE_COLUMNS plus `keys`. */
export function measuredWith(...keys: SpendColumn[]): SpendColumn[] {
  return [...keys, ...MEASURE_COLUMNS];
}

/**
 * The select list of SpendColumns (aggregates; add GROUP BY keys beside it), over `spendRows` (plain
 * names) or straight over the spend index (its expressions; for GROUP BY on the leading hour, or none).
 */
export function spendAggregates(mode: CostMode, over: 'rows' | 'index' = 'rows'): RawBuilder<unknown> {
  const c = (name: SpendColumn) => sql.raw(over === 'rows' ? name : SPEND_COLUMNS[name]);
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
  return {
    cost: add(nano, row.cost_rest === null ? ZERO : parseDecimal(row.cost_rest)),
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

/** Sorts by exact cost descending, then by `tieKey` ascending (nulls last) so equal costs keep one order. */
export function byCostDescending<T>(
  rows: T[],
  cost: (row: T) => Decimal,
  tieKey: (row: T) => string | null,
): T[] {
  return rows.sort((a, b) => {
    const c = compare(cost(b), cost(a));
    if (c !== 0) return c;
    const ka = tieKey(a);
    const kb = tieKey(b);
    if (ka === kb) return 0;
    if (ka === null) return 1;
    if (kb === null) return -1;
    return ka < kb ? -1 : 1;
  });
}

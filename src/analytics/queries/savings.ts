/**
 * @module GET /analytics/savings (spec 3): what the window's calls would have cost on one baseline model,
 * both sides re-priced under the current price table. Price is linear in tokens on either side of a
 * long-context threshold and within one service tier, so pricing the token sums of each model's rows on one
 * side and at one tier (the paid tier llm.call_completed says the call was billed at: `service_tier`) equals
 * pricing each row; all money is exact decimal until the JSON numbers of the answer.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { add, type Decimal, sub, toNumber, ZERO } from '../../lib/decimal.ts';
import { SvcError } from '../../lib/errors.ts';
import { priceCall } from '../../models/pricing.ts';
import type { ModelRegistry } from '../../models/registry.ts';
import { type EngineName, engineOfKysely } from '../../store/dialect.ts';
import type { Database } from '../../store/schema.ts';
import { withExactMoney } from '../money.ts';
import type { ParamNamer } from '../params.ts';
import { expr, fromSpend } from '../read-paths.ts';
import { decodeSpend, runSpendQuery, type SpendColumns, type SpendTotals, spendSource } from '../spend.ts';
import type { TimeWindow } from '../window.ts';

export interface SavingsData {
  baseline_model: string;
  actual_repriced_usd: number;
  baseline_repriced_usd: number;
  savings_usd: number;
  /** A fraction (0.66 = 66 %); null when the baseline cost is zero (DECISIONS §5). */
  savings_pct: number | null;
  actual_stamped_usd: number;
  rows_total: number;
  rows_missing_from_price_table: number;
}

/**
 * The default baseline: the first mid-tier (`balanced`) model of provider A (anthropic) with prices in
 * the registry, else the first priced balanced model, else undefined.
 */
export function defaultBaseline(registry: ModelRegistry): string | undefined {
  const priced = registry.list().filter((m) => m.prices !== null && m.tier === 'balanced');
  return (priced.find((m) => m.adapter === 'anthropic') ?? priced[0])?.id;
}

/** Throws 400 unknown_baseline_model when the baseline has no entry with prices in the table. */
export async function querySavings(
  db: Kysely<Database>,
  registry: ModelRegistry,
  q: { window: TimeWindow; baseline: string | undefined; name?: ParamNamer },
): Promise<SavingsData> {
  const baseline = resolveBaseline(registry, q.baseline, q.name ?? ((n) => n));
  const engine = engineOfKysely(db);
  const source = spendSource(q.window, sql`TRUE`, ['model'], engine);
  const tiers = longContextTiers(registry, engine);
  const served = servedTier(registry, baseline, engine);
  const hourWrites = await queryHourWrites(db, q.window, engine, tiers, served);
  const rows = await runSpendQuery(
    db,
    (mode) =>
      sql<
        SpendColumns & TierColumns & ServedColumn & { model: string | null }
      >`SELECT model, ${tiers.select} ${served} AS service_tier, ${source.aggregates(mode)} ${source.from}
        GROUP BY model, service_tier ${tiers.groupBy}`,
  );
  let actual = ZERO;
  let baselineCost = ZERO;
  let stamped = ZERO;
  let total = 0;
  let missing = 0;
  for (const r of rows) {
    const t = {
      ...decodeSpend(r),
      cacheCreation1hInputTokens: hourWrites.get(groupKey(tiers, r)) ?? 0,
      serviceTier: r.service_tier,
    };
    stamped = add(stamped, t.cost);
    total += t.callCount;
    baselineCost = add(baselineCost, repriced(registry, baseline, t, tiers.tier(r, baseline)));
    if (r.model !== null && registry.get(r.model)?.prices)
      actual = add(actual, repriced(registry, r.model, t, tiers.tier(r, r.model)));
    else missing += t.callCount;
  }
  const savings = sub(baselineCost, actual);
  const data = {
    baseline_model: baseline,
    actual_repriced_usd: toNumber(actual),
    baseline_repriced_usd: toNumber(baselineCost),
    savings_usd: toNumber(savings),
    // the quotient of the two figures answered beside it, unrounded (spec 3: savings_usd divided by
    // baseline_repriced_usd), so a client dividing them gets exactly this
    savings_pct: baselineCost.units === 0n ? null : toNumber(savings) / toNumber(baselineCost),
    actual_stamped_usd: toNumber(stamped),
    rows_total: total,
    rows_missing_from_price_table: missing,
  };
  return withExactMoney(data, {
    actual_repriced_usd: actual,
    baseline_repriced_usd: baselineCost,
    savings_usd: savings,
    actual_stamped_usd: stamped,
  });
}

// --- internal ---

/**
 * The baseline a savings answer compares against, or 400 unknown_baseline_model. `name` spells the
 * parameter as the caller's user types it (`baseline`, or `--baseline` on the CLI).
 */
export function resolveBaseline(
  registry: ModelRegistry,
  requested: string | undefined,
  name: ParamNamer,
): string {
  const id = requested ?? defaultBaseline(registry);
  if (id !== undefined && registry.get(id)?.prices) return id;
  throw new SvcError('unknown_baseline_model', {
    message:
      id === undefined
        ? `The price table has no balanced model to compare against; pass ${name('baseline')} with a priced model id.`
        : `The ${name('baseline')} ${JSON.stringify(id.slice(0, 200))} is not a priced model of the price table; pass the canonical id of a model with prices in ${registry.source}, such as anthropic:claude-sonnet-4-5.`,
    details: { baseline: id ?? null },
  });
}

type RepricedTotals = SpendTotals & { cacheCreation1hInputTokens: number; serviceTier: string | null };

/**
 * The sums of calls all on one side of `model`'s long-context threshold and billed at one service tier, at
 * that tier's prices when `model` has them (a baseline without them: its standard ones), else that side's.
 */
function repriced(
  registry: ModelRegistry,
  model: string,
  t: RepricedTotals,
  tier: 'standard' | 'long',
): Decimal {
  const usage = {
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    cached_input_tokens: t.cachedInputTokens,
    cache_creation_input_tokens: t.cacheCreationInputTokens,
    cache_creation_1h_input_tokens: t.cacheCreation1hInputTokens,
    service_tier: t.serviceTier,
  };
  return priceCall(registry, model, usage, tier).cost;
}

/** The paid service tier a call was billed at (llm.call_completed `service_tier`), null for the standard one. */
type ServedColumn = { service_tier: string | null };

/**
 * llm.call_completed's `service_tier` (a string, else NULL) where it can change a price: on every row when
 * the baseline has tier prices, else on the rows of the models that have them; NULL when none has (the
 * built-in table). Not an expression of the spend index (a migration would add it): reading it opens the
 * row's payload, as the one-hour writes do for theirs, so only rows it can re-price read it.
 */
function servedTier(registry: ModelRegistry, baseline: string, engine: EngineName): RawBuilder<unknown> {
  const tier =
    engine === 'postgres'
      ? sql`CASE WHEN jsonb_typeof(j -> 'service_tier') = 'string' THEN j ->> 'service_tier' END`
      : sql`CASE WHEN json_type(payload, '$.service_tier') = 'text' THEN json_extract(payload, '$.service_tier') END`;
  if (registry.get(baseline)?.service_tiers) return tier;
  const tiered = registry.list().flatMap((m) => (m.service_tiers ? [sql`${m.id}`] : []));
  if (tiered.length === 0) return sql`CAST(NULL AS TEXT)`;
  return sql`CASE WHEN model IN (${sql.join(tiered)}) THEN ${tier} END`;
}

/** A group's key: its model, the thresholds its calls exceed and the tier they were billed at. */
function groupKey(tiers: Tiers, row: { model: string | null } & TierColumns & ServedColumn): string {
  return `${tiers.key(row)}\u0000${row.service_tier ?? ''}`;
}

/** `above_<i>`: 1 when a row's whole input exceeds the i-th long-context threshold of the table. */
type TierColumns = Record<`above_${number}`, number | string | null>;

interface Tiers {
  /** Select items (each followed by a comma) and GROUP BY items (each led by one); empty without thresholds. */
  select: RawBuilder<unknown>;
  groupBy: RawBuilder<unknown>;
  /** The group's key: its model and which thresholds its calls exceed. */
  key(row: { model: string | null } & TierColumns): string;
  /** Which prices of `model` the group's calls pay (each call's whole input against its threshold). */
  tier(row: TierColumns, model: string): 'standard' | 'long';
}

/**
 * Price is linear in tokens only on one side of a long-context threshold (spec 3 prices each row's tokens;
 * models/long-context.ts): the rows are grouped by which of the table's thresholds their whole input
 * (uncached, cache reads, cache writes) exceeds, so each group is priced as its rows are, under its own
 * model and under the baseline alike (a call above the baseline's threshold costs the baseline's long rates).
 */
function longContextTiers(registry: ModelRegistry, engine: EngineName): Tiers {
  const thresholds = [
    ...new Set(
      registry.list().flatMap((m) => (m.long_context?.prices ? [m.long_context.above_input_tokens] : [])),
    ),
  ];
  const input = sql`coalesce(${expr('inputTokens', engine)}, 0) + coalesce(${expr('cachedInputTokens', engine)}, 0) + coalesce(${expr('cacheCreationInputTokens', engine)}, 0)`;
  const names = thresholds.map((_, i) => `above_${i}` as const);
  const above = (row: TierColumns, i: number) => Number(row[names[i]] ?? 0) === 1;
  return {
    select: sql.join(
      thresholds.map(
        (t, i) => sql`CASE WHEN ${input} > ${sql.lit(t)} THEN 1 ELSE 0 END AS ${sql.raw(names[i])},`,
      ),
      sql``,
    ),
    groupBy: sql.join(
      names.map((n) => sql`, ${sql.raw(n)}`),
      sql``,
    ),
    key: (row) => `${row.model}\u0000${names.map((_, i) => (above(row, i) ? 1 : 0)).join('')}`,
    tier(row, model) {
      const long = registry.get(model)?.long_context;
      if (!long?.prices) return 'standard';
      return above(row, thresholds.indexOf(long.above_input_tokens)) ? 'long' : 'standard';
    },
  };
}

/**
 * Per group (model, thresholds, tier), the cache writes made for one hour (`cache_creation_1h_input_tokens`, on the payload only
 * when not zero), which the table prices at cache_write_1h: without them a re-priced call would count
 * them at the five-minute rate and differ from its own stamped cost under an unchanged table. Clamped per
 * row to the row's writes, as priceCall does; only rows with cache writes open their payload.
 */
async function queryHourWrites(
  db: Kysely<Database>,
  window: TimeWindow,
  engine: EngineName,
  tiers: Tiers,
  served: RawBuilder<unknown>,
): Promise<Map<string, number>> {
  const written = expr('cacheCreationInputTokens', engine);
  const hour =
    engine === 'postgres'
      ? sql`CASE WHEN jsonb_typeof(j -> 'cache_creation_1h_input_tokens') = 'number' THEN LEAST((j ->> 'cache_creation_1h_input_tokens')::numeric, ${written}) END`
      : sql`min(json_extract(payload, '$.cache_creation_1h_input_tokens'), ${written})`;
  const r = await sql<
    { model: string | null; hour_tokens: number | string | null } & TierColumns & ServedColumn
  >`SELECT model, ${tiers.select} ${served} AS service_tier,
      sum(${hour}) AS hour_tokens ${fromSpend(window, engine)} AND ${written} > 0
      GROUP BY model, service_tier ${tiers.groupBy}`.execute(db);
  return new Map(r.rows.map((row) => [groupKey(tiers, row), Number(row.hour_tokens ?? 0)]));
}

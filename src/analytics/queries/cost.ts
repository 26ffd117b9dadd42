/**
 * @module GET /analytics/cost (spec 3): spend of model calls in the window, grouped by one whitelisted
 * key. Each group_by maps to constant SQL from GROUPS; ids and bounds are bound parameters. day and hour
 * read the spend index in hour order (no sort) and fold hours into UTC days exactly.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { formatUs } from '../../lib/time.ts';
import { type EngineName, engineOfKysely } from '../../store/dialect.ts';
import type { Database } from '../../store/schema.ts';
import { withExactMoney } from '../money.ts';
import type { GroupBy, SpendFilters } from '../params.ts';
import { expr, fromSpend, hourStartUs, type SpendColumn } from '../read-paths.ts';
import {
  averageLatencyMs,
  byCostDescending,
  decodeSpend,
  EMPTY_SPEND,
  encodeSpendFields,
  mergeSpend,
  runSpendQuery,
  type SpendColumns,
  type SpendTotals,
  spendAggregates,
  spendSource,
} from '../spend.ts';
import type { TimeWindow } from '../window.ts';

export interface CostQuery {
  window: TimeWindow;
  groupBy: GroupBy;
  filters: SpendFilters;
}

export type CostRow = Record<string, unknown> & {
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_creation_input_tokens: number;
  avg_latency_ms: number | null;
  call_count: number;
};

/** An array of rows, or for group_by=none one aggregate object. */
export async function queryCost(db: Kysely<Database>, q: CostQuery): Promise<CostRow[] | CostRow> {
  const engine = engineOfKysely(db);
  const filters = spendFilterSql(q.filters, engine);
  if (q.groupBy === 'none') {
    const [row] = await runSpendQuery(
      db,
      (mode) =>
        sql<SpendColumns>`SELECT ${spendAggregates(mode, 'index', engine)} ${fromSpend(q.window, engine)} AND ${filters}`,
    );
    return encodeCostRow({}, row ? decodeSpend(row) : EMPTY_SPEND);
  }
  if (q.groupBy === 'day' || q.groupBy === 'hour') return byTime(db, q, q.groupBy, engine);
  const spec = GROUPS[q.groupBy];
  const rows = spec.nullWhen
    ? await groupedWithNullApart(db, q, spec, spec.nullWhen(engine), engine)
    : await grouped(db, q, spec, filters, engine);
  const decoded = rows.map((r) => ({ keys: spec.encode(r), totals: decodeSpend(r), tie: spec.tie(r) }));
  return byCostDescending(
    decoded,
    (r) => r.totals.cost,
    (r) => r.tie,
  ).map((r) => encodeCostRow(r.keys, r.totals));
}

/** The spend filters of spec 3 (AND-combined) as SQL over the spend index; `1` when there are none. */
export function spendFilterSql(filters: SpendFilters, engine: EngineName = 'sqlite'): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  if (filters.gatewayKey !== null) parts.push(sql`gateway_key_id = ${filters.gatewayKey}`);
  if (filters.user !== null) parts.push(sql`user_id = ${filters.user}`);
  if (filters.team !== null) parts.push(sql`team_id = ${filters.team}`);
  if (!filters.includeWorkers) parts.push(sql`${expr('parentSessionId', engine)} IS NULL`);
  return parts.length === 0 ? sql`TRUE` : sql.join(parts, sql` AND `);
}

// --- internal ---

type Row = SpendColumns & KeyRow;

async function grouped(
  db: Kysely<Database>,
  q: CostQuery,
  spec: GroupSpec,
  where: RawBuilder<unknown>,
  engine: EngineName,
) {
  const source = spendSource(q.window, where, spec.columns, engine);
  return runSpendQuery(
    db,
    (mode) =>
      sql<Row>`SELECT ${spec.keys}, ${source.aggregates(mode)} ${source.from} GROUP BY ${spec.groupBy}`,
  );
}

/** The null bucket as one aggregate, the rest grouped: the same rows as one GROUP BY, less sorting. */
async function groupedWithNullApart(
  db: Kysely<Database>,
  q: CostQuery,
  spec: GroupSpec,
  nullWhen: RawBuilder<unknown>,
  engine: EngineName,
) {
  const filters = spendFilterSql(q.filters, engine);
  const [nulls] = await runSpendQuery(
    db,
    (mode) =>
      sql<SpendColumns>`SELECT ${spendAggregates(mode, 'index', engine)} ${fromSpend(q.window, engine)} AND ${filters} AND ${nullWhen}`,
  );
  const rest = await grouped(db, q, spec, sql`${filters} AND NOT (${nullWhen})`, engine);
  if (!nulls || Number(nulls.call_count) === 0) return rest;
  return [...rest, nulls as Row]; // its key columns are absent: encode reads them as null
}

type KeyRow = Record<string, string | null>;

interface GroupSpec {
  /** The spendRows columns the keys read. */
  columns: SpendColumn[];
  /** Key columns, aliased to their wire names. */
  keys: RawBuilder<unknown>;
  groupBy: RawBuilder<unknown>;
  encode(row: KeyRow): Record<string, string | null>;
  /** Orders equal costs. */
  tie(row: KeyRow): string | null;
  /**
   * Where the key is null, over the index. Set for keys that are null on all gateway traffic (usually
   * most rows): that bucket is summed without a GROUP BY, so only agent calls go through the sort.
   */
  nullWhen?: (engine: EngineName) => RawBuilder<unknown>;
}

/** One column keyed group, named as on the wire. */
function column(sqlText: string, wire: string, columns: SpendColumn[]): GroupSpec {
  return {
    columns,
    keys: sql.raw(`${sqlText} AS ${wire}`),
    groupBy: sql.raw(sqlText),
    encode: (row) => ({ [wire]: row[wire] ?? null }),
    tie: (row) => row[wire] ?? null,
  };
}

const PARENT = 'coalesce(parent_session_id, session_id)';

/** spec 3 §GET /analytics/cost table: key columns per group_by (day, hour and none are handled apart). */
const GROUPS: Record<Exclude<GroupBy, 'day' | 'hour' | 'none'>, GroupSpec> = {
  model: {
    columns: ['model', 'provider'],
    keys: sql`model AS model, provider AS provider`,
    groupBy: sql`model, provider`,
    encode: (row) => ({ model: row.model ?? null, provider: row.provider ?? null }),
    tie: (row) => `${row.model ?? ''}\u0000${row.provider ?? ''}`,
  },
  provider: column('provider', 'provider', ['provider']),
  session: { ...column('session_id', 'session_id', ['session_id']), nullWhen: () => sql`session_id IS NULL` },
  gateway_key: column('gateway_key_id', 'gateway_key_id', ['gateway_key_id']),
  user: column('user_id', 'user_id', ['user_id']),
  team: column('team_id', 'team_id', ['team_id']),
  // workers roll up under their planner: the parent's id, else the call's own session
  parent_session: {
    ...column(PARENT, 'parent_session_id', ['parent_session_id', 'session_id']),
    nullWhen: (engine) => sql`session_id IS NULL AND ${expr('parentSessionId', engine)} IS NULL`,
  },
  is_worker: column("CASE WHEN parent_session_id IS NOT NULL THEN 'worker' ELSE 'planner' END", 'is_worker', [
    'parent_session_id',
  ]),
};

async function byTime(
  db: Kysely<Database>,
  q: CostQuery,
  unit: 'day' | 'hour',
  engine: EngineName,
): Promise<CostRow[]> {
  // straight over the index: its leading hour is the GROUP BY key, so rows arrive grouped, unsorted
  const hour = expr('hour', engine);
  const rows = await runSpendQuery(
    db,
    (mode) =>
      sql<SpendColumns & { hour: number }>`SELECT ${hour} AS hour, ${spendAggregates(mode, 'index', engine)}
        ${fromSpend(q.window, engine)} AND ${spendFilterSql(q.filters, engine)} GROUP BY ${hour} ORDER BY ${hour}`,
  );
  const buckets = new Map<string, SpendTotals>();
  for (const r of rows) {
    const iso = formatUs(hourStartUs(Number(r.hour)));
    const bucket = unit === 'day' ? iso.slice(0, 10) : iso.slice(0, 13);
    buckets.set(bucket, mergeSpend(buckets.get(bucket) ?? EMPTY_SPEND, decodeSpend(r)));
  }
  return [...buckets].map(([bucket, totals]) => encodeCostRow({ bucket }, totals));
}

function encodeCostRow(keys: Record<string, unknown>, t: SpendTotals): CostRow {
  return withExactMoney(
    { ...keys, ...encodeSpendFields(t), avg_latency_ms: averageLatencyMs(t), call_count: t.callCount },
    { cost_usd: t.cost },
  );
}

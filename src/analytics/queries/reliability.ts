/**
 * @module GET /analytics/reliability (spec 3): adapter-classified failures (llm.call_failed) by model,
 * provider and error class, and p50/p95 latency per model over llm.call_completed. Percentiles are
 * nearest-rank: the value at rank ceil(p/100 × n) of the model's latencies in ascending order (SQLite's
 * nearest_ranks aggregate; on PostgreSQL row_number() picks the same ranks in integer arithmetic).
 */
import { type Kysely, sql } from 'kysely';
import { type EngineName, engineOfKysely } from '../../store/dialect.ts';
import type { Database } from '../../store/schema.ts';
import { expr, spendRows, timeRange } from '../read-paths.ts';
import { PG_PAYLOAD } from '../read-paths-postgres.ts';
import type { TimeWindow } from '../window.ts';

export interface ReliabilityData {
  errors_by_class: Array<{
    model: string | null;
    provider: string | null;
    error_class: string | null;
    count: number;
  }>;
  latency_ms_by_model: Array<{ model: string | null; p50: number; p95: number; sample_size: number }>;
}

export async function queryReliability(db: Kysely<Database>, window: TimeWindow): Promise<ReliabilityData> {
  const engine = engineOfKysely(db);
  return {
    errors_by_class: await queryErrors(db, window, engine),
    latency_ms_by_model: await (engine === 'sqlite' ? queryLatency(db, window) : queryLatencyPg(db, window)),
  };
}

// --- internal ---

async function queryErrors(db: Kysely<Database>, window: TimeWindow, engine: EngineName) {
  // failures are few; their rows are read through the partial index of migration 0006
  const errorClass =
    engine === 'sqlite'
      ? sql`json_extract(payload, '$.error_class')`
      : sql`(${sql.raw(PG_PAYLOAD)})::json ->> 'error_class'`;
  const from = engine === 'sqlite' ? sql`events INDEXED BY events_failed_call` : sql`events`;
  const r = await sql<{
    model: string | null;
    provider: string | null;
    error_class: string | null;
    n: number;
  }>`
    SELECT model, provider, ${errorClass} AS error_class, count(*) AS n
    FROM ${from}
    WHERE type = 'llm.call_failed' AND ${timeRange(window)}
    GROUP BY 1, 2, 3`.execute(db);
  return r.rows
    .map((x) => ({ model: x.model, provider: x.provider, error_class: x.error_class, count: Number(x.n) }))
    .sort((a, b) => b.count - a.count || key(a).localeCompare(key(b)));
}

/** Per model, nearest-rank p50 and p95 in one read of the spend index (the store's nearest_ranks). */
async function queryLatency(db: Kysely<Database>, window: TimeWindow) {
  const where = sql`type = 'llm.call_completed' AND ${expr('latencyMs')} IS NOT NULL`;
  const r = await sql<{ model: string | null; ranks: string | null; n: number }>`
    SELECT model, nearest_ranks(latency_ms, '50,95') AS ranks, count(latency_ms) AS n
    FROM ${spendRows(window, where, ['model', 'latency_ms'])} GROUP BY model`.execute(db);
  return r.rows
    .filter((x) => x.ranks !== null)
    .map((x) => {
      const [p50, p95] = JSON.parse(x.ranks as string) as [number, number];
      return { model: x.model, p50, p95, sample_size: Number(x.n) };
    })
    .sort((a, b) => b.sample_size - a.sample_size || String(a.model).localeCompare(String(b.model)));
}

/** queryLatency on PostgreSQL: ranks ceil(50n/100) and ceil(95n/100) of each model's ascending latencies. */
async function queryLatencyPg(db: Kysely<Database>, window: TimeWindow) {
  const where = sql`type = 'llm.call_completed' AND ${expr('latencyMs', 'postgres')} IS NOT NULL`;
  const r = await sql<{ model: string | null; latency_ms: string; rank: string; n: string }>`
    SELECT model, latency_ms, rank, n FROM (
      SELECT model, latency_ms, row_number() OVER (PARTITION BY model ORDER BY latency_ms) AS rank,
        count(*) OVER (PARTITION BY model) AS n
      FROM ${spendRows(window, where, ['model', 'latency_ms'], 'postgres')}
    ) AS ranked
    WHERE rank = (50 * n + 99) / 100 OR rank = (95 * n + 99) / 100`.execute(db);
  const models = new Map<string | null, { p50: number; p95: number; sample_size: number }>();
  for (const x of r.rows) {
    const n = Number(x.n);
    const m = models.get(x.model) ?? { p50: 0, p95: 0, sample_size: n };
    const rank = Number(x.rank);
    if (rank === Math.ceil((50 * n) / 100)) m.p50 = Number(x.latency_ms);
    if (rank === Math.ceil((95 * n) / 100)) m.p95 = Number(x.latency_ms);
    models.set(x.model, m);
  }
  return [...models]
    .map(([model, m]) => ({ model, ...m }))
    .sort((a, b) => b.sample_size - a.sample_size || String(a.model).localeCompare(String(b.model)));
}

function key(x: { model: string | null; provider: string | null; error_class: string | null }): string {
  return `${x.model}\u0000${x.provider}\u0000${x.error_class}`;
}

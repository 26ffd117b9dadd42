/**
 * @module GET /analytics/reliability (spec 3): adapter-classified failures (llm.call_failed) by model,
 * provider and error class, and p50/p95 latency per model over llm.call_completed. Percentiles are
 * nearest-rank: the value at rank ceil(p/100 × n) of the model's latencies in ascending order.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { expr, spendRows, timeRange } from '../read-paths.ts';
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
  return {
    errors_by_class: await queryErrors(db, window),
    latency_ms_by_model: await queryLatency(db, window),
  };
}

// --- internal ---

async function queryErrors(db: Kysely<Database>, window: TimeWindow) {
  // failures are few; their rows are read through the type + time index of migration 0001
  const r = await sql<{
    model: string | null;
    provider: string | null;
    error_class: string | null;
    n: number;
  }>`
    SELECT model, provider, json_extract(payload, '$.error_class') AS error_class, count(*) AS n
    FROM events INDEXED BY events_type_time
    WHERE type = 'llm.call_failed' AND ${timeRange(window)}
    GROUP BY 1, 2, 3`.execute(db);
  return r.rows
    .map((x) => ({ model: x.model, provider: x.provider, error_class: x.error_class, count: Number(x.n) }))
    .sort((a, b) => b.count - a.count || key(a).localeCompare(key(b)));
}

/**
 * Exact nearest-rank percentiles in two reads of the spend index: a histogram of 10 ms buckets per model
 * finds the bucket holding each wanted rank, then only the rows of those buckets are read and sorted.
 * (A window function would sort every latency of the window: seconds on a million rows.)
 */
async function queryLatency(db: Kysely<Database>, window: TimeWindow) {
  const where = sql`type = 'llm.call_completed' AND ${expr('latencyMs')} IS NOT NULL`;
  const histogram = await sql<{ model: string | null; bucket: number; n: number }>`
    SELECT model, CAST(latency_ms / ${BUCKET_MS} AS INTEGER) AS bucket, count(*) AS n
    FROM ${spendRows(window, where, ['model', 'latency_ms'])} GROUP BY model, bucket`.execute(db);
  const models = new Map<string | null, Array<{ bucket: number; n: number }>>();
  for (const r of histogram.rows) {
    const list = models.get(r.model) ?? [];
    list.push({ bucket: Number(r.bucket), n: Number(r.n) });
    models.set(r.model, list);
  }
  const targets: Target[] = [];
  for (const [model, buckets] of models) {
    buckets.sort((a, b) => a.bucket - b.bucket);
    const n = buckets.reduce((sum, b) => sum + b.n, 0);
    for (const p of PERCENTILES) targets.push(locate(model, buckets, n, p));
  }
  const values = await readTargetBuckets(db, window, targets);
  return [...models.keys()]
    .map((model) => {
      const mine = targets.filter((t) => t.model === model);
      const pick = (p: number) => {
        const t = mine.find((x) => x.percentile === p)!;
        return values.get(bucketKey(t.model, t.bucket))![t.offset - 1];
      };
      return { model, p50: pick(50), p95: pick(95), sample_size: mine[0].sampleSize };
    })
    .sort((a, b) => b.sample_size - a.sample_size || String(a.model).localeCompare(String(b.model)));
}

const BUCKET_MS = 10;
const PERCENTILES = [50, 95] as const;

interface Target {
  model: string | null;
  percentile: number;
  sampleSize: number;
  bucket: number;
  /** 1-based rank of the wanted value inside its bucket. */
  offset: number;
}

/** The bucket holding rank ceil(p/100 × n), and the rank's position inside it. */
function locate(
  model: string | null,
  buckets: Array<{ bucket: number; n: number }>,
  n: number,
  p: number,
): Target {
  const rank = Math.ceil((p * n) / 100);
  let before = 0;
  for (const b of buckets) {
    if (before + b.n >= rank)
      return { model, percentile: p, sampleSize: n, bucket: b.bucket, offset: rank - before };
    before += b.n;
  }
  throw new Error('percentile rank beyond the histogram');
}

/** Latencies of the target buckets, each list ascending, keyed by model and bucket. */
async function readTargetBuckets(db: Kysely<Database>, window: TimeWindow, targets: Target[]) {
  const values = new Map<string, number[]>();
  if (targets.length === 0) return values;
  const unique = [...new Map(targets.map((t) => [bucketKey(t.model, t.bucket), t])).values()];
  const inBuckets = sql.join(
    unique.map(
      (t) => sql`(model IS ${t.model} AND CAST(latency_ms / ${BUCKET_MS} AS INTEGER) = ${t.bucket})`,
    ),
    sql` OR `,
  );
  const where = sql`type = 'llm.call_completed' AND ${expr('latencyMs')} IS NOT NULL`;
  const r = await sql<{ model: string | null; v: number; bucket: number }>`
    SELECT model, latency_ms AS v, CAST(latency_ms / ${BUCKET_MS} AS INTEGER) AS bucket
    FROM ${spendRows(window, where, ['model', 'latency_ms'])} WHERE ${inBuckets}`.execute(db);
  for (const row of r.rows) {
    const v = Number(row.v);
    const key = bucketKey(row.model, Number(row.bucket));
    const list = values.get(key) ?? [];
    list.push(v);
    values.set(key, list);
  }
  for (const list of values.values()) list.sort((a, b) => a - b);
  return values;
}

function bucketKey(model: string | null, bucket: number): string {
  return `${model === null ? '\u0001' : model}\u0000${bucket}`;
}

function key(x: { model: string | null; provider: string | null; error_class: string | null }): string {
  return `${x.model}\u0000${x.provider}\u0000${x.error_class}`;
}

/**
 * @module The cost chart's series from the API's cost rows (pure, so node tests check that the bars are
 * the API's numbers); the browser hands it to Chart.js.
 */
import type { CostRow } from '../queries/cost.ts';

export interface Series {
  labels: string[];
  values: number[];
  /** Axis title: buckets are UTC, as the API answers them. */
  unit: string;
}

/** One bar per bucket the API returned (`YYYY-MM-DD` or `YYYY-MM-DDTHH`), in its order. */
export function costSeries(rows: readonly CostRow[], bucket: 'day' | 'hour'): Series {
  return {
    labels: rows.map((r) =>
      bucket === 'hour'
        ? `${String(r.bucket).slice(5, 10)} ${String(r.bucket).slice(11)}:00`
        : String(r.bucket),
    ),
    values: rows.map((r) => r.cost_usd),
    unit: bucket === 'hour' ? 'UTC hour' : 'UTC day',
  };
}

/**
 * @module The cost chart's series from the API's cost rows (pure, so node tests check that the bars are
 * the API's numbers); the browser hands it to Chart.js.
 */
import type { CostRow } from '../queries/cost.ts';
import type { UtcWindow } from './model.ts';

export interface Series {
  labels: string[];
  values: number[];
  /** Axis title: buckets are UTC, as the API answers them. */
  unit: string;
}

/** Most bars the chart fills in: a longer custom window shows only the buckets that had calls. */
export const MAX_FILLED_BARS = 1000;

/**
 * One bar per bucket (`YYYY-MM-DD` or `YYYY-MM-DDTHH`) in time order. With the window asked for, every
 * bucket of it gets a bar, $0 where the API answered none (it leaves out buckets without calls), so days
 * or hours without spend show as gaps rather than vanish between their neighbours; the other bars are the
 * API's numbers. Without it, or past MAX_FILLED_BARS, the API's buckets alone.
 */
export function costSeries(rows: readonly CostRow[], bucket: 'day' | 'hour', window?: UtcWindow): Series {
  const answered = new Map(rows.map((r) => [String(r.bucket), r.cost_usd]));
  const all = window === undefined ? null : everyBucket(window, bucket);
  const inWindow = new Set(all);
  const keys =
    all !== null && [...answered.keys()].every((k) => inWindow.has(k)) ? all : [...answered.keys()];
  return {
    labels: keys.map((k) => (bucket === 'hour' ? `${k.slice(5, 10)} ${k.slice(11)}:00` : k)),
    values: keys.map((k) => answered.get(k) ?? 0),
    unit: bucket === 'hour' ? 'UTC hour' : 'UTC day',
  };
}

// --- internal ---

/** The UTC buckets [from, to) touches, oldest first; null when there are more than MAX_FILLED_BARS. */
function everyBucket(window: UtcWindow, bucket: 'day' | 'hour'): string[] | null {
  const step = bucket === 'hour' ? 3_600_000 : 86_400_000;
  const end = Date.parse(window.to);
  const start = Math.floor(Date.parse(window.from) / step) * step;
  if (!(end > start) || (end - start) / step > MAX_FILLED_BARS) return null;
  const keys: string[] = [];
  for (let t = start; t < end; t += step)
    keys.push(new Date(t).toISOString().slice(0, bucket === 'hour' ? 13 : 10));
  return keys;
}

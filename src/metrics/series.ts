/**
 * @module The collector's counters and histograms, kept in svc and written into their prom-client metrics when
 * they are scraped (each metric's collect hook). A handler finds its series by its label values (nested Maps,
 * one level a label) and adds to plain numbers: prom-client builds a string of the label object on every inc
 * and observe, checks each label name and, for a histogram, makes a closure and reads its buckets by number
 * keys (0.3-0.8 µs each, four a gateway call). The exposition stays prom-client's, byte for byte: series in
 * the order they first moved, labels in the metric's label-name order, a histogram's sum added in the same
 * order from 0.
 */
import type { Counter, Histogram } from 'prom-client';

/** Series by label values (at most three labels), listed in the order they first appeared. */
export interface SeriesTable<E> {
  /** The series of these label values, one a label name in order (made on first use). */
  at(a?: string, b?: string, c?: string): E;
  /** Every series so far with its labels (keys in label-name order), oldest first. */
  readonly all: ReadonlyArray<{ readonly labels: Record<string, string>; readonly entry: E }>;
}

export function createSeriesTable<E>(labelNames: readonly string[], make: () => E): SeriesTable<E> {
  const depth = labelNames.length;
  if (depth > 3) throw new RangeError('a series table takes at most three labels');
  const root = new Map<string, unknown>();
  const all: Array<{ labels: Record<string, string>; entry: E }> = [];
  const level = (map: Map<string, unknown>, key: string): Map<string, unknown> => {
    let next = map.get(key) as Map<string, unknown> | undefined;
    if (next === undefined) {
      next = new Map();
      map.set(key, next);
    }
    return next;
  };
  const table: SeriesTable<E> = {
    all,
    at(a = '', b = '', c = '') {
      const map = depth === 3 ? level(level(root, a), b) : depth === 2 ? level(root, a) : root;
      const key = depth === 3 ? c : depth === 2 ? b : a;
      let entry = map.get(key) as E | undefined;
      if (entry === undefined) {
        entry = make();
        map.set(key, entry);
        const values = [a, b, c];
        const labels: Record<string, string> = {};
        for (let i = 0; i < depth; i++) labels[labelNames[i]] = values[i];
        all.push({ labels, entry });
      }
      return entry;
    },
  };
  return table;
}

export interface CounterSeries {
  /** Adds 1 to the series of these label values. */
  inc(a?: string, b?: string, c?: string): void;
  /** Rewrites `counter` from the counts (its collect hook; public reset and inc only). */
  export(counter: Counter): void;
}

export function createCounterSeries(labelNames: readonly string[]): CounterSeries {
  const table = createSeriesTable(labelNames, () => ({ n: 0 }));
  return {
    inc(a, b, c) {
      table.at(a, b, c).n += 1;
    },
    export(counter) {
      counter.reset();
      for (const { labels, entry } of table.all) counter.inc(labels, entry.n);
    },
  };
}

export interface HistogramSeries {
  /** Observes `value` (finite, not negative) in the series of these label values. */
  observe(value: number, a?: string, b?: string, c?: string): void;
  /** Rewrites `histogram` from the observations (its collect hook). */
  export(histogram: Histogram): void;
}

/**
 * prom-client has no public way to set a histogram's buckets, so `export` writes its series as prom-client 15's
 * Histogram keeps them (hashMap: labels, bucketValues keyed by upper bound, sum, count; test/unit/metrics holds
 * the exposition to prom-client's own observe). A metric without labels has its one series from the start, as
 * prom-client's has.
 */
export function createHistogramSeries(
  labelNames: readonly string[],
  bounds: readonly number[],
): HistogramSeries {
  const table = createSeriesTable(labelNames, () => ({ sum: 0, count: 0, buckets: bounds.map(() => 0) }));
  if (labelNames.length === 0) table.at();
  return {
    observe(value, a, b, c) {
      const series = table.at(a, b, c);
      let i = 0;
      while (i < bounds.length && !(value <= bounds[i])) i++;
      if (i < bounds.length) series.buckets[i] += 1;
      series.sum += value;
      series.count += 1;
    },
    export(histogram) {
      const hashMap: Record<string, unknown> = {};
      table.all.forEach(({ labels, entry }, n) => {
        const bucketValues: Record<string, number> = {};
        bounds.forEach((bound, i) => {
          bucketValues[bound] = entry.buckets[i];
        });
        // a key that is not an array index keeps insertion order (the exposition's)
        hashMap[`s${n}`] = { labels, bucketValues, sum: entry.sum, count: entry.count };
      });
      (histogram as unknown as { hashMap: Record<string, unknown> }).hashMap = hashMap;
    },
  };
}

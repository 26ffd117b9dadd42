/**
 * @module Money counters: cost increments are summed exactly as decimals per label set and turned
 * into a float only when Prometheus scrapes (spec 1: "decimal converted to float at export").
 */
import type { Counter } from 'prom-client';
import { add, type Decimal, isPositive, toNumber, ZERO } from '../lib/decimal.ts';
import { createSeriesTable } from './series.ts';

export interface DecimalCounter {
  /** Adds `amount` to the series of these label values when it is positive; zero and negative are ignored. */
  add(amount: Decimal, a: string, b?: string): void;
  /** Rewrites the prom-client counter from the exact totals; call from its `collect`. */
  export(counter: Counter): void;
}

export function createDecimalCounter(labelNames: readonly string[]): DecimalCounter {
  const table = createSeriesTable(labelNames, () => ({ total: ZERO }));
  return {
    add(amount, a, b) {
      if (!isPositive(amount)) return;
      const series = table.at(a, b);
      series.total = add(series.total, amount);
    },
    export(counter) {
      counter.reset();
      for (const { labels, entry } of table.all) counter.inc(labels, toNumber(entry.total));
    },
  };
}

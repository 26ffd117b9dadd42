/**
 * @module Money counters: cost increments are summed exactly as decimals per label set and turned
 * into a float only when Prometheus scrapes (spec 1: "decimal converted to float at export").
 */
import type { Counter } from 'prom-client';
import { add, type Decimal, isPositive, toNumber } from '../lib/decimal.ts';

export interface DecimalCounter<L extends string> {
  /** Adds `amount` when it is positive; zero and negative amounts are ignored. */
  add(labels: Record<L, string>, amount: Decimal): void;
  /** Rewrites the prom-client counter from the exact totals; call from its `collect`. */
  export(counter: Counter<L>): void;
}

export function createDecimalCounter<L extends string>(): DecimalCounter<L> {
  const totals = new Map<string, { labels: Record<L, string>; total: Decimal }>();
  return {
    add(labels, amount) {
      if (!isPositive(amount)) return;
      const key = JSON.stringify(labels);
      const entry = totals.get(key);
      if (entry) entry.total = add(entry.total, amount);
      else totals.set(key, { labels, total: amount });
    },
    export(counter) {
      counter.reset();
      for (const { labels, total } of totals.values()) counter.inc(labels, toNumber(total));
    },
  };
}

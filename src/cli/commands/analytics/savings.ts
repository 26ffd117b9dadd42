/** `svc analytics savings`: the window's calls re-priced against one baseline model (GET /analytics/savings). */
import { querySavings, resolveBaseline } from '../../../analytics/index.ts';
import { defineReport, fieldCell, flagName } from './common.ts';

export default defineReport({
  name: 'savings',
  description: 'What routing saved against one baseline model, both re-priced under the current table',
  windowed: true,
  args: {
    baseline: {
      type: 'string',
      description: 'Canonical model id (default the first balanced anthropic model)',
    },
  },
  check: (raw, registry) => resolveBaseline(registry, raw.baseline, flagName),
  read: ({ store, registry, raw, window }) =>
    querySavings(store.kysely, registry, { window, baseline: raw.baseline, name: flagName }),
  table: (d) => ({ header: ['FIELD', 'VALUE'], rows: Object.keys(d).map((k) => [k, fieldCell(d, k)]) }),
  // spec 3: with unpriced rows the percentage is overstated, and a view for people says so beside it
  notes: (d) =>
    d.rows_missing_from_price_table > 0
      ? [
          `warning: ${d.rows_missing_from_price_table} ${d.rows_missing_from_price_table === 1 ? 'call' : 'calls'} used models missing from the price table, so savings_pct is overstated.`,
        ]
      : [],
});

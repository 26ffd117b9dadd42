/** `svc analytics cost`: spend of model calls in the window by one key (GET /analytics/cost). */
import { GROUP_BY, parseGroupBy, parseSpendFilters, queryCost } from '../../../analytics/index.ts';
import { defineReport, flagName, objectsTable } from './common.ts';

export default defineReport({
  name: 'cost',
  description: 'Spend of model calls in the window, grouped by one key',
  windowed: true,
  args: {
    'group-by': { type: 'string', description: `${GROUP_BY.join(', ')} (default model)` },
    'gateway-key': { type: 'string', description: 'Only this gateway key id' },
    user: { type: 'string', description: 'Only this user id' },
    team: { type: 'string', description: 'Only this team id' },
    'include-workers': {
      type: 'string',
      description: 'true (default) or false: leave out worker-session calls',
    },
  },
  check: (raw) => {
    parseGroupBy(raw, flagName);
    parseSpendFilters(raw, flagName);
  },
  read: ({ store, raw, window }) =>
    queryCost(store.kysely, {
      window,
      groupBy: parseGroupBy(raw, flagName),
      filters: parseSpendFilters(raw, flagName),
    }),
  table: (data) => {
    const t = objectsTable(Array.isArray(data) ? data : [data]);
    // a null key is a bucket, not a missing value: "-" would read as the id "-", which the id shape allows
    const labels = t.header.map((h) => NULL_KEY_LABEL[h]);
    return { ...t, rows: t.rows.map((r) => r.map((c, i) => (c === null ? (labels[i] ?? c) : c))) };
  },
});

/** How the table names a null key column, as by-key and by-team do. */
const NULL_KEY_LABEL: Readonly<Record<string, string>> = {
  GATEWAY_KEY_ID: '(in-process)',
  USER_ID: '(untagged)',
  TEAM_ID: '(untagged)',
  SESSION_ID: '(no session)',
  PARENT_SESSION_ID: '(no session)',
  MODEL: '(none)',
  PROVIDER: '(none)',
};

/** `svc analytics sessions`: agent sessions by recency or cost (GET /analytics/sessions). */
import { parseSessionOrder, parseSessionsLimit, querySessions } from '../../../analytics/index.ts';
import { defineReport, flagName, objectsTable } from './common.ts';

export default defineReport({
  name: 'sessions',
  description: 'Agent sessions, most recently updated (or most costly) first',
  windowed: false,
  args: {
    limit: { type: 'string', description: 'How many, 1 to 500 (default 25)' },
    order: { type: 'string', description: 'recency (default) or cost' },
  },
  check: (raw) => {
    parseSessionOrder(raw, flagName);
    parseSessionsLimit(raw, flagName);
  },
  read: ({ store, raw }) =>
    querySessions(store.kysely, {
      order: parseSessionOrder(raw, flagName),
      limit: parseSessionsLimit(raw, flagName),
    }),
  table: objectsTable,
});

import { defineCommand } from 'citty';
import { notImplemented } from '../../not-implemented.ts';

export default defineCommand({
  meta: {
    name: 'analytics',
    description: 'Per-user data export and read-only spend reports from the trace store',
  },
  subCommands: {
    'user-export': defineCommand({
      meta: { name: 'user-export', description: "Stream one user's events as JSON lines" },
      args: {
        user_id: { type: 'positional', description: 'User id (^[A-Za-z0-9_-]{1,200}$)' },
        from: { type: 'string', description: 'Window start, ISO 8601 UTC (inclusive)' },
        to: { type: 'string', description: 'Window end, ISO 8601 UTC (exclusive)' },
        out: { type: 'string', description: 'Write to this file instead of stdout' },
        'db-path': { type: 'string', description: 'Trace store path' },
      },
      run() {
        notImplemented('svc analytics user-export');
      },
    }),
  },
});

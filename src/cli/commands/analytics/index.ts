import { defineCommand } from 'citty';

const load = <T>(p: Promise<{ default: T }>) => p.then((m) => m.default);

export default defineCommand({
  meta: {
    name: 'analytics',
    description: 'Per-user data export and read-only spend reports from the trace store',
  },
  subCommands: {
    'user-export': () => load(import('./user-export.ts')),
  },
});

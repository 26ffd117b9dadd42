import { defineCommand } from 'citty';

const load = <T>(p: Promise<{ default: T }>) => p.then((m) => m.default);

export default defineCommand({
  meta: {
    name: 'analytics',
    description: 'Per-user data export and read-only spend reports from the trace store',
  },
  subCommands: {
    'user-export': () => load(import('./user-export.ts')),
    cost: () => load(import('./cost.ts')),
    cache: () => load(import('./cache.ts')),
    routing: () => load(import('./routing.ts')),
    reliability: () => load(import('./reliability.ts')),
    sessions: () => load(import('./sessions.ts')),
    savings: () => load(import('./savings.ts')),
    'by-key': () => load(import('./by-key.ts')),
    'by-team': () => load(import('./by-team.ts')),
  },
});

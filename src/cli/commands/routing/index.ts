import { defineCommand } from 'citty';

const load = <T>(p: Promise<{ default: T }>) => p.then((m) => m.default);

export default defineCommand({
  meta: {
    name: 'routing',
    description: 'Inspect the routing chain and what the pattern slot learned from the trace store',
  },
  subCommands: {
    explain: () => load(import('./explain.ts')),
  },
});

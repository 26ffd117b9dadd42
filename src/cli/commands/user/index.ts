import { defineCommand } from 'citty';

const load = <T>(p: Promise<{ default: T }>) => p.then((m) => m.default);

export default defineCommand({
  meta: { name: 'user', description: 'Per-user data operations (forget)' },
  subCommands: {
    forget: () => load(import('./forget.ts')),
  },
});

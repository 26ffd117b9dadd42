/**
 * @module The command tree. Subcommands load lazily so `svc --help` stays fast.
 */
import { defineCommand } from 'citty';
import pkg from '../../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;

const load = <T>(p: Promise<{ default: T }>) => p.then((m) => m.default);

export const rootCommand = defineCommand({
  meta: {
    name: 'svc',
    version: VERSION,
    description: 'Self-hosted LLM gateway, agent server and spend analytics',
  },
  subCommands: {
    gateway: () => load(import('./commands/gateway/index.ts')),
    serve: () => load(import('./commands/serve.ts')),
    chat: () => load(import('./commands/chat.ts')),
    analytics: () => load(import('./commands/analytics/index.ts')),
    user: () => load(import('./commands/user/index.ts')),
    routing: () => load(import('./commands/routing/index.ts')),
    backup: () => load(import('./commands/backup.ts')),
    restore: () => load(import('./commands/restore.ts')),
    forward: () => load(import('./commands/forward.ts')),
  },
});

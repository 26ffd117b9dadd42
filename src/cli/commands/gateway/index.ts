/**
 * @module `svc gateway`: its flags and subcommands. The server's code (Hono, undici, prom-client, routing)
 * loads only when the gateway itself runs (start.ts): a key command or `--help` does not pay for it.
 */
import { defineCommand } from 'citty';
import { DEFAULT_DB_PATH_HELP } from '../../../config/paths.ts';
import { keystoreArgs } from './common.ts';

const load = <T>(p: Promise<{ default: T }>) => p.then((m) => m.default);

export default defineCommand({
  meta: { name: 'gateway', description: 'Run the LLM gateway, or manage its keys and trace store' },
  args: {
    port: { type: 'string', description: 'Port (default 8422, or SVC_GATEWAY_PORT)' },
    host: { type: 'string', description: 'Bind host; non-loopback values are rewritten to 127.0.0.1' },
    models: { type: 'string', description: 'models.yaml (default SVC_MODELS, else the built-in table)' },
    routing: {
      type: 'string',
      description: 'routing.yaml (default SVC_ROUTING_POLICY, else the built-in policy)',
    },
    ...keystoreArgs,
    // the key commands' --db-path takes only their audit events; the gateway's is its whole trace store
    'db-path': {
      type: 'string',
      description: `Trace store (default SVC_GATEWAY_DB_PATH, then SVC_DB_PATH, else ${DEFAULT_DB_PATH_HELP})`,
    },
  },
  subCommands: {
    'issue-key': () => load(import('./issue-key.ts')),
    'revoke-key': () => load(import('./revoke-key.ts')),
    'rotate-key': () => load(import('./rotate-key.ts')),
    'list-keys': () => load(import('./list-keys.ts')),
    backup: () => load(import('../backup.ts')),
    restore: () => load(import('../restore.ts')),
  },
  async run({ args }) {
    const { startGateway } = await import('./start.ts');
    await startGateway(args);
  },
});

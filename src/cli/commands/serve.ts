/**
 * @module `svc serve`: its flags. The agent server's code loads only when it runs (serve-start.ts), so
 * `svc --help` and `svc serve --help` do not load it.
 */
import { defineCommand } from 'citty';
import { DEFAULT_SERVE_PORT } from '../../agent/serve-port.ts';
import { DEFAULT_DB_PATH_HELP } from '../../config/paths.ts';
import { databaseUrlArg } from '../store-flags.ts';

export default defineCommand({
  meta: { name: 'serve', description: 'Run the agent server (sessions, turns, history, routing, metrics)' },
  args: {
    port: { type: 'string', description: `Port (default ${DEFAULT_SERVE_PORT}, or SVC_SERVE_PORT)` },
    host: {
      type: 'string',
      description: 'Bind host (or SVC_SERVE_HOST); only loopback addresses, anything else binds 127.0.0.1',
    },
    'db-path': {
      type: 'string',
      description: `Trace store (default SVC_DB_PATH, else ${DEFAULT_DB_PATH_HELP})`,
    },
    ...databaseUrlArg,
    models: { type: 'string', description: 'models.yaml (default SVC_MODELS, else the built-in table)' },
    routing: {
      type: 'string',
      description: 'routing.yaml (default SVC_ROUTING_POLICY, else the built-in policy)',
    },
  },
  async run({ args }) {
    const { startServe } = await import('./serve-start.ts');
    await startServe(args);
  },
});

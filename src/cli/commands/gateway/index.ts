import { defineCommand } from 'citty';
import { readEnv } from '../../../config/env.ts';
import { DEFAULT_DB_PATH_HELP, resolveKeystorePath, resolveStoreTarget } from '../../../config/paths.ts';
import { assembleGateway, checkGatewaySettings, runGateway } from '../../../gateway/index.ts';
import { parsePort } from '../../../http/listen.ts';
import { installFatalErrorHandler } from '../../../lib/fatal-error.ts';
import { createLogger } from '../../../lib/log.ts';
import { heldStopAbortSignal } from '../../../lib/stop-signal.ts';
import { configFileFlagsOf } from '../../config-flags.ts';
import { createRuntime } from '../../runtime.ts';
import { storeFlagsOf } from '../../store-flags.ts';
import { assertNoKeystoreFlag, keystoreArgs } from './common.ts';

const DEFAULT_PORT = 8422;
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
    const env = readEnv();
    const log = createLogger({ level: env.debug ? 'debug' : 'info' });
    installFatalErrorHandler({ log, debug: env.debug, testFault: env.testFault });
    const port =
      args.port !== undefined
        ? parsePort(args.port, '--port')
        : env.gatewayPort !== undefined
          ? parsePort(env.gatewayPort, 'SVC_GATEWAY_PORT')
          : DEFAULT_PORT;
    const { modelsPath, routingPath } = configFileFlagsOf(args);
    const target = resolveStoreTarget(env, storeFlagsOf(args), 'gateway');
    if (target.engine === 'postgres') assertNoKeystoreFlag(args);
    checkGatewaySettings(env); // a typo in a number refuses the start before the store is touched
    await runGateway({
      env,
      log,
      port,
      host: args.host ?? env.gatewayHost,
      keys:
        target.engine === 'sqlite'
          ? { kind: 'file', path: resolveKeystorePath(env, args.keystore) }
          : { kind: 'table' },
      openRuntime: () =>
        createRuntime({
          env,
          log,
          dbPathFlag: args['db-path'],
          databaseUrlFlag: args['database-url'],
          scope: 'gateway',
          backgroundCheckpoints: true,
          serverLock: 'gateway', // a second gateway on a SQLite store is refused (README §Trace store)
          signal: heldStopAbortSignal(), // a SIGTERM while PostgreSQL hangs ends the start at once
        }),
      extend: (runtime, keys) =>
        assembleGateway({
          keys,
          env,
          log,
          bus: runtime.bus,
          clock: runtime.clock,
          newId: runtime.newId,
          store: runtime.store,
          modelsPath,
          routingPath,
        }),
      writeRequestLog: (line) => process.stdout.write(line),
    });
  },
});

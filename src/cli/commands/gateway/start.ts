/**
 * @module `svc gateway` itself: reads its settings and runs the server until a stop signal. Loaded only
 * when the gateway runs (index.ts), so the key commands do not load the server's code.
 */
import { readEnv } from '../../../config/env.ts';
import { resolveKeystorePath, resolveStoreTarget } from '../../../config/paths.ts';
import { assembleGateway, checkGatewaySettings, runGateway } from '../../../gateway/index.ts';
import { hostFlag, parsePort } from '../../../http/port.ts';
import { writeLinesPerTurn } from '../../../http/request-log.ts';
import { installFatalErrorHandler } from '../../../lib/fatal-error.ts';
import { createLogger } from '../../../lib/log.ts';
import { heldStopAbortSignal } from '../../../lib/stop-signal.ts';
import { configFileFlagsOf } from '../../config-flags.ts';
import { createRuntime } from '../../runtime.ts';
import { storeFlagsOf } from '../../store-flags.ts';
import { assertNoKeystoreFlag, type KeystoreArgs } from './common.ts';

const DEFAULT_PORT = 8422;

export interface GatewayArgs extends KeystoreArgs {
  port?: string;
  host?: string;
  models?: string;
  routing?: string;
}

export async function startGateway(args: GatewayArgs): Promise<void> {
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
    host: hostFlag(args.host, 'SVC_GATEWAY_HOST') ?? env.gatewayHost,
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
    writeRequestLog: writeLinesPerTurn((text) => process.stdout.write(text)),
  });
}

/**
 * @module `svc serve` itself: reads its settings and runs the agent server until a stop signal. Loaded only
 * when the server runs (serve.ts).
 */
import { assembleAgentEngine, checkAgentSettings, runAgentServer, servePortOf } from '../../agent/index.ts';
import { readEnv } from '../../config/env.ts';
import { hostFlag, parsePort } from '../../http/port.ts';
import { writeLinesPerTurn } from '../../http/request-log.ts';
import { installFatalErrorHandler } from '../../lib/fatal-error.ts';
import { createLogger } from '../../lib/log.ts';
import { whileStopSignalHeld } from '../../lib/stop-signal.ts';
import { configFileFlagsOf } from '../config-flags.ts';
import { VERSION } from '../root.ts';
import { createRuntime } from '../runtime.ts';

export interface ServeArgs {
  port?: string;
  host?: string;
  'db-path'?: string;
  'database-url'?: string;
  models?: string;
  routing?: string;
}

export async function startServe(args: ServeArgs): Promise<void> {
  const env = readEnv();
  const log = createLogger({ level: env.debug ? 'debug' : 'info' });
  installFatalErrorHandler({ log, debug: env.debug, testFault: env.testFault });
  // a --port given wins: SVC_SERVE_PORT is then not read (README §Environment variables)
  const port = args.port !== undefined ? parsePort(args.port, '--port') : servePortOf(env);
  const { modelsPath, routingPath } = configFileFlagsOf(args);
  checkAgentSettings(env); // a typo in a number refuses the start before the store is touched
  await runAgentServer({
    env,
    log,
    port,
    host: hostFlag(args.host, 'SVC_SERVE_HOST') ?? env.serveHost,
    modelsPath,
    routingPath,
    serverVersion: VERSION,
    createEngine: assembleAgentEngine,
    // a SIGTERM while PostgreSQL hangs ends the open at once; one after it lets the start finish the
    // recovery of turns left open (README §svc serve), so it does not close the store's connections
    openRuntime: () =>
      whileStopSignalHeld((signal) =>
        createRuntime({
          env,
          log,
          dbPathFlag: args['db-path'],
          databaseUrlFlag: args['database-url'],
          scope: 'any',
          backgroundCheckpoints: true,
          serverLock: 'serve', // a second agent server on the store is refused (README §Trace store, §PostgreSQL store)
          ...(signal ? { signal } : {}),
          // its WebSocket clients get each event as it is published: an opening event held back for company
          // was gone after a kill -9 although a client had it (and its call missing from the restart's gap)
          lazyOpeningCommits: false,
        }),
      ),
    writeRequestLog: writeLinesPerTurn((text) => process.stdout.write(text)),
  });
}

import { defineCommand } from 'citty';
import {
  assembleAgentEngine,
  checkAgentSettings,
  DEFAULT_SERVE_PORT,
  runAgentServer,
  servePortOf,
} from '../../agent/index.ts';
import { readEnv } from '../../config/env.ts';
import { DEFAULT_DB_PATH_HELP } from '../../config/paths.ts';
import { parsePort } from '../../http/listen.ts';
import { installFatalErrorHandler } from '../../lib/fatal-error.ts';
import { createLogger } from '../../lib/log.ts';
import { whileStopSignalHeld } from '../../lib/stop-signal.ts';
import { configFileFlagsOf } from '../config-flags.ts';
import { VERSION } from '../root.ts';
import { createRuntime } from '../runtime.ts';
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
      host: args.host ?? env.serveHost,
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
      writeRequestLog: (line) => process.stdout.write(line),
    });
  },
});

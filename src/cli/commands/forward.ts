import { defineCommand } from 'citty';
import { readEnv } from '../../config/env.ts';
import { assertReachableTarget, FORWARD_DRAIN_MS, parseHostPort, runForward } from '../../forward/index.ts';
import { SvcError } from '../../lib/errors.ts';
import { installFatalErrorHandler } from '../../lib/fatal-error.ts';
import { createLogger } from '../../lib/log.ts';

export default defineCommand({
  meta: {
    name: 'forward',
    description:
      'Forward TCP connections from one address to another (the cluster sidecar: 0.0.0.0:8423 → 127.0.0.1:8422)',
  },
  args: {
    listen: { type: 'string', description: 'Address to accept on (default 0.0.0.0:8423)' },
    target: { type: 'string', description: 'Address to connect to (default 127.0.0.1:8422)' },
    'drain-timeout': {
      type: 'string',
      description: `Seconds open connections may take to finish after SIGTERM/SIGINT (default ${FORWARD_DRAIN_MS / 1000})`,
    },
  },
  async run({ args }) {
    const env = readEnv();
    const log = createLogger({ level: env.debug ? 'debug' : 'info', base: { component: 'forward' } });
    installFatalErrorHandler({ log, debug: env.debug, testFault: env.testFault });
    const listen = parseHostPort(args.listen ?? '0.0.0.0:8423', '--listen');
    const target = parseHostPort(args.target ?? '127.0.0.1:8422', '--target');
    assertReachableTarget(listen, target);
    await runForward({ listen, target, drainMs: parseSeconds(args['drain-timeout']), log });
  },
});

// --- internal ---

/** The longest drain a timer holds: Node fires a longer one at once (TimeoutOverflowWarning). */
const MAX_DRAIN_SECONDS = Math.floor(2_147_483_647 / 1000);

function parseSeconds(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!(seconds <= MAX_DRAIN_SECONDS)) {
    throw new SvcError('usage_error', {
      message: `--drain-timeout must be a number of seconds from 0 to ${MAX_DRAIN_SECONDS} (for example 30), not "${text}".`,
    });
  }
  return Math.round(seconds * 1000);
}

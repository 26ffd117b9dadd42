/**
 * @module The port of --port and the SVC_*_PORT variables, and the --host flag, apart from the listener
 * (listen.ts) so the commands that only read a port (svc chat) do not load the servers' code.
 */
import { SvcError } from '../lib/errors.ts';

/**
 * A port number from a flag (`--port`) or a variable (SVC_GATEWAY_PORT, SVC_SERVE_PORT). A bad flag is a
 * usage error (exit 2); a bad variable refuses the start (exit 1, DECISIONS §2) like every other bad
 * SVC_* number, and says to fix or unset it.
 */
export function parsePort(text: string, source: string): number {
  const port = /^\d{1,5}$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (port >= 0 && port <= 65_535) return port;
  const problem = `${source} must be a port number from 0 to 65535, not "${text}"`;
  if (source.startsWith('--')) throw new SvcError('usage_error', { message: `${problem}.` });
  throw new SvcError('startup_refused', { message: `${problem}; fix or unset it and start svc again.` });
}

/**
 * `--host` as given: an empty one (an unset shell variable, `--host "$HOST"`) names no address, so it is a
 * usage error, as `--port ''` is, rather than a start on the default with nothing said.
 */
export function hostFlag(text: string | undefined, variable: string): string | undefined {
  if (text === undefined || text.trim() !== '') return text;
  throw new SvcError('usage_error', {
    message: `--host needs a loopback address such as 127.0.0.1; leave it out to use ${variable} or 127.0.0.1.`,
  });
}

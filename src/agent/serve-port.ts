/**
 * @module The agent server's port, apart from the server (server.ts) so `svc chat` and `svc serve --help`
 * do not load the server's code to know it.
 */
import type { SvcEnv } from '../config/env.ts';
import { parsePort } from '../http/port.ts';

export const DEFAULT_SERVE_PORT = 8421;

/** SVC_SERVE_PORT, else 8421: the agent server's port without --port, and where svc chat looks for it. */
export function servePortOf(env: Pick<SvcEnv, 'servePort'>): number {
  return env.servePort === undefined ? DEFAULT_SERVE_PORT : parsePort(env.servePort, 'SVC_SERVE_PORT');
}

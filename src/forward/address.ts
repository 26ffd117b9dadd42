/**
 * @module `host:port` addresses of `svc forward` (`0.0.0.0:8423`, `127.0.0.1:8422`, `[::1]:8422`).
 */
import { SvcError } from '../lib/errors.ts';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** Parses `host:port` or `[v6]:port`; a usage error (exit 2) names the flag otherwise. */
export function parseHostPort(text: string, flag: string): HostPort {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || !(port >= 0 && port <= 65_535)) {
    throw new SvcError('usage_error', {
      message: `${flag} must be host:port (for example 127.0.0.1:8422 or [::1]:8422), not "${text}".`,
    });
  }
  return { host: m[1] ?? m[2], port };
}

/** The printable form, bracketing IPv6 literals. */
export function formatHostPort(a: HostPort): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

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

/**
 * A target no connection can reach, or that is the listen address itself, is a usage error: port 0 is no
 * port to connect to, and a target svc forward accepts on would forward every connection to itself, each
 * one opening another until the process runs out of sockets. The target counts as the listen address
 * when the ports match and the hosts are the same (`localhost` being 127.0.0.1 and ::1), or one is a
 * wildcard (0.0.0.0, ::) and the other a wildcard or a loopback address (another host on the same port is a
 * real target).
 */
export function assertReachableTarget(listen: HostPort, target: HostPort): void {
  const shown = formatHostPort(target);
  if (target.port === 0) {
    throw new SvcError('usage_error', {
      message: `--target must name a port from 1 to 65535, not "${shown}": port 0 is no port to connect to.`,
    });
  }
  const same = (a: string, b: string) => names(a).some((h) => names(b).includes(h));
  const local = (h: string) => isWildcard(h) || isLoopback(h);
  const loops =
    listen.port === target.port &&
    (same(listen.host, target.host) ||
      (isWildcard(listen.host) && local(target.host)) ||
      (isWildcard(target.host) && local(listen.host)));
  if (loops) {
    throw new SvcError('usage_error', {
      message: `--target ${shown} is the address svc forward listens on (--listen ${formatHostPort(listen)}), so every connection would be forwarded to itself; point --target at the gateway (default 127.0.0.1:8422).`,
    });
  }
}

/** The printable form, bracketing IPv6 literals. */
export function formatHostPort(a: HostPort): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

// --- internal ---

function normalHost(host: string): string {
  const h = host.toLowerCase();
  return h === '[::]' ? '::' : h;
}

/** The addresses a host names: `localhost` both loopback addresses it resolves to, any other itself. */
function names(host: string): string[] {
  const h = normalHost(host);
  return h === 'localhost' ? ['localhost', '127.0.0.1', '::1'] : [h];
}

function isWildcard(host: string): boolean {
  const h = normalHost(host);
  return h === '0.0.0.0' || h === '::' || /^(0:){7}0$/.test(h);
}

function isLoopback(host: string): boolean {
  const h = normalHost(host);
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

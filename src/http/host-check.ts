/**
 * @module DNS-rebinding protection for loopback servers (DECISIONS §4): the `Host` header must name a
 * loopback host (any port) or a name from SVC_ALLOWED_HOSTS, and a browser `Origin`, when sent, must be the
 * server's own (the host and port the request was sent to) or a name from SVC_ALLOWED_HOSTS: a page served
 * by another local program (another localhost port) is a foreign origin like any other site.
 * Shared by HTTP middleware and the WebSocket handshake.
 */
import type { MiddlewareHandler } from 'hono';
import { SvcError } from '../lib/errors.ts';
import { type HeaderReader, requestHeaders } from './request-headers.ts';

/**
 * Names added by SVC_ALLOWED_HOSTS (comma-separated; an entry may carry `:port` to pin the port). An entry
 * no Host header can ever equal (a URL such as `https://svc.example.com`, a path, `*`, a space, an empty
 * name or label, port 0 or a port written with leading zeros) refuses the start: taken silently, it left
 * the name it meant refused with 403 and no hint why.
 */
export function parseAllowedHosts(value: string | undefined): string[] {
  const entries = (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const bad = entries.find((entry) => !isAllowedHostEntry(entry));
  if (bad !== undefined) {
    throw new SvcError('startup_refused', {
      message: `SVC_ALLOWED_HOSTS entry "${bad}" is not a host name or address with an optional :port from 1 to 65535 (such as svc.example.com or svc:8422); fix or unset it and start svc again.`,
    });
  }
  return entries;
}

/** True when a `Host` header value names a loopback host or an allowed name. */
export function isAllowedHost(host: string | undefined, allowed: readonly string[]): boolean {
  if (!host) return false;
  const value = host.trim().toLowerCase();
  const name = hostname(value);
  if (name === undefined) return false;
  if (isLoopbackName(name)) return true;
  return allowed.some((a) => a === name || a === value);
}

/**
 * True when there is no `Origin` (not a browser), when it is the server's own origin (its host and port are
 * those of the request's `Host`, whatever the scheme: a TLS terminator may sit in front), or when it names
 * an SVC_ALLOWED_HOSTS entry (an entry with `:port` pins the port). `null` and other loopback ports are
 * foreign: a browser on the same machine runs pages of any local program. Loopback names are one host here.
 */
export function isAllowedOrigin(
  origin: string | undefined,
  allowed: readonly string[],
  host: string | undefined,
): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const name = url.hostname.replace(/^\[|\]$/g, '');
  if (allowed.some((a) => a === name || a === url.host)) return true;
  return isSameOrigin(url, name, host);
}

/** Loopback literal or name: localhost (and *.localhost), 127.0.0.0/8, ::1. */
export function isLoopbackName(name: string): boolean {
  if (name === '127.0.0.1' || name === 'localhost') return true; // what nearly every request names
  const n = name.toLowerCase().replace(/^\[|\]$/g, '');
  if (n === 'localhost' || n.endsWith('.localhost')) return true;
  if (n === '::1' || n === '0:0:0:0:0:0:0:1') return true;
  return /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(n);
}

/** Middleware: 403 host_not_allowed / origin_not_allowed before anything else runs. */
export function createHostCheck(options: { allowedHosts: readonly string[] }): MiddlewareHandler {
  const allowed = options.allowedHosts;
  return function hostCheck(c, next) {
    const refusal = hostRefusal(requestHeaders(c), allowed);
    if (refusal) throw refusal;
    return next();
  };
}

/** The 403 a request's Host or Origin earns (host_not_allowed / origin_not_allowed), or undefined. */
export function hostRefusal(headers: HeaderReader, allowed: readonly string[]): SvcError | undefined {
  const host = headers.get('host') ?? undefined;
  if (!isAllowedHost(host, allowed)) {
    return new SvcError('host_not_allowed', {
      message:
        'The Host header does not name this loopback service; add the name to SVC_ALLOWED_HOSTS if it is a legitimate alias.',
    });
  }
  const origin = headers.get('origin') ?? undefined;
  if (!isAllowedOrigin(origin, allowed, host)) {
    return new SvcError('origin_not_allowed', {
      message: 'Requests from a foreign browser Origin are refused (DNS-rebinding protection).',
    });
  }
  if (origin === undefined && isForeignNoCorsRequest(headers)) {
    return new SvcError('origin_not_allowed', {
      message:
        "Requests another site's page makes without an Origin (an image, a script, a no-cors fetch) are refused; open the page itself instead.",
    });
  }
  return undefined;
}

/**
 * A browser request another site's page made that carries no `Origin` (an `<img>`, `<script>` or no-cors
 * fetch of a GET): the browser says so in `Sec-Fetch-Site` (another localhost port is `same-site`, foreign
 * here too). Such a GET cannot read the answer, but it runs it (an export records its audit event); a top-level
 * navigation (a link followed to the dashboard) is the user's own and passes. A request that carries an
 * `Origin` is judged by it alone (an SVC_ALLOWED_HOSTS page is same-site too).
 */
function isForeignNoCorsRequest(headers: HeaderReader): boolean {
  const site = headers.get('sec-fetch-site');
  if (site !== 'cross-site' && site !== 'same-site') return false;
  return !(headers.get('sec-fetch-mode') === 'navigate' && headers.get('sec-fetch-dest') === 'document');
}

// --- internal ---

/**
 * The origin names the host and port of the request's `Host` (a port left out is the scheme's default). Two
 * loopback names with one port are one server: a page opened as http://localhost:8421 uses the ws_url the
 * server gives out, ws://127.0.0.1:8421/….
 */
function isSameOrigin(url: URL, name: string, host: string | undefined): boolean {
  if (!host) return false;
  const value = host.trim().toLowerCase();
  const hostName = hostname(value);
  if (hostName === undefined) return false;
  if (hostName !== name && !(isLoopbackName(hostName) && isLoopbackName(name))) return false;
  const fallback = url.protocol === 'https:' ? '443' : '80';
  return (portOf(value) || fallback) === (url.port || fallback);
}

/** Host without its port; handles `[::1]:8422`. Undefined when malformed. */
function hostname(value: string): string | undefined {
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return undefined;
    const rest = value.slice(end + 1);
    if (rest && !(rest.startsWith(':') && isPort(rest.slice(1)))) return undefined;
    return value.slice(1, end);
  }
  // read in place (no split: this runs on every request)
  const colon = value.indexOf(':');
  if (colon === -1) return value || undefined;
  if (value.indexOf(':', colon + 1) !== -1) return value; // a bare IPv6 literal
  if (!isPort(value.slice(colon + 1))) return undefined;
  return colon === 0 ? undefined : value.slice(0, colon);
}

/** The port of a Host value that `hostname` accepted; '' when it names none (a bare IPv6 literal has none). */
function portOf(value: string): string {
  if (value.startsWith('[')) return value.slice(value.indexOf(']') + 2);
  const colon = value.indexOf(':');
  return colon !== -1 && value.indexOf(':', colon + 1) === -1 ? value.slice(colon + 1) : '';
}

/** A DNS name (letters, digits, `-`, `_`, dots), an IPv4 address, or an IPv6 literal. */
const HOST_NAME = /^(?:[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_.])?|[0-9a-f:.]*:[0-9a-f:.]*)$/;

/**
 * An SVC_ALLOWED_HOSTS entry a Host header can equal: a name (no empty label) or address, and a port, when
 * given, as a client writes it (1–65535, no leading zero; nobody connects to port 0).
 */
function isAllowedHostEntry(entry: string): boolean {
  const name = hostname(entry);
  if (name === undefined || !HOST_NAME.test(name) || name.includes('..')) return false;
  const port = portOf(entry);
  return port === '' || (/^[1-9]\d{0,4}$/.test(port) && Number(port) <= 65_535);
}

/** A port as a Host header may carry it: 0–65535 in decimal. */
function isPort(text: string): boolean {
  return /^\d{1,5}$/.test(text) && Number(text) <= 65_535;
}

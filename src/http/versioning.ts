/**
 * @module Header versioning of service-owned paths (spec 1 §Versioning): resolves `Svc-API-Version`
 * before any handler, answers 410 for unsupported pins and 204 for OPTIONS, and stamps the version
 * headers on every response without buffering streams. Provider-shape paths and /metrics are untouched.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { SvcError } from '../lib/errors.ts';
import { tokenHashPrefix } from '../lib/hash.ts';
import type { Logger } from '../lib/log.ts';

export const CURRENT_API_VERSION = '1.0';
export const MIN_SUPPORTED_API_VERSION = '1.0';
/** Each deprecated version carries a sunset at least 6 months after the announcement (spec 1). */
export const DEPRECATED_API_VERSIONS: readonly DeprecatedVersion[] = [];

export interface DeprecatedVersion {
  version: string;
  /** Last day (UTC, `YYYY-MM-DD`) on which the version is still served. */
  sunset: string;
}

export interface VersioningOptions {
  current?: string;
  minSupported?: string;
  deprecated?: readonly DeprecatedVersion[];
  now?: () => Date;
  log: Logger;
  /** Paths left alone; default: provider-shape paths (`/v1/*`) and `/metrics` (DECISIONS §5). */
  isExempt?: (path: string) => boolean;
}

export type VersionResolution =
  | { outcome: 'served'; version: string; sunset?: string }
  | { outcome: 'rejected'; version: string; reason: 'below_min' | 'past_sunset'; sunset?: string };

/** Hono variables set by the middleware: the resolved or echoed version. */
export type VersioningEnv = { Variables: { apiVersion: string } };

/** Pure resolution of one requested value (the spec 1 resolution table); `today` is `YYYY-MM-DD` UTC. */
export function resolveApiVersion(
  requested: string | undefined,
  table: { current: string; minSupported: string; deprecated: readonly DeprecatedVersion[] },
  today: string,
): VersionResolution {
  const value = requested?.trim() ?? '';
  if (value === '') return { outcome: 'served', version: table.current };
  const parsed = parseVersion(value);
  const min = parseVersion(table.minSupported)!;
  if (parsed && compareVersions(parsed, min) < 0)
    return { outcome: 'rejected', version: value, reason: 'below_min' };
  const dep = table.deprecated.find((d) => sameVersion(d.version, value, parsed));
  if (dep) {
    // strict: the sunset day itself is still served (spec 1 §Versioning)
    if (today > dep.sunset)
      return { outcome: 'rejected', version: value, reason: 'past_sunset', sunset: dep.sunset };
    return { outcome: 'served', version: value, sunset: dep.sunset };
  }
  return { outcome: 'served', version: value }; // current, unknown, future or malformed: echoed
}

/** The version table (validated), clock and exemption both middlewares work with. */
function settingsOf(options: Omit<VersioningOptions, 'log'>) {
  const table = {
    current: options.current ?? CURRENT_API_VERSION,
    minSupported: options.minSupported ?? MIN_SUPPORTED_API_VERSION,
    deprecated: options.deprecated ?? DEPRECATED_API_VERSIONS,
  };
  validateTable(table);
  return {
    table,
    now: options.now ?? (() => new Date()),
    isExempt: options.isExempt ?? isProviderOrMetricsPath,
  };
}

/** The middleware; mount it first on every service app. */
export function createVersioning(options: VersioningOptions): MiddlewareHandler<VersioningEnv> {
  const { table, now, isExempt } = settingsOf(options);
  const versioned: MiddlewareHandler<VersioningEnv> = async (c, next) => {
    const today = now().toISOString().slice(0, 10);
    const r = resolveApiVersion(c.req.header('svc-api-version'), table, today);
    const headers = versionHeaders(r, supportedVersions(table, today));
    if (r.outcome === 'rejected') return gone(c, r, table, headers);
    if (r.sunset) warnDeprecated(options.log, c, r.version, r.sunset);
    c.set('apiVersion', r.version);
    if (c.req.method === 'OPTIONS') return c.body(null, 204, headers);
    await next();
    // a WebSocket upgrade answer cannot be re-wrapped; everything else gets the headers
    if (c.res.status === 101) return;
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
  };
  // an exempt path (every provider call) passes through without an async frame of its own
  return function versioning(c, next) {
    return isExempt(c.req.path) ? next() : versioned(c, next);
  };
}

/**
 * Stamps the version headers on answers given before `createVersioning` runs: a service app that must
 * refuse a foreign Host/Origin (403) or a request during shutdown (503) ahead of everything else mounts
 * this first, so those answers carry `Svc-API-Version` and `Svc-API-Versions-Supported` too (spec 1:
 * "always"). It refuses nothing itself and leaves a response that already has the headers alone.
 */
export function createVersionHeaderStamp(
  options: Omit<VersioningOptions, 'log'> = {},
): MiddlewareHandler<VersioningEnv> {
  const stamp = createVersionStamp(options);
  return async function versionHeaderStamp(c, next) {
    await next();
    stamp(c);
  };
}

/** What `createVersionHeaderStamp` does once the app answered: for an app's own first middleware. */
export function createVersionStamp(options: Omit<VersioningOptions, 'log'> = {}): (c: Context) => void {
  const { table, now, isExempt } = settingsOf(options);
  return (c) => {
    if (isExempt(c.req.path) || c.res.status === 101 || c.res.headers.has('svc-api-version')) return;
    const today = now().toISOString().slice(0, 10);
    const r = resolveApiVersion(c.req.header('svc-api-version'), table, today);
    for (const [name, value] of Object.entries(versionHeaders(r, supportedVersions(table, today))))
      c.header(name, value);
  };
}

/**
 * The version headers of an answer to a request that names no version: what an answer the app never saw
 * carries (a request Node refused before it, listen.ts).
 */
export function defaultVersionHeaders(options: Omit<VersioningOptions, 'log'> = {}): Record<string, string> {
  const { table, now } = settingsOf(options);
  const today = now().toISOString().slice(0, 10);
  return versionHeaders(resolveApiVersion(undefined, table, today), supportedVersions(table, today));
}

/** Default exemption: provider-shape paths keep the provider's contract; /metrics carries no headers. */
export function isProviderOrMetricsPath(path: string): boolean {
  return path.startsWith('/v1/') || path === '/metrics' || path.startsWith('/metrics/');
}

// --- internal ---

type Parsed = [number, number];

/**
 * `major.minor`, `major.minor.patch`, or a full semantic version with its pre-release and build parts
 * (`0.9.0-beta.1+build.7`): each is a version the resolution table compares (spec 1: one that "parses
 * below" the minimum is 410), by major and minor, the granularity of `Svc-API-Version`. Anything else is
 * malformed: echoed and served, a number with a leading zero (`00.9`, `0.09`) too, as semantic versioning
 * forbids one.
 */
const DOTTED_IDS = '[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*';
const NUMBER = '(0|[1-9]\\d{0,5})';
const VERSION = new RegExp(
  `^${NUMBER}\\.${NUMBER}(?:\\.${NUMBER}(?:-${DOTTED_IDS})?(?:\\+${DOTTED_IDS})?)?$`,
);

function parseVersion(text: string): Parsed | undefined {
  const m = VERSION.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function compareVersions(a: Parsed, b: Parsed): number {
  return a[0] - b[0] || a[1] - b[1];
}

function sameVersion(listed: string, requested: string, parsed: Parsed | undefined): boolean {
  const p = parseVersion(listed);
  return parsed && p ? compareVersions(p, parsed) === 0 : listed === requested;
}

/** Current, the minimum and deprecated versions not yet past sunset, newest first. */
function supportedVersions(
  table: { current: string; minSupported: string; deprecated: readonly DeprecatedVersion[] },
  today: string,
): string {
  const list = [
    table.current,
    table.minSupported,
    ...table.deprecated.filter((d) => today <= d.sunset).map((d) => d.version),
  ];
  const unique = [...new Set(list)];
  unique.sort((a, b) => compareVersions(parseVersion(b)!, parseVersion(a)!));
  return unique.join(', ');
}

function versionHeaders(r: VersionResolution, supported: string): Record<string, string> {
  const headers: Record<string, string> = {
    'Svc-API-Version': r.version,
    'Svc-API-Versions-Supported': supported,
  };
  if (r.outcome === 'served' && r.sunset) {
    headers.Deprecation = 'true'; // always together with Sunset, never alone
    headers.Sunset = r.sunset;
  } else if (r.outcome === 'rejected' && r.sunset) headers.Sunset = r.sunset;
  return headers;
}

function gone(
  c: Context,
  r: Extract<VersionResolution, { outcome: 'rejected' }>,
  table: { current: string; minSupported: string },
  headers: Record<string, string>,
): Response {
  const message =
    r.reason === 'below_min'
      ? `API version ${r.version} is below the minimum supported version ${table.minSupported}; send Svc-API-Version: ${table.current} or omit the header.`
      : `API version ${r.version} passed its sunset date ${r.sunset}; send Svc-API-Version: ${table.current} or omit the header.`;
  const err = new SvcError('version_unsupported', { message });
  const body = {
    error: {
      code: err.code,
      message,
      requested: r.version,
      min_supported: table.minSupported,
      current: table.current,
      reason: r.reason,
    },
  };
  return c.json(body, 410, headers);
}

function warnDeprecated(log: Logger, c: Context, version: string, sunset: string): void {
  const token = bearerToken(c);
  log.warn('deprecated Svc-API-Version requested', {
    requested: version,
    sunset,
    method: c.req.method,
    path: c.req.path,
    // spec 1 §Versioning: first 12 hex characters of the SHA-256 of the caller's token, never the token
    token_hash_prefix: token ? tokenHashPrefix(token, 12) : null,
  });
}

function bearerToken(c: Context): string | undefined {
  const auth = c.req.header('authorization');
  const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  return m?.[1] ?? c.req.header('x-api-key') ?? undefined;
}

function validateTable(table: {
  current: string;
  minSupported: string;
  deprecated: readonly DeprecatedVersion[];
}): void {
  const bad: string[] = [];
  if (!parseVersion(table.current)) bad.push(`current ${table.current}`);
  if (!parseVersion(table.minSupported)) bad.push(`minSupported ${table.minSupported}`);
  for (const d of table.deprecated) {
    if (!parseVersion(d.version)) bad.push(`deprecated version ${d.version}`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(d.sunset) || Number.isNaN(Date.parse(`${d.sunset}T00:00:00Z`)))
      bad.push(`sunset ${d.sunset} of ${d.version}`);
  }
  if (bad.length > 0)
    throw new SvcError('config_invalid', { message: `invalid API version table: ${bad.join(', ')}` });
}

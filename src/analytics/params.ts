/**
 * @module Query parameters of the analytics endpoints (spec 3, DECISIONS §5), read the same way for HTTP
 * query strings and the report commands' flags: whitelisted group_by and order, shape-guarded identity
 * filters, include_workers, the sessions limit, and the time window (7-day default).
 */
import { type ErrorCode, SvcError } from '../lib/errors.ts';
import { assertIdentityId } from './identity.ts';
import { exactBounds, MIN_WINDOW_US, resolveWindow, type TimeWindow, windowOf } from './window.ts';

/** spec 3 §GET /analytics/cost: the group_by whitelist, in the spec's order. */
export const GROUP_BY = [
  'model',
  'provider',
  'session',
  'day',
  'hour',
  'gateway_key',
  'user',
  'team',
  'parent_session',
  'is_worker',
  'none',
] as const;
export type GroupBy = (typeof GROUP_BY)[number];

/** spec 3 §GET /analytics/sessions. */
export const SESSION_ORDERS = ['cost', 'recency'] as const;
export type SessionOrder = (typeof SESSION_ORDERS)[number];

/** spec 3 §Limits, DECISIONS §5. */
export const DEFAULT_WINDOW_DAYS = 7;
export const DEFAULT_SESSIONS_LIMIT = 25;
export const MAX_SESSIONS_LIMIT = 500;

/** Raw parameters by their HTTP names; the command line maps its flags onto them. */
export type RawParams = Readonly<Record<string, string | undefined>>;

/** The error code a parameter's bad value is answered with (spec 3, DECISIONS §5). */
const PARAM_CODES: Readonly<Record<string, ErrorCode>> = {
  from: 'invalid_window',
  to: 'invalid_window',
  group_by: 'invalid_group_by',
  gateway_key: 'invalid_gateway_key',
  user: 'invalid_user',
  team: 'invalid_team',
  include_workers: 'validation_error',
  order: 'invalid_order',
  limit: 'invalid_limit',
  baseline: 'validation_error',
};

/** How a parameter is named where it came from (`group_by` on HTTP, `--group-by` on the CLI). */
export type ParamNamer = (name: string) => string;
const httpName: ParamNamer = (name) => name;

/**
 * The query's parameters, each given once: a parameter of these endpoints given twice (`user=a&user=b`)
 * is refused with its own error code rather than answered for one of the two values. Parameters the
 * endpoints do not read are left alone.
 */
export function singleValued(
  all: Readonly<Record<string, readonly string[]>>,
  shown: ParamNamer = httpName,
): RawParams {
  const raw: Record<string, string> = {};
  for (const [name, values] of Object.entries(all)) {
    const code = PARAM_CODES[name];
    if (values.length > 1 && code !== undefined)
      throw new SvcError(code, {
        message: `${shown(name)} is given ${values.length} times; give it once.`,
        details: { param: name },
      });
    if (values.length > 0) raw[name] = values[0];
  }
  return raw;
}

export interface SpendFilters {
  gatewayKey: string | null;
  user: string | null;
  team: string | null;
  /** false: rows with a parent_session_id (worker calls) are left out. */
  includeWorkers: boolean;
}

/**
 * `from` / `to`: `to` defaults to now and `from` to 7 days before `to` (so `to` alone is the week before
 * it). Malformed, or `from` after `to`: invalid_window.
 */
export function parseWindow(raw: RawParams, nowUs: number, name: ParamNamer = httpName): TimeWindow {
  const names = { from: name('from'), to: name('to') };
  const to = resolveWindow({ to: raw.to }, { defaults: { startUs: null, endUs: nowUs }, names });
  const end = exactBounds(to).end ?? BigInt(nowUs);
  const weekBefore = end - BigInt(DEFAULT_WINDOW_DAYS) * 86_400_000_000n;
  // a `to` in the first week of year 0000 starts the default window at that year's first instant
  const defaults = windowOf(weekBefore > MIN_WINDOW_US ? weekBefore : MIN_WINDOW_US, end);
  return resolveWindow({ from: raw.from, to: raw.to }, { defaults, names });
}

export function parseGroupBy(raw: RawParams, name: ParamNamer = httpName): GroupBy {
  const value = raw.group_by ?? 'model';
  if ((GROUP_BY as readonly string[]).includes(value)) return value as GroupBy;
  throw new SvcError('invalid_group_by', {
    message: `${name('group_by')} ${quote(value)} is not one of ${GROUP_BY.join(', ')}.`,
    details: { allowed: [...GROUP_BY] },
  });
}

export function parseSpendFilters(raw: RawParams, name: ParamNamer = httpName): SpendFilters {
  return {
    gatewayKey: parseGatewayKey(raw, name),
    user: optionalId(raw.user, 'invalid_user', `${name('user')} filter`),
    team: parseTeam(raw, name),
    includeWorkers: parseBoolean(raw.include_workers, name('include_workers'), true),
  };
}

export function parseGatewayKey(raw: RawParams, name: ParamNamer = httpName): string | null {
  return optionalId(raw.gateway_key, 'invalid_gateway_key', `${name('gateway_key')} filter`);
}

export function parseTeam(raw: RawParams, name: ParamNamer = httpName): string | null {
  return optionalId(raw.team, 'invalid_team', `${name('team')} filter`);
}

export function parseSessionOrder(raw: RawParams, name: ParamNamer = httpName): SessionOrder {
  const value = raw.order ?? 'recency';
  if ((SESSION_ORDERS as readonly string[]).includes(value)) return value as SessionOrder;
  throw new SvcError('invalid_order', {
    message: `${name('order')} ${quote(value)} is not one of ${SESSION_ORDERS.join(', ')}.`,
    details: { allowed: [...SESSION_ORDERS] },
  });
}

export function parseSessionsLimit(raw: RawParams, name: ParamNamer = httpName): number {
  const value = raw.limit;
  if (value === undefined) return DEFAULT_SESSIONS_LIMIT;
  const n = /^\d{1,6}$/.test(value) ? Number(value) : Number.NaN;
  if (n >= 1 && n <= MAX_SESSIONS_LIMIT) return n;
  throw new SvcError('invalid_limit', {
    message: `${name('limit')} ${quote(value)} is not a whole number from 1 to ${MAX_SESSIONS_LIMIT}.`,
    details: { min: 1, max: MAX_SESSIONS_LIMIT },
  });
}

// --- internal ---

function optionalId(
  value: string | undefined,
  code: 'invalid_gateway_key' | 'invalid_user' | 'invalid_team',
  what: string,
) {
  return value === undefined ? null : assertIdentityId(value, code, what);
}

function parseBoolean(value: string | undefined, shown: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new SvcError('validation_error', {
    message: `${shown} ${quote(value)} is not true or false.`,
    details: { field: shown },
  });
}

function quote(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

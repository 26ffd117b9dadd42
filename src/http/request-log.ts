import type { Context, MiddlewareHandler } from 'hono';

export interface RequestLogOptions {
  /** Receives one JSON line (with its newline) per finished request: stdout for the gateway. */
  write: (line: string) => void;
  /** Per-app fields (key id, shape, model...); never tokens or prompts (DECISIONS §4). */
  fields?: (c: Context) => Record<string, unknown>;
  now?: () => number;
}

/** One JSON line per request: time, method, path, status, latency_ms plus the app's fields. */
export function createRequestLog(options: RequestLogOptions): MiddlewareHandler {
  const now = options.now ?? (() => performance.now());
  return async function requestLog(c, next) {
    const started = now();
    try {
      await next();
    } finally {
      const line = {
        time: new Date().toISOString(),
        msg: 'request',
        method: c.req.method,
        path: loggedPath(c.req.path),
        ...options.fields?.(c),
        status: c.res.status,
        latency_ms: Math.round((now() - started) * 1000) / 1000,
      };
      options.write(`${JSON.stringify(line)}\n`);
    }
  };
}

/**
 * The path as logged: a user id in a user-data path (spec 3 export and forget) is personal data that
 * forget cannot reach in an operator's log files, so it is written `:user_id` (the audit events record the request).
 */
export function loggedPath(path: string): string {
  return path.startsWith(USER_DATA_PREFIX) ? path.replace(USER_DATA_ID, `${USER_DATA_PREFIX}:user_id`) : path;
}

const USER_DATA_PREFIX = '/analytics/user/';
const USER_DATA_ID = /^\/analytics\/user\/[^/]+/;

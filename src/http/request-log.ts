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
        path: c.req.path,
        ...options.fields?.(c),
        status: c.res.status,
        latency_ms: Math.round((now() - started) * 1000) / 1000,
      };
      options.write(`${JSON.stringify(line)}\n`);
    }
  };
}

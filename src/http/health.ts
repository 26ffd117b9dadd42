import type { Handler } from 'hono';

/**
 * GET /healthz (spec 1): no auth, `{status:"ok", uptime_seconds}`; only says the app is up. Mount it behind
 * http/versioning.ts, which stamps the version headers.
 */
export function createHealthHandler(options: { startedAtMs: number; now?: () => number }): Handler {
  const now = options.now ?? Date.now;
  return function health(c) {
    const uptime = Math.max(0, now() - options.startedAtMs) / 1000;
    return c.json({ status: 'ok', uptime_seconds: Math.round(uptime * 1000) / 1000 });
  };
}

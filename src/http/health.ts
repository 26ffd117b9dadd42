import type { Handler } from 'hono';

/** Version headers of service-owned paths (spec 1 §Versioning); interim until http/versioning.ts lands. */
export const CURRENT_API_VERSION = '1.0';

/** GET /healthz (spec 1): no auth, `{status:"ok", uptime_seconds}`; only says the app is up. */
export function createHealthHandler(options: { startedAtMs: number; now?: () => number }): Handler {
  const now = options.now ?? Date.now;
  return function health(c) {
    if (!c.res.headers.has('Svc-API-Version')) {
      c.header('Svc-API-Version', c.req.header('svc-api-version') || CURRENT_API_VERSION);
      c.header('Svc-API-Versions-Supported', CURRENT_API_VERSION);
    }
    const uptime = Math.max(0, now() - options.startedAtMs) / 1000;
    return c.json({ status: 'ok', uptime_seconds: Math.round(uptime * 1000) / 1000 });
  };
}

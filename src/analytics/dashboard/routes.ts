/**
 * @module The dashboard on `svc serve`: /dashboard/ (the HTML shell) and /dashboard/app.js (the browser
 * bundle tsup builds into dist/dashboard/, Chart.js inside: nothing is fetched from elsewhere). Same
 * origin as /analytics, so the page's calls pass the Host/Origin check and need no CORS.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Env, Hono } from 'hono';
import { SvcError } from '../../lib/errors.ts';
import { DASHBOARD_HTML } from './page.ts';

export interface DashboardOptions {
  /** Where app.js lives; default dist/dashboard/ beside the bundle that holds this module. */
  assetsDir?: string;
}

/** The page only talks to its own origin; inline styles are its own. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-cache',
};

export function mountDashboard<E extends Env>(app: Hono<E>, options: DashboardOptions = {}): void {
  const dir = options.assetsDir ?? fileURLToPath(new URL('./dashboard/', import.meta.url));
  let script: Promise<string> | undefined;
  app.get('/dashboard', (c) => c.redirect('/dashboard/', 301));
  app.get('/dashboard/', (c) => c.html(DASHBOARD_HTML, 200, SECURITY_HEADERS));
  app.get('/dashboard/app.js', async (c) => {
    script ??= readFile(join(dir, 'app.js'), 'utf8').catch((cause) => {
      script = undefined;
      throw new SvcError('not_found', {
        message: `The dashboard script is missing from ${dir}; build svc with npm run build.`,
        cause,
      });
    });
    return c.body(await script, 200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/javascript; charset=utf-8',
    });
  });
}

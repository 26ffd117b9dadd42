/**
 * @module GET /metrics for the gateway and the agent server: no authentication, no version headers and
 * never a 410 (spec 1 §GET /metrics, DECISIONS §5). Mount it before any versioning or auth
 * middleware: `mountMetrics(app, collector)` or `app.route('/metrics', createMetricsApp(collector))`.
 */
import { type Context, type Env, Hono } from 'hono';
import type { MetricsCollector } from './collector.ts';

/** The handler answering a scrape with the collector's exposition text. */
export function createMetricsHandler(collector: Pick<MetricsCollector, 'scrape' | 'contentType'>) {
  return async function metricsHandler(c: Context): Promise<Response> {
    const body = await collector.scrape();
    return c.body(body, 200, { 'content-type': collector.contentType, 'cache-control': 'no-store' });
  };
}

/** Mounts GET /metrics on `app`. */
export function mountMetrics<E extends Env>(
  app: Hono<E>,
  collector: Pick<MetricsCollector, 'scrape' | 'contentType'>,
): void {
  app.get('/metrics', createMetricsHandler(collector));
}

/** A sub-app answering GET / with the exposition, for `app.route('/metrics', …)` mounts. */
export function createMetricsApp(collector: Pick<MetricsCollector, 'scrape' | 'contentType'>): Hono {
  const app = new Hono();
  app.get('/', createMetricsHandler(collector));
  return app;
}

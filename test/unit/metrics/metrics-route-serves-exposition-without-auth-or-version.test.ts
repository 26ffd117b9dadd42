import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Hono } from 'hono';
import { createBus } from '#src/events/bus.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { createMetricsCollector } from '#src/metrics/collector.ts';
import { mountMetrics } from '#src/metrics/route.ts';
import { parseExposition, sampleOf } from '../../helpers/prometheus-exposition.ts';

test('GET /metrics answers 200 with the exact content type, the exposition and no version headers', async () => {
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const collector = createMetricsCollector({
    role: 'gateway',
    bus,
    log: silentLogger,
    gauges: { keysActive: () => 1 },
  });
  const app = new Hono();
  mountMetrics(app, collector);
  bus.publish({
    type: 'gateway.auth_failed',
    payload: { reason: 'missing_token', inbound_shape: 'anthropic' },
  });

  const res = await app.request('/metrics', { headers: { 'svc-api-version': '1999-01-01' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  for (const name of res.headers.keys()) assert.ok(!/version/i.test(name) || name === 'content-type', name);
  const f = await parseExposition(await res.text());
  assert.equal(sampleOf(f, 'svc_gateway_auth_failures_total', { reason: 'missing_token' }), 1);
  assert.equal(sampleOf(f, 'svc_gateway_keys_active'), 1);
});

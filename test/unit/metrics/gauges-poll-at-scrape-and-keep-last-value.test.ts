import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBus } from '#src/events/bus.ts';
import type { EventInput } from '#src/events/envelope.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { createLogger, silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { createMetricsCollector } from '#src/metrics/collector.ts';
import { parseExposition, sampleOf } from '../../helpers/prometheus-exposition.ts';

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, log: createLogger({ write: (l) => lines.push(JSON.parse(l)), level: 'debug' }) };
}

test('key gauges are read at every scrape, so changes show without restart', async () => {
  let active = 2;
  let revoked = 0;
  const collector = createMetricsCollector({
    role: 'gateway',
    log: silentLogger,
    gauges: { keysActive: () => active, keysRevoked: () => revoked },
  });
  let f = await parseExposition(await collector.scrape());
  assert.equal(sampleOf(f, 'svc_gateway_keys_active'), 2);
  assert.equal(sampleOf(f, 'svc_gateway_keys_revoked'), 0);
  active = 1;
  revoked = 1;
  f = await parseExposition(await collector.scrape());
  assert.equal(sampleOf(f, 'svc_gateway_keys_active'), 1);
  assert.equal(sampleOf(f, 'svc_gateway_keys_revoked'), 1);
});

test('a getter that throws keeps the previous value and is logged', async () => {
  const { lines, log } = capturingLogger();
  let fail = false;
  const collector = createMetricsCollector({
    role: 'agent',
    log,
    gauges: {
      sessionCount: () => {
        if (fail) throw new Error('store is locked');
        return 7;
      },
    },
  });
  assert.equal(sampleOf(await parseExposition(await collector.scrape()), 'svc_session_count'), 7);
  fail = true;
  assert.equal(sampleOf(await parseExposition(await collector.scrape()), 'svc_session_count'), 7);
  const warning = lines.find((l) => l.msg === 'metrics gauge getter failed; keeping the previous value');
  assert.equal(warning?.metric, 'svc_session_count');
  assert.equal(warning?.level, 'warn');
});

test('a getter returning a non-number is treated as a failure', async () => {
  let value = 3;
  const collector = createMetricsCollector({
    role: 'gateway',
    log: silentLogger,
    gauges: { keysActive: () => value },
  });
  await collector.scrape();
  value = Number.NaN;
  assert.equal(sampleOf(await parseExposition(await collector.scrape()), 'svc_gateway_keys_active'), 3);
});

test('a handler exception is logged and swallowed: the publisher and the bus never see it', async () => {
  const { lines, log } = capturingLogger();
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const warnings: string[] = [];
  bus.subscribe({ name: 'spy', types: ['bus.handler_warning'], handle: (e) => warnings.push(e.type) });
  const collector = createMetricsCollector({ role: 'gateway', bus, log });
  const hostile = {
    get provider(): string {
      throw new Error('boom');
    },
  };
  assert.doesNotThrow(() =>
    bus.publish({ type: 'llm.call_completed', payload: hostile } as EventInput as never),
  );
  bus.publish({ type: 'gateway.auth_failed', payload: { reason: 'invalid_token', inbound_shape: 'openai' } });
  assert.deepEqual(warnings, []);
  assert.equal(lines.find((l) => l.msg === 'metrics handler failed')?.event_type, 'llm.call_completed');
  const f = await parseExposition(await collector.scrape());
  assert.equal(sampleOf(f, 'svc_gateway_auth_failures_total', { reason: 'invalid_token' }), 1);
});

test('handlers return nothing, so no event ever waits on the collector', () => {
  const collector = createMetricsCollector({ role: 'gateway', log: silentLogger });
  assert.notEqual(collector.subscriber.durable, true);
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const { event } = bus.publish({
    type: 'gateway.auth_failed',
    payload: { reason: 'missing_token', inbound_shape: 'openai' },
  });
  assert.equal(collector.subscriber.handle(event), undefined);
});

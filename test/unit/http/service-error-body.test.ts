import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Hono } from 'hono';
import { createServiceErrorHandler, encodeServiceError, serviceNotFound } from '#src/http/service-errors.ts';
import { SvcError } from '#src/lib/errors.ts';
import { createLogger } from '#src/lib/log.ts';

test('a SvcError becomes {error:{code,message,details}} with its status', async () => {
  const app = new Hono();
  app.get('/x', () => {
    throw new SvcError('routing_failed', { message: 'no model', details: { tried: [] } });
  });
  app.onError(createServiceErrorHandler({ log: createLogger({ write: () => {} }) }));
  const res = await app.request('/x');
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), {
    error: { code: 'routing_failed', message: 'no model', details: { tried: [] } },
  });
});

test('details are omitted when there are none', () => {
  assert.deepEqual(encodeServiceError(new SvcError('turn_in_flight', { message: 'busy' })), {
    error: { code: 'turn_in_flight', message: 'busy' },
  });
  assert.deepEqual(encodeServiceError(new SvcError('turn_in_flight', { message: 'busy', details: {} })), {
    error: { code: 'turn_in_flight', message: 'busy' },
  });
});

test('an unexpected error is a 500 internal_error that does not leak its message', async () => {
  const lines: string[] = [];
  const app = new Hono();
  app.get('/x', () => {
    throw new Error('secret internals');
  });
  app.onError(createServiceErrorHandler({ log: createLogger({ write: (l) => lines.push(l) }) }));
  const res = await app.request('/x');
  assert.equal(res.status, 500);
  const body = (await res.json()) as any;
  assert.equal(body.error.code, 'internal_error');
  assert.ok(!JSON.stringify(body).includes('secret'));
  assert.ok(lines.some((l) => l.includes('secret internals')));
});

test('unknown paths are 404 not_found in the service body', async () => {
  const app = new Hono();
  app.notFound(serviceNotFound);
  const res = await app.request('/nowhere', { method: 'DELETE' });
  assert.equal(res.status, 404);
  assert.deepEqual(await res.json(), {
    error: { code: 'not_found', message: 'No route for DELETE /nowhere.' },
  });
});

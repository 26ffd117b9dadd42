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

test('an unexpected error on a user-data path is logged without the user id (forget cannot reach a log file)', async () => {
  const lines: string[] = [];
  const app = new Hono();
  app.post('/analytics/user/:user_id/forget', () => {
    throw new Error('the store went away');
  });
  app.onError(createServiceErrorHandler({ log: createLogger({ write: (l) => lines.push(l) }) }));
  const res = await app.request('/analytics/user/alice_smith-42/forget', { method: 'POST' });
  assert.equal(res.status, 500);
  const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'unhandled error');
  assert.deepEqual(
    logged.map((l) => l.path),
    ['/analytics/user/:user_id/forget'],
  );
  assert.ok(!lines.join('').includes('alice_smith-42'), lines.join(''));
});

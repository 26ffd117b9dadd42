import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAgentAppFixture } from './agent-app-fixture.ts';

test('once shutdown begins every request, /health included, is 503 service_shutting_down', async (t) => {
  const fx = await createAgentAppFixture(t);
  assert.equal((await fx.call('GET', '/health')).status, 200);
  fx.shuttingDown.value = true;
  for (const [method, path, body] of [
    ['GET', '/health', undefined],
    ['POST', '/sessions', { workspace_path: fx.workspace }],
    ['GET', '/sessions', undefined],
  ] as const) {
    const res = await fx.call(method, path, body);
    assert.equal(res.status, 503, path);
    const { error } = (await res.json()) as { error: { code: string } };
    assert.equal(error.code, 'service_shutting_down');
    // spec 1: every service-owned answer carries the version headers, this refusal included
    assert.equal(res.headers.get('svc-api-version'), '1.0', path);
    assert.equal(res.headers.get('svc-api-versions-supported'), '1.0', path);
  }
  const metrics = await fx.call('GET', '/metrics');
  assert.equal(metrics.status, 503);
  assert.equal(metrics.headers.get('svc-api-version'), null);
});

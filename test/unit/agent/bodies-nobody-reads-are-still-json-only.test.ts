import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAgentAppFixture } from './agent-app-fixture.ts';

// issue 10: 415 for any non-JSON body, also where the body is ignored (a form post must not end a session)
test('DELETE /sessions/{id}, POST /routing/reload and POST /analytics/user/{id}/forget refuse a non-JSON body with 415 and act on none', async (t) => {
  const fx = await createAgentAppFixture(t);
  const created = await fx.call('POST', '/sessions', { workspace_path: fx.workspace });
  const { id } = (await created.json()) as { id: string };
  const forgets: string[] = [];
  fx.bus.subscribe({
    name: 'forget-audits',
    handle: (e) => (e.type === 'analytics.user_forgotten' ? forgets.push(e.id) : undefined),
  });
  for (const [method, path] of [
    ['DELETE', `/sessions/${id}`],
    ['DELETE', `/sessions/${id}?purge=true`],
    ['POST', '/routing/reload'],
    ['POST', '/analytics/user/usr_form/forget'],
  ] as const) {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await fx.call(method, path, 'purge=true', { 'content-type': type });
      assert.equal(res.status, 415, `${method} ${path} ${type}`);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'unsupported_media_type');
    }
  }
  assert.equal(
    ((await (await fx.call('GET', `/sessions/${id}`)).json()) as { ended_at: unknown }).ended_at,
    null,
  );
  assert.equal(forgets.length, 0, 'no forget ran for a form post');
  assert.equal((await fx.call('POST', '/routing/reload')).status, 200);
  assert.equal((await fx.call('POST', '/analytics/user/usr_form/forget')).status, 200);
  assert.equal((await fx.call('POST', '/analytics/user/usr_form/forget', {})).status, 200);
  assert.equal(forgets.length, 2);
  assert.equal((await fx.call('POST', '/routing/reload', {})).status, 200);
  // README REST API: an empty body is no form post; it is accepted whatever its Content-Type (curl -d '')
  assert.equal((await fx.call('POST', '/routing/reload', '', { 'content-type': 'text/plain' })).status, 200);
  const ended = await fx.call('DELETE', `/sessions/${id}`, '', {
    'content-type': 'application/x-www-form-urlencoded',
  });
  assert.equal(ended.status, 200);
});

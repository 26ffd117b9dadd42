/**
 * GET /metrics through the real `svc gateway`: the exposition is served without auth or version headers,
 * each client-visible outcome moves exactly its series, and the key gauges follow the keystore live.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { createScraper, parseExposition, sampleOf } from '../helpers/prometheus-exposition.ts';
import { isolatedEnv, makeTempDir, runSvc, startSvc } from '../helpers/svc.ts';

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

async function issueKey(env: NodeJS.ProcessEnv): Promise<{ keyId: string; token: string }> {
  const r = await runSvc(['gateway', 'issue-key', '--name', 'metrics-e2e', '--workspace', '/tmp'], { env });
  assert.equal(r.code, 0, r.stderr);
  const field = (name: string) => new RegExp(`^${name}: (\\S+)$`, 'm').exec(r.stdout)?.[1] ?? '';
  return { keyId: field('key_id'), token: field('token') };
}

test('the gateway serves /metrics and each outcome moves exactly its series', async (t) => {
  const tmp = makeTempDir('svc-metrics-e2e-');
  t.after(tmp.cleanup);
  const env = isolatedEnv(tmp.dir, {
    ANTHROPIC_API_KEY: 'test-provider-key', // never called: every request here stops at auth
    SVC_GATEWAY_KEYSTORE: join(tmp.dir, 'keys.json'),
    SVC_GATEWAY_DB_PATH: join(tmp.dir, 'svc.db'),
  });
  await issueKey(env);
  const doomed = await issueKey(env);
  const gateway = await startSvc(['gateway', '--port', '{port}'], { env });
  t.after(() => gateway.stop());

  const { scrape, movedBy } = createScraper(gateway.url);
  const post = (path: string, headers: Record<string, string>) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'anthropic:claude-sonnet-4-5', max_tokens: 8, messages: [] }),
    });

  await t.test('content type is exact, no token is needed and no version header is sent', async () => {
    const res = await fetch(`${gateway.url}/metrics`, { headers: { 'svc-api-version': '1999-01-01' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), CONTENT_TYPE);
    assert.equal(res.headers.get('svc-api-version'), null);
    assert.equal(res.headers.get('svc-api-deprecated'), null);
    const families = await parseExposition(await res.text());
    assert.ok(families.has('svc_llm_calls_total'));
    assert.ok(!families.has('svc_session_count'), 'the gateway omits svc_session_count');
    assert.equal(sampleOf(families, 'svc_gateway_keys_active'), 2);
    assert.equal(sampleOf(families, 'svc_gateway_keys_revoked'), 0);
  });

  await t.test('an auth failure moves only svc_gateway_auth_failures_total of its reason', async () => {
    let moved = await movedBy(async () => {
      const res = await post('/v1/chat/completions', {});
      assert.equal(res.status, 401);
      await res.body?.cancel();
    });
    assert.deepEqual([...moved], [['svc_gateway_auth_failures_total{reason=missing_token}', 1]]);

    moved = await movedBy(async () => {
      const res = await post('/v1/messages', {
        'x-api-key': 'gw_not_a_real_token',
        'anthropic-version': '2023-06-01',
      });
      assert.equal(res.status, 401);
      await res.body?.cancel();
    });
    assert.deepEqual([...moved], [['svc_gateway_auth_failures_total{reason=invalid_token}', 1]]);
  });

  await t.test(
    'key gauges follow revoke and issue without restart; a revoked key counts key_revoked',
    async () => {
      const revoke = await runSvc(['gateway', 'revoke-key', doomed.keyId], { env });
      assert.equal(revoke.code, 0, revoke.stderr);
      let families = await scrape();
      assert.equal(sampleOf(families, 'svc_gateway_keys_active'), 1);
      assert.equal(sampleOf(families, 'svc_gateway_keys_revoked'), 1);

      const moved = await movedBy(async () => {
        const res = await post('/v1/chat/completions', { authorization: `Bearer ${doomed.token}` });
        assert.equal(res.status, 401);
        await res.body?.cancel();
      });
      assert.deepEqual([...moved], [['svc_gateway_auth_failures_total{reason=key_revoked}', 1]]);

      await issueKey(env);
      families = await scrape();
      assert.equal(sampleOf(families, 'svc_gateway_keys_active'), 2);
      assert.equal(sampleOf(families, 'svc_gateway_keys_revoked'), 1);
    },
  );

  // Call outcomes (success, failure, quota refusal) are covered through the pipeline in
  // metrics-gateway-calls.test.ts.
});

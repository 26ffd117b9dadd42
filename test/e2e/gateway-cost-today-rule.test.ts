/**
 * The routing predicate `cost_today_above` on the gateway (spec 3 item 5, README §Routing policy): it
 * reads the calling key's spend since 00:00 UTC, so a rule such as "over budget today → fast" takes over
 * once the key has spent more than its amount, for that key only, and still after a restart (the spend is
 * seeded from the trace store).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { makeTempDir, type RunningSvc, startSvc } from '../helpers/svc.ts';

test('a cost_today_above rule routes a key that spent more than its amount today, across a restart', {
  timeout: 120_000,
}, async (t) => {
  const fake = await startFakeProvider();
  const tmp = makeTempDir('svc-cost-today-');
  const running: RunningSvc[] = [];
  t.after(async () => {
    for (const s of running) await s.stop();
    await fake.close();
    tmp.cleanup();
  });
  const routing = join(tmp.dir, 'routing.yaml');
  writeFileSync(
    routing,
    'rules:\n  - name: over-budget-today\n    when: { cost_today_above: 0.01 }\n    use: anthropic:claude-haiku-4-5\n',
  );
  const files = gatewayFiles(tmp.dir, {
    ...fakeProviderEnv(fake, ['anthropic']),
    SVC_ROUTING_POLICY: routing,
  });
  const spender = await issueKey(files.env, []);
  const other = await issueKey(files.env, []);
  const start = async () => {
    const gw = await startSvc(['gateway', '--port', '{port}'], { env: files.env });
    running.push(gw);
    return gw;
  };
  const routedModel = async (gw: RunningSvc, token: string, text: string) => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': token, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'my-model',
        max_tokens: 1000,
        messages: [{ role: 'user', content: text }],
      }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.text();
    return res.headers.get('svc-routed-model');
  };

  let gw = await start();
  // nothing spent yet: the request goes to the global default
  assert.equal(await routedModel(gw, spender.token, 'hi'), 'anthropic:claude-sonnet-4-5');
  // 1,000 output tokens of claude-sonnet-4-5 (15 USD per million) cost 0.015 USD, above the rule's 0.01
  assert.equal(
    await routedModel(gw, spender.token, 'hi [[fake:usage=in:10,out:1000]]'),
    'anthropic:claude-sonnet-4-5',
  );
  assert.equal(await routedModel(gw, spender.token, 'hi'), 'anthropic:claude-haiku-4-5');
  // another key's spend is its own
  assert.equal(await routedModel(gw, other.token, 'hi'), 'anthropic:claude-sonnet-4-5');

  await gw.stop();
  running.pop();
  gw = await start();
  assert.equal(await routedModel(gw, spender.token, 'hi'), 'anthropic:claude-haiku-4-5');
  assert.equal(await routedModel(gw, other.token, 'hi'), 'anthropic:claude-sonnet-4-5');
});

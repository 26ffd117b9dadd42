/**
 * `input_tokens_above` (and slot 4's size bucket) on the agent server estimate the request a turn sends: its
 * system prompt and tool schemas with the history, as the gateway counts a client's system and tools. The
 * agent estimated the history alone, so a short message never passed a threshold that the request it sent
 * (a system prompt and seven tool schemas, far over 300 tokens) passed, and the gateway would have routed
 * the same request otherwise.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { makeTempDir } from '../helpers/svc.ts';

test('an agent turn is routed by the size of the whole request it sends', { timeout: 120_000 }, async (t) => {
  const fake = await startFakeProvider();
  t.after(() => fake.close());
  const tmp = makeTempDir('svc-agent-size-');
  t.after(() => tmp.cleanup());
  const routing = join(tmp.dir, 'routing.yaml');
  writeFileSync(
    routing,
    'global_default: sonnet\nrules:\n  - { name: long, when: { input_tokens_above: 300 }, use: anthropic:claude-haiku-4-5 }\n',
  );
  const server = await startAgentServer(t, {
    args: ['--routing', routing],
    env: fakeProviderEnv(fake, ['anthropic']),
  });
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const res = await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'hi' }] });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  let decided: { payload: { chosen_model: string; rule?: string } } | undefined;
  for (let i = 0; i < 400 && !decided; i++) {
    const events = (await server.api('GET', `/sessions/${sid}/events?types=route.decided`)).body.events;
    decided = events.find((e: { turn_id: string }) => e.turn_id === res.body.turn_id);
    if (!decided) await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(decided, 'route.decided was written');
  assert.equal(decided.payload.chosen_model, 'anthropic:claude-haiku-4-5');
  assert.equal(decided.payload.rule, 'long');
  // the call it made is that size too: the fake saw the system prompt and the tools (route.decided is
  // stored as the call begins, so the request may reach the fake a moment later)
  const sentCall = () => fake.requests.find((r) => r.path.startsWith('/v1/messages'));
  for (let i = 0; i < 400 && !sentCall(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(sentCall(), 'the call reached the provider');
  assert.ok(JSON.stringify(sentCall()?.body).length > 300 * 4);
});

/**
 * The routing predicate `cost_today_above` on the agent server (spec 3 item 5, README §Routing policy): it
 * reads what the server's own calls (no gateway key) spent since 00:00 UTC, from the trace store, so an
 * "over budget today" rule takes over for the next turn once that spend passes its amount, also after a
 * restart, and a gateway key's spend in the same store does not count.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer, withStore } from '../helpers/agent-server.ts';
import { makeTempDir } from '../helpers/svc.ts';

test('a cost_today_above rule routes the next turn once the agent server spent more than its amount today', {
  timeout: 120_000,
}, async (t) => {
  const fake = await startFakeProvider();
  t.after(() => fake.close());
  const tmp = makeTempDir('svc-agent-cost-today-');
  t.after(() => tmp.cleanup());
  const routing = join(tmp.dir, 'routing.yaml');
  writeFileSync(
    routing,
    'global_default: balanced\nrules:\n  - name: over-budget-today\n    when: { cost_today_above: 0.01 }\n    use: anthropic:claude-haiku-4-5\n',
  );
  const options = {
    args: ['--routing', routing],
    env: {
      ...fakeProviderEnv(fake, ['anthropic']),
      SVC_GATEWAY_GLOBAL_DEFAULT: undefined,
    },
  };
  let server = await startAgentServer(t, options);

  /** Runs one turn to its end; returns the model its route.decided chose. */
  const turnModel = async (s: AgentServer, sid: string, text: string) => {
    const res = await s.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text }] });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const turnId = res.body.turn_id ?? res.body.id;
    for (let i = 0; i < 400; i++) {
      const evs = (await s.api('GET', `/sessions/${sid}/events?limit=1000`)).body.events as Array<{
        type: string;
        turn_id: string;
        payload: Record<string, unknown>;
      }>;
      const mine = evs.filter((e) => e.turn_id === turnId);
      if (mine.some((e) => e.type === 'turn.completed' || e.type === 'turn.cancelled')) {
        const decided = mine.find((e) => e.type === 'route.decided');
        return decided?.payload.chosen_model;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('the turn never ended');
  };

  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  assert.equal(await turnModel(server, sid, 'hi'), 'anthropic:claude-sonnet-4-5');
  // a gateway key's spend in the same store is that key's, not the agent server's
  withStore(server.db, (db) =>
    db
      .prepare(
        `INSERT INTO events (id, timestamp, timestamp_us, session_id, turn_id, type, actor, payload, parent_event_id, sensitivity)
         VALUES ('01KZZZZZZZZZZZZZZZZZZZZZZZ', ?, ?, NULL, 'gwturn', 'llm.call_completed', 'gateway', ?, NULL, 'pseudonymous')`,
      )
      .run(
        new Date().toISOString(),
        Date.now() * 1000,
        JSON.stringify({ gateway_key_id: 'gk_01KZZZZZZZZZZZZZZZZZZZZZZZ', cost_usd: '5.00', model: 'x' }),
      ),
  );
  assert.equal(await turnModel(server, sid, 'hi'), 'anthropic:claude-sonnet-4-5');
  // 1,000 output tokens of claude-sonnet-4-5 (15 USD per million) cost 0.015 USD, above the rule's 0.01
  assert.equal(
    await turnModel(server, sid, 'hi [[fake:usage=in:10,out:1000]]'),
    'anthropic:claude-sonnet-4-5',
  );
  assert.equal(await turnModel(server, sid, 'hi'), 'anthropic:claude-haiku-4-5');

  await server.svc.stop();
  server = await startAgentServer(t, { ...options, home: server.home });
  assert.equal(await turnModel(server, sid, 'hi'), 'anthropic:claude-haiku-4-5');
});

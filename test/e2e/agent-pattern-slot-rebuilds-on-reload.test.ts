/**
 * Slot 4 on the agent server: turns that named `fast` make the history, POST /routing/reload turns slot 4
 * on and rebuilds the table at once (the interval is an hour here), and a turn of the same kind without an
 * override runs on haiku by slot 4: route.decided, pattern.matched and the metric on svc serve's /metrics.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { type RunningFakeProvider, startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer, withStore } from '../helpers/agent-server.ts';
import { waitForPatternRebuild } from '../helpers/pattern-rebuilt.ts';
import { makeTempDir } from '../helpers/svc.ts';

const HAIKU = 'anthropic:claude-haiku-4-5';

let fake: RunningFakeProvider;
before(async () => {
  fake = await startFakeProvider();
});
after(() => fake.close());

/** Runs one turn, in a fresh session unless `sid` names one, and waits for its end; returns the turn id. */
async function oneTurn(
  server: AgentServer,
  text: string,
  override: string | null,
  session?: string,
): Promise<string> {
  const sid = session ?? (await newSession(server));
  const turn = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text }],
    per_message_override: override,
  });
  assert.equal(turn.status, 202, JSON.stringify(turn.body));
  const turnId = turn.body.turn_id as string;
  for (let i = 0; i < 400; i++) {
    const res = await server.api('GET', `/sessions/${sid}/events?types=turn.completed&turn_id=${turnId}`);
    if (res.body.events.length > 0) {
      assert.equal(res.body.events[0].payload.status, 'completed');
      return turnId;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`turn ${turnId} never completed`);
}

async function newSession(server: AgentServer): Promise<string> {
  const session = await server.api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return session.body.id as string;
}

test('after /routing/reload enables slot 4, a turn like those that worked on haiku runs on haiku', async (t) => {
  const policyDir = makeTempDir('svc-agent-pattern-');
  t.after(() => policyDir.cleanup());
  const routing = join(policyDir.dir, 'routing.yaml');
  writeFileSync(routing, 'pattern: { enabled: false }\n');
  const server = await startAgentServer(t, {
    env: {
      ...fakeProviderEnv(fake, ['anthropic']),
      SVC_ROUTING_POLICY: routing,
      SVC_PATTERN_REFRESH_MS: '3600000',
    },
  });
  const older = await newSession(server);
  const firstVersion = (await server.api('GET', '/routing/policy')).body.version;
  for (let i = 0; i < 20; i++) await oneTurn(server, 'summarize the release notes', 'fast');
  assert.equal(
    server.svc.output().stderr.includes('"pattern table rebuilt"'),
    false,
    'disabled: nothing read',
  );

  writeFileSync(routing, 'pattern: { enabled: true, fingerprint: hybrid }\n');
  const reload = await server.api('POST', '/routing/reload', {});
  assert.equal(reload.status, 200);
  assert.equal(reload.body.valid, true);
  assert.equal((await server.api('GET', '/routing/policy')).body.pattern.fingerprint, 'hybrid');
  await waitForPatternRebuild(server.svc.output, (l) => (l.keys_with_a_choice ?? 0) >= 1);

  // the same words (case and punctuation aside) and the same size bucket as the history
  const turnId = await oneTurn(server, 'Summarize the release notes!', null);
  const events = withStore(server.db, (db) =>
    db
      .prepare('SELECT id, type, parent_event_id, payload FROM events WHERE turn_id = ? ORDER BY id')
      .all(turnId)
      .map((r) => ({
        id: String(r.id),
        type: String(r.type),
        parent_event_id: r.parent_event_id as string | null,
        payload: JSON.parse(String(r.payload)),
      })),
  );
  const route = events.find((e) => e.type === 'route.decided')!;
  assert.deepEqual(route.payload.chain[3], { policy: 'pattern', model: HAIKU, verdict: 'accepted' });
  // route.decided names the policy that decided; a session follows the policy that routed its last turn
  // (it kept the version of its creation, so a reloaded policy looked as if it never reached the session)
  assert.notEqual(reload.body.version, firstVersion);
  assert.equal(route.payload.routing_policy_version, reload.body.version);
  const olderSession = async () => (await server.api('GET', `/sessions/${older}`)).body;
  assert.equal((await olderSession()).routing_policy_version, firstVersion);
  await oneTurn(server, 'hello', 'fast', older);
  assert.equal((await olderSession()).routing_policy_version, reload.body.version);
  const matched = events.find((e) => e.type === 'pattern.matched')!;
  assert.equal(matched.parent_event_id, route.id);
  assert.equal(matched.payload.chose_model, HAIKU);
  assert.equal(matched.payload.fingerprint_version, 'hybrid');
  assert.equal(matched.payload.samples, 20);
  assert.equal(matched.payload.gateway_key_id, null);
  const completed = events.filter((e) => e.type === 'llm.call_completed');
  assert.ok(completed.length >= 1 && completed.every((e) => e.payload.model === HAIKU));
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assert.match(
    metrics,
    new RegExp(`^svc_pattern_matches_total\\{chose_model="${HAIKU}",fingerprint_version="hybrid"\\} 1$`, 'm'),
  );
});

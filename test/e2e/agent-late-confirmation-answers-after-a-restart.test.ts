/**
 * A confirmation answered after the turn that asked is over gets the same answer whether or not svc serve
 * restarted in between (spec 2 state table, DECISIONS §5): 409 confirmation_already_resolved with
 * details.applied false when the turn was cancelled (here by the restart), 200 applied false when it timed
 * out. The requests are found in the trace store once the in-memory ones are gone; before, a restart made
 * every earlier request an unknown 404 confirmation_not_found.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { type RunningFakeProvider, startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer } from '../helpers/agent-server.ts';

let fake: RunningFakeProvider;
before(async () => {
  fake = await startFakeProvider();
});
after(() => fake.close());

const env = (timeoutMs: string) => ({
  ...fakeProviderEnv(fake, ['anthropic']),
  SVC_AGENT_CONFIRMATION_TIMEOUT_MS: timeoutMs,
});

async function eventsUntil(server: AgentServer, sid: string, pred: (types: string[]) => boolean) {
  for (let i = 0; i < 600; i++) {
    const res = await server.api('GET', `/sessions/${sid}/events?limit=1000`);
    if (pred(res.body.events.map((e: { type: string }) => e.type))) return res.body.events as any[];
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('events never matched');
}

test('a request left pending by a killed server is already resolved (409, applied false) after the restart', async (t) => {
  const first = await startAgentServer(t, { env: env('60000') });
  const sid = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body.id;
  fake.script([{ toolUses: [{ name: 'write_file', input: { path: 'a.txt', content: 'x' } }] }]);
  const turn = (
    await first.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'go' }] })
  ).body.turn_id;
  const asked = (await eventsUntil(first, sid, (ts) => ts.includes('tool.confirmation_requested'))).find(
    (e) => e.type === 'tool.confirmation_requested',
  );
  assert.equal(await first.svc.stop('SIGKILL'), null);
  const second = await startAgentServer(t, { env: env('60000'), home: first.home });
  const path = `/sessions/${sid}/turns/${turn}/confirmations/${asked.payload.request_id}`;
  const res = await second.api('POST', path, { decision: 'allow' });
  assert.equal(res.status, 409, JSON.stringify(res.body));
  assert.equal(res.body.error.code, 'confirmation_already_resolved');
  assert.deepEqual(res.body.error.details, { request_id: asked.payload.request_id, applied: false });
  const unknown = await second.api(
    'POST',
    `/sessions/${sid}/turns/${turn}/confirmations/01M88CQ1AAN5F19YXF8TWYHS9S`,
    {
      decision: 'allow',
    },
  );
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, 'confirmation_not_found');
});

test('a request that timed out before a restart still answers 200 applied false after it', async (t) => {
  const first = await startAgentServer(t, { env: env('200') });
  const sid = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body.id;
  fake.script([
    { toolUses: [{ name: 'write_file', input: { path: 'b.txt', content: 'x' } }] },
    { text: 'ok' },
  ]);
  const turn = (
    await first.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'go' }] })
  ).body.turn_id;
  const events = await eventsUntil(first, sid, (ts) => ts.includes('turn.completed'));
  const asked = events.find((e) => e.type === 'tool.confirmation_requested');
  assert.equal(await first.svc.stop('SIGTERM'), 0);
  const second = await startAgentServer(t, { env: env('200'), home: first.home });
  const res = await second.api(
    'POST',
    `/sessions/${sid}/turns/${turn}/confirmations/${asked.payload.request_id}`,
    {
      decision: 'allow',
    },
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body, { request_id: asked.payload.request_id, decision: 'allow', applied: false });
});

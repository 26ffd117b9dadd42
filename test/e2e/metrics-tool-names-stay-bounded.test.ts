/**
 * spec 1 §GET /metrics: the metric set is bounded. A model that calls tools that do not exist (a
 * hallucination, or a prompt injected through a file it read) must not add a tool_name series per
 * invented name on `svc serve`: those calls count as `unknown`, the agent's own tools keep their names.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { parseExposition, type Sample } from '../helpers/prometheus-exposition.ts';

test('invented tool names count as unknown; read_file keeps its label', async (t) => {
  const fake = await startFakeProvider();
  t.after(() => fake.close());
  const server = await startAgentServer(t, {
    env: fakeProviderEnv(fake, ['anthropic']),
  });
  fake.script([
    {
      toolUses: [
        { name: 'invented_tool_one', input: {} },
        { name: 'invented_tool_two', input: { x: 1 } },
        { name: 'read_file', input: { path: 'missing.txt' } },
      ],
    },
    { text: 'Done.' },
  ]);
  const session = await server.api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(session.status, 201, JSON.stringify(session.body));
  const turn = await server.api('POST', `/sessions/${session.body.id}/turns`, {
    content: [{ type: 'text', text: 'go' }],
  });
  assert.equal(turn.status, 202, JSON.stringify(turn.body));

  // both failures of the first model call are in once read_file has failed (the tools run in order)
  let failures: Sample[] = [];
  let text = '';
  for (let i = 0; i < 400 && !failures.some((s) => s.labels.tool_name === 'read_file'); i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 25));
    text = await (await fetch(`${server.url}/metrics`)).text();
    failures = (await parseExposition(text)).get('svc_tool_failures_total')?.samples ?? [];
  }
  assert.doesNotMatch(text, /invented_tool/);
  assert.deepEqual(failures.map((s) => `${s.labels.tool_name}/${s.labels.error_class}=${s.value}`).sort(), [
    'read_file/not_found=1',
    'unknown/not_found=2',
  ]);
});

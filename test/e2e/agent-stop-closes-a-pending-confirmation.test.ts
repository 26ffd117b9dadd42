/**
 * spec 2's state table takes a confirmation from requested to resolved with `tool.confirmation_resolved`.
 * A turn cancelled while its tool waited for the answer (here by the server's stop, SIGTERM) ended with
 * `tool.failed` cancelled and `turn.cancelled` but never resolved the request, so the trace kept a
 * confirmation open forever. The cancel now resolves it (a deny nobody gave: `cancelled: true`, scope once)
 * before the tool's `tool.failed`.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer, withStore } from '../helpers/agent-server.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const env = fakeProviderEnv(fake, ['anthropic']);

type Row = { id: string; type: string; payload: any };

function rows(server: AgentServer, turnId: string): Row[] {
  return withStore(server.db, (db) =>
    (
      db.prepare('SELECT id, type, payload FROM events WHERE turn_id = ? ORDER BY id').all(turnId) as Row[]
    ).map((r) => ({ ...r, payload: JSON.parse(r.payload) })),
  );
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(check(), `${what}: not reached within 10 s`);
}

test('a confirmation pending when svc serve is stopped is resolved before the tool fails and the turn is cancelled', async (t) => {
  const server = await startAgentServer(t, { env });
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  fake.script([{ toolUses: [{ name: 'write_file', input: { path: 'x.txt', content: 'x' } }] }]);
  const turn = (
    await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'write it' }] })
  ).body.turn_id;
  await until(
    () => rows(server, turn).some((e) => e.type === 'tool.confirmation_requested'),
    'the confirmation request',
  );
  assert.equal(await server.svc.stop('SIGTERM'), 0);
  const events = rows(server, turn);
  const asked = events.find((e) => e.type === 'tool.confirmation_requested')!;
  const tail = events.slice(events.indexOf(asked) + 1).map((e) => e.type);
  assert.deepEqual(tail, ['tool.confirmation_resolved', 'tool.failed', 'turn.cancelled']);
  const resolved = events.find((e) => e.type === 'tool.confirmation_resolved')!;
  assert.deepEqual(resolved.payload, {
    request_id: asked.payload.request_id,
    tool_use_id: asked.payload.tool_use_id,
    tool_name: 'write_file',
    decision: 'deny',
    scope: 'once',
    timed_out: false,
    cancelled: true,
  });
  assert.equal(events.find((e) => e.type === 'tool.failed')!.payload.error_class, 'cancelled');
});

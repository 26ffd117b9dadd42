/**
 * spec 2: an adapter error ends the turn (`llm.call_failed`, then `turn.completed`), and a client follows an
 * assistant message from `message.start` to `message.complete`. A model stream that broke mid-answer left its
 * message open on the socket and stored the partial answer as `completed`, so the next turn sent the model
 * a cut-off answer (with a tool_use no tool_result followed). Such a message now closes on the stream with
 * stop_reason `error` and its partial content (before `llm.call_failed`), is stored with status `failed`,
 * and is never sent to a model again. A connection reset after message_stop is no break: the answer was whole
 * and billed, so the call completes and the turn goes on (it ended failed/internal_error before). Provider
 * faults before and after the answer began, on each provider's wire, end the turn `failed` with the call's
 * class, its attempts as DECISIONS §4 retries them, and the turn costing exactly what its call was billed.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { attach } from '../helpers/ws-client.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const server = await startAgentServer(
  { after },
  {
    env: {
      ...fakeProviderEnv(fake),
      // the fault matrix below: one retry, and a hang or a stall costs at most these
      SVC_GATEWAY_MAX_RETRIES: '1',
      SVC_GATEWAY_UPSTREAM_TIMEOUT_MS: '1500',
      SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS: '800',
    },
  },
);
const text = (t: string) => [{ type: 'text', text: t }];
const isEvent = (type: string, turnId: string) => (f: { type: string; event?: any }) =>
  f.type === 'event' && f.event.type === type && f.event.turn_id === turnId;

async function subscribed(sid: string) {
  const c = await attach(server, sid);
  c.send({ type: 'subscribe', filter: 'preset:full', since: null });
  await c.next((f) => f.type === 'subscribe_ack');
  after(() => c.close());
  return c;
}

test('a stream that breaks mid-text closes its message with stop_reason error, stored as failed', async () => {
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const c = await subscribed(sid);
  // frames: message_start, content_block_start, ping, then two words before the in-stream error
  fake.script([{ text: 'alpha beta gamma delta', streamError: 529, streamErrorAfter: 5 }]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('hi') })).body;
  const end = await c.next(isEvent('turn.completed', turn.turn_id));
  assert.equal(end.event.payload.status, 'failed');
  const events = c.events().filter((e) => e.turn_id === turn.turn_id);
  const types = events.map((e) => e.type);
  assert.deepEqual(types.slice(-3), ['message.complete', 'llm.call_failed', 'turn.completed']);
  const start = events.find((e) => e.type === 'message.start')!;
  const complete = events.find((e) => e.type === 'message.complete')!;
  assert.equal(complete.payload.message_id, start.payload.message_id);
  assert.equal(complete.payload.stop_reason, 'error');
  const streamed = events
    .filter((e) => e.type === 'text.delta')
    .map((e) => e.payload.text)
    .join('');
  assert.ok(streamed.length > 0);
  assert.deepEqual(complete.payload.final_content, [{ type: 'text', text: streamed }]);
  // the history holds the same message: same id, same content, status failed
  const msgs = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  const stored = msgs.find((m: { id: string }) => m.id === start.payload.message_id);
  assert.ok(stored, JSON.stringify(msgs));
  assert.equal(stored.status, 'failed');
  assert.deepEqual(stored.content, complete.payload.final_content);
});

test('a stream cut inside a tool call: tool.use_end then message.complete error, and the next turn never sends the cut call', async () => {
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const c = await subscribed(sid);
  // no message_stop: the answer (text and a whole tool_use) arrived but the stream never finished
  fake.script([
    {
      text: 'let me look',
      toolUses: [{ name: 'read_file', input: { path: 'notes.txt' } }],
      noTerminal: true,
    },
  ]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('read it') })).body;
  await c.next(isEvent('turn.completed', turn.turn_id));
  const events = c.events().filter((e) => e.turn_id === turn.turn_id);
  const types = events.map((e) => e.type);
  assert.equal(types.filter((t) => t === 'tool.called').length, 0, 'a tool of a broken answer never runs');
  assert.deepEqual(types.slice(-3), ['message.complete', 'llm.call_failed', 'turn.completed']);
  const useStart = events.find((e) => e.type === 'tool.use_start')!;
  const useEnd = events.find((e) => e.type === 'tool.use_end')!;
  assert.equal(useEnd.payload.tool_use_id, useStart.payload.tool_use_id);
  assert.ok(types.indexOf('tool.use_end') < types.indexOf('message.complete'));
  const complete = events.find((e) => e.type === 'message.complete')!;
  assert.equal(complete.payload.stop_reason, 'error');
  const msgs = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  assert.equal(msgs.at(-1).status, 'failed');
  assert.equal(msgs.at(-1).id, complete.payload.message_id);

  fake.script([{ text: 'fresh answer' }]);
  const next = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('try again') })).body;
  const done = await c.next(isEvent('turn.completed', next.turn_id));
  assert.equal(done.event.payload.status, 'completed');
  const sent = JSON.stringify(fake.requests.at(-1)!.body);
  assert.equal(sent.includes('tool_use'), false, sent.slice(0, 2000));
  assert.equal(sent.includes('let me look'), false);
  assert.ok(sent.includes('read it') && sent.includes('try again'));
});

test('a connection reset after message_stop: the call completed, the tool runs, the turn goes on and completes', async () => {
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const c = await subscribed(sid);
  // the whole answer (a tool call) arrived and was billed; only then did the connection reset
  fake.script([
    { toolUses: [{ name: 'list_files', input: { path: '.' } }], resetAtEnd: true },
    { text: 'done', resetAtEnd: true },
  ]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('look') })).body;
  const end = await c.next(isEvent('turn.completed', turn.turn_id));
  const events = c.events().filter((e) => e.turn_id === turn.turn_id);
  assert.equal(end.event.payload.status, 'completed', JSON.stringify(end.event.payload));
  const types = events.map((e) => e.type);
  assert.equal(types.filter((t) => t === 'llm.call_completed').length, 2, types.join(' '));
  assert.equal(types.includes('llm.call_failed'), false, types.join(' '));
  assert.equal(types.filter((t) => t === 'tool.completed').length, 1, types.join(' '));
  const complete = events.filter((e) => e.type === 'message.complete').map((e) => e.payload.stop_reason);
  assert.deepEqual(complete, ['tool_use', 'end_turn']);
  const msgs = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  assert.equal(msgs.at(-1).status, 'completed');
});

test('provider faults end the turn failed with the call class, its retries, and the turn billed as the call', async () => {
  const A = 'anthropic:claude-haiku-4-5';
  const O = 'openai:gpt-5-mini';
  const R = 'openrouter:google/gemini-2.5-flash';
  // [model, fault, error_class, upstream attempts, billed]: one retry (SVC_GATEWAY_MAX_RETRIES=1) before the
  // answer began, none after
  const cells = [
    [A, 'error=429;retry-after-ms=50', 'rate_limit', 2, false],
    [O, 'error=529', 'overloaded', 2, false],
    [R, 'error=502', 'server_error', 2, false],
    [A, 'reset-after=0', 'connection_error', 2, false],
    [O, 'hang', 'timeout', 1, false],
    [R, 'error-in-200=500', 'server_error', 2, true],
    [A, 'stall-after=4', 'timeout', 1, true],
    [O, 'reset-after=4', 'connection_error', 1, true],
    [R, 'malformed=4', 'server_error', 1, true],
    // keep-alive comments past the idle timeout, never an event: cut at the call's total time
    [R, 'processing', 'timeout', 1, true],
  ] as const;
  await Promise.all(
    cells.map(async ([model, fault, errorClass, attempts, billed], i) => {
      const marker = `<cell ${i}>`;
      const created = await server.api('POST', '/sessions', {
        workspace_path: server.workspace,
        initial_active_model: model,
      });
      const sid = created.body.id;
      const c = await subscribed(sid);
      const turn = (
        await server.api('POST', `/sessions/${sid}/turns`, { content: text(`${marker} [[fake:${fault}]]`) })
      ).body;
      const end = (await c.next(isEvent('turn.completed', turn.turn_id))).event.payload;
      const cell = `${model} ${fault}`;
      const events = c.events().filter((e) => e.turn_id === turn.turn_id);
      const types = events.map((e) => e.type);
      const failed = events.filter((e) => e.type === 'llm.call_failed');
      assert.equal(failed.length, 1, `${cell}: ${types.join(' ')}`);
      assert.equal(types.filter((t) => t === 'llm.call_started').length, 1, cell);
      assert.equal(types.includes('llm.call_completed'), false, cell);
      assert.equal(failed[0].payload.error_class, errorClass, cell);
      const sent = fake.requests.filter((r) => JSON.stringify(r.body).includes(marker)).length;
      assert.equal(sent, attempts, `${cell}: upstream attempts`);
      assert.equal(failed[0].payload.attempts, attempts, cell);
      assert.equal(end.status, 'failed', cell);
      assert.equal(end.error_class, errorClass, cell);
      assert.equal(
        Number(failed[0].payload.cost_usd ?? 0) > 0,
        billed,
        `${cell}: ${failed[0].payload.cost_usd}`,
      );
      assert.equal(Number(end.cost_usd), Number(failed[0].payload.cost_usd ?? 0), `${cell}: the turn's cost`);
      if (types.includes('message.start'))
        assert.ok(types.indexOf('message.complete') < types.indexOf('llm.call_failed'), cell);
    }),
  );
});

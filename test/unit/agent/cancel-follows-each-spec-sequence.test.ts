import assert from 'node:assert/strict';
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type AgentHarness, type SeenEvent, startAgentHarness } from '../../helpers/agent-harness.ts';

let h: AgentHarness;
before(async () => {
  h = await startAgentHarness();
});
after(() => h.close());

const text = (t: string) => [{ type: 'text' as const, text: t }];
const LONG = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

/** The turn's bus and streaming events after `from` (deltas collapsed). */
function tail(turnId: string, from: string): string[] {
  const evs = h.events.filter((e) => e.turn_id === turnId);
  const i = evs.findIndex((e) => e.type === from);
  const out: string[] = [];
  for (const e of evs.slice(i)) {
    if ((e.type === 'text.delta' || e.type === 'tool.use_input_delta') && out.at(-1) === e.type) continue;
    out.push(e.type);
  }
  return out;
}

function last(turnId: string, type: string): SeenEvent {
  return h.events.filter((e) => e.turn_id === turnId && e.type === type).at(-1)!;
}

test('cancel during LLM streaming: message.complete cancelled, llm.call_failed cancelled, turn.cancelled', async () => {
  const s = await h.newSession();
  h.fake.script([{ text: LONG, dripMs: 40 }]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('talk') });
  await h.waitFor('text.delta', t.turn_id);
  const [r, second] = await Promise.all([
    h.engine.cancel(s.id, t.turn_id, 'changed my mind'),
    h.engine.cancel(s.id, t.turn_id, 'again'),
  ]);
  assert.deepEqual(r, { turn_id: t.turn_id, cancellation_initiated: true });
  // a second cancel of a cancelling turn is a no-op: a bus.handler_warning, no second turn.cancelled
  assert.deepEqual(second, { turn_id: t.turn_id, cancellation_initiated: true });
  const end = await h.turnEnd(t.turn_id);
  assert.equal(end.type, 'turn.cancelled');
  assert.equal(end.payload.reason, 'changed my mind');
  assert.deepEqual(
    tail(t.turn_id, 'text.delta').filter((x) => x !== 'bus.handler_warning'),
    ['text.delta', 'message.complete', 'llm.call_failed', 'turn.cancelled'],
  );
  const complete = last(t.turn_id, 'message.complete');
  assert.equal(complete.payload.stop_reason, 'cancelled');
  const partial = (complete.payload.final_content as Array<{ text: string }>)[0].text;
  assert.ok(LONG.startsWith(partial) && partial.length < LONG.length);
  assert.equal(last(t.turn_id, 'llm.call_failed').payload.error_class, 'cancelled');
  const msg = await h.store.kysely
    .selectFrom('messages')
    .selectAll()
    .where('turn_id', '=', t.turn_id)
    .where('role', '=', 'assistant')
    .executeTakeFirstOrThrow();
  assert.equal(msg.status, 'cancelled');
  assert.equal(h.events.filter((e) => e.type === 'bus.handler_warning' && e.turn_id === t.turn_id).length, 1);
  assert.equal(h.events.filter((e) => e.type === 'turn.cancelled' && e.turn_id === t.turn_id).length, 1);
  await assert.rejects(h.engine.cancel(s.id, t.turn_id), { code: 'turn_already_completed' });
  await assert.rejects(h.engine.cancel(s.id, 'nope'), { code: 'turn_not_found' });
  // the session takes a new turn at once
  h.fake.script([{ text: 'fresh' }]);
  const next = await h.engine.submit({ sessionId: s.id, content: text('again') });
  assert.equal((await h.turnEnd(next.turn_id)).type, 'turn.completed');
  const route = h.events.filter((e) => e.type === 'route.decided' && e.turn_id === next.turn_id);
  assert.equal(route.length, 1, 'routing fires again for the next turn');
});

test('cancel before the model sent its first byte: message.complete cancelled, then llm.call_failed cancelled', async () => {
  const s = await h.newSession();
  h.fake.script([{ hang: true }]);
  const seen = h.fake.requests.length;
  const t = await h.engine.submit({ sessionId: s.id, content: text('wait for it') });
  // the fake holds the request (its hang step is taken), so no answer can come
  while (h.fake.requests.length === seen) await new Promise((r) => setTimeout(r, 5));
  await h.engine.cancel(s.id, t.turn_id);
  await h.turnEnd(t.turn_id);
  // the agent's table row "During LLM streaming" holds from the moment the call is open, headers or not;
  // the message a client sees complete was started first (the typical order of spec 2)
  assert.deepEqual(tail(t.turn_id, 'llm.call_started'), [
    'llm.call_started',
    'message.start',
    'message.complete',
    'llm.call_failed',
    'turn.cancelled',
  ]);
  const failed = last(t.turn_id, 'llm.call_failed');
  assert.equal(failed.payload.error_class, 'cancelled');
  assert.equal(failed.payload.cost_usd, '0.000000');
  const complete = last(t.turn_id, 'message.complete');
  assert.equal(complete.payload.stop_reason, 'cancelled');
  assert.deepEqual(complete.payload.final_content, []);
  assert.equal(last(t.turn_id, 'message.start').payload.message_id, complete.payload.message_id);
});

test('cancel while a tool_use streams: tool.use_end with what parses, then message.complete cancelled', async () => {
  const s = await h.newSession();
  h.fake.script([
    { toolUses: [{ name: 'read_file', input: { path: `${'x'.repeat(200)}.txt` } }], dripMs: 40 },
  ]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('read') });
  await h.waitFor('tool.use_start', t.turn_id);
  await h.engine.cancel(s.id, t.turn_id);
  await h.turnEnd(t.turn_id);
  const seq = tail(t.turn_id, 'tool.use_start');
  assert.deepEqual(seq.slice(-4), ['tool.use_end', 'message.complete', 'llm.call_failed', 'turn.cancelled']);
  assert.equal(typeof last(t.turn_id, 'tool.use_end').payload.final_input, 'object');
  assert.equal(h.events.filter((e) => e.turn_id === t.turn_id && e.type === 'tool.called').length, 0);
});

test('cancel during tool dispatch: the running tool fails cancelled, then turn.cancelled', async () => {
  const s = await h.newSession();
  h.fake.script([{ toolUses: [{ name: 'run_command', input: { command: 'sleep 30' } }] }]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('run') });
  const asked = await h.waitFor('tool.confirmation_requested', t.turn_id);
  await h.engine.confirm({
    sessionId: s.id,
    turnId: t.turn_id,
    requestId: asked.payload.request_id as string,
    decision: 'allow',
    scope: 'once',
  });
  await h.waitFor('tool.confirmation_resolved', t.turn_id);
  await new Promise((r) => setTimeout(r, 100)); // the command is running
  await h.engine.cancel(s.id, t.turn_id);
  await h.turnEnd(t.turn_id);
  assert.deepEqual(tail(t.turn_id, 'tool.called'), [
    'tool.called',
    'tool.confirmation_requested',
    'tool.confirmation_resolved',
    'tool.failed',
    'turn.cancelled',
  ]);
  assert.equal(last(t.turn_id, 'tool.failed').payload.error_class, 'cancelled');
  const call = await h.store.kysely
    .selectFrom('tool_calls')
    .selectAll()
    .where('turn_id', '=', t.turn_id)
    .executeTakeFirstOrThrow();
  assert.equal(call.status, 'cancelled');
});

test('cancel while read_file reads through a large file: it stops there, tool.failed cancelled', {
  timeout: 20_000,
}, async () => {
  // 64 KB of lines, then a 1 TiB hole (read as NULs past the binary check's first chunk, no newline): a far
  // offset is read through to the end, minutes unless the read stops at the cancel
  const file = join(h.workspace, 'huge.log');
  writeFileSync(file, 'line\n'.repeat(13_000));
  truncateSync(file, 2 ** 40);
  const s = await h.newSession();
  h.fake.script([{ toolUses: [{ name: 'read_file', input: { path: 'huge.log', offset: 10_000_000 } }] }]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('read the end') });
  await h.waitFor('tool.called', t.turn_id);
  await h.engine.cancel(s.id, t.turn_id);
  const end = await h.turnEnd(t.turn_id);
  assert.equal(end.type, 'turn.cancelled');
  const failed = last(t.turn_id, 'tool.failed');
  assert.equal(failed.payload.error_class, 'cancelled');
  assert.match(failed.payload.message as string, /read_file was cancelled while reading huge\.log/);
});

test('cancel with tools scheduled: the pending ones fail cancelled without running', async () => {
  const s = await h.newSession();
  h.fake.script([
    {
      toolUses: [
        { name: 'write_file', input: { path: 'a.txt', content: 'a' } },
        { name: 'read_file', input: { path: 'a.txt' } },
      ],
    },
  ]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('write then read') });
  await h.waitFor('tool.confirmation_requested', t.turn_id);
  await h.engine.cancel(s.id, t.turn_id);
  await h.turnEnd(t.turn_id);
  const failed = h.events.filter((e) => e.turn_id === t.turn_id && e.type === 'tool.failed');
  assert.deepEqual(
    failed.map((e) => e.payload.error_class),
    ['cancelled', 'cancelled'],
  );
  assert.equal(h.events.filter((e) => e.turn_id === t.turn_id && e.type === 'tool.called').length, 1);
  assert.equal(last(t.turn_id, 'turn.cancelled').type, 'turn.cancelled');
});

test('cancel during a follow-up LLM call: the same sequence as the first call', async () => {
  const s = await h.newSession();
  h.fake.script([{ toolUses: [{ name: 'list_files', input: {} }] }, { text: LONG, dripMs: 40 }]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('list then talk') });
  await h.waitFor('tool.completed', t.turn_id);
  await h.waitFor('text.delta', t.turn_id);
  await h.engine.cancel(s.id, t.turn_id);
  await h.turnEnd(t.turn_id);
  assert.deepEqual(tail(t.turn_id, 'text.delta').slice(-4), [
    'text.delta',
    'message.complete',
    'llm.call_failed',
    'turn.cancelled',
  ]);
});

test('a turn past SVC_AGENT_TURN_TIMEOUT_MS is cancelled with reason timeout', async () => {
  const quick = await startAgentHarness({ turnTimeoutMs: 300 });
  try {
    const s = await quick.newSession();
    quick.fake.script([{ text: LONG, dripMs: 100 }]);
    const t = await quick.engine.submit({ sessionId: s.id, content: text('slow') });
    const end = await quick.turnEnd(t.turn_id);
    assert.equal(end.type, 'turn.cancelled');
    assert.equal(end.payload.reason, 'timeout');
  } finally {
    await quick.close();
  }
});

test('a cancel that lands between a model message.complete and the call close: the call still closes once, billed in the turn', async () => {
  // the moment the consumer has the message.complete and the stream has not closed the call yet
  let armed = true;
  const odd = await startAgentHarness({
    onEvent(e, engine) {
      if (armed && e.type === 'message.complete') {
        armed = false;
        void engine.cancelAll('odd_moment');
      }
    },
  });
  try {
    const s = await odd.newSession();
    odd.fake.script([{ text: 'all said', usage: { input: 1000, output: 40 } }]);
    const t = await odd.engine.submit({ sessionId: s.id, content: text('hi') });
    const end = await odd.turnEnd(t.turn_id);
    const closing = odd.events.filter(
      (e) => e.turn_id === t.turn_id && (e.type === 'llm.call_completed' || e.type === 'llm.call_failed'),
    );
    assert.equal(closing.length, 1, 'the call has exactly one closing event');
    assert.ok(Number(closing[0].payload.cost_usd) > 0);
    assert.equal(end.payload.cost_usd, closing[0].payload.cost_usd);
  } finally {
    await odd.close();
  }
});

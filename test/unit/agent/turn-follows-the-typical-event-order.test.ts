import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type KyselyPlugin, sql } from 'kysely';
import type { SvcError } from '#src/lib/errors.ts';
import { type AgentHarness, startAgentHarness } from '../../helpers/agent-harness.ts';

/** Once armed, the turn's next insert of tool results fails the way an unexpected store error would. */
let failToolResults = false;
const toolResultsFail: KyselyPlugin = {
  transformQuery(args) {
    if (
      failToolResults &&
      args.node.kind === 'InsertQueryNode' &&
      JSON.stringify(args.node).includes('tool_results')
    ) {
      failToolResults = false;
      throw new Error('the store refused the tool results');
    }
    return args.node;
  },
  transformResult: async (args) => args.result,
};

let h: AgentHarness;
before(async () => {
  h = await startAgentHarness({ enginePlugin: toolResultsFail });
});
after(() => h.close());

const text = (t: string) => [{ type: 'text' as const, text: t }];

/** Types of the turn's events, with consecutive deltas collapsed into one entry. */
function sequence(turnId: string): string[] {
  const out: string[] = [];
  for (const e of h.events) {
    if (e.turn_id !== turnId) continue;
    if ((e.type === 'text.delta' || e.type === 'tool.use_input_delta') && out.at(-1) === e.type) continue;
    out.push(e.type);
  }
  return out;
}

test('a text-only turn: turn.started, route.decided, the call, the stream, turn.completed; session updated', async () => {
  const s = await h.newSession();
  h.fake.script([{ text: 'Hello from the model', usage: { input: 100, output: 20 } }]);
  const submitted = await h.engine.submit({ sessionId: s.id, content: text('hi') });
  const end = await h.turnEnd(submitted.turn_id);
  assert.equal(end.type, 'turn.completed');
  assert.deepEqual(sequence(submitted.turn_id), [
    'turn.started',
    'route.decided',
    'llm.call_started',
    'message.start',
    'text.delta',
    'message.complete',
    'llm.call_completed',
    'turn.completed',
  ]);
  const completed = h.events.find((e) => e.type === 'llm.call_completed' && e.turn_id === submitted.turn_id)!;
  assert.equal(completed.actor, 'agent');
  assert.equal(completed.session_id, s.id);
  assert.equal(completed.payload.gateway_key_id, null);
  assert.equal(completed.payload.inbound_shape, null);
  assert.equal(completed.payload.input_tokens, 100);
  const row = await h.store.kysely
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', s.id)
    .executeTakeFirstOrThrow();
  assert.equal(row.turn_count, 1);
  assert.equal(row.current_turn_id, null);
  assert.equal(Number(row.cost_so_far_usd), Number(completed.payload.cost_usd));
  const msgs = await h.store.kysely
    .selectFrom('messages')
    .selectAll()
    .where('session_id', '=', s.id)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    msgs.map((m) => m.role),
    ['user', 'assistant'],
  );
  assert.deepEqual(JSON.parse(msgs[1].content), [{ type: 'text', text: 'Hello from the model' }]);
});

test('a multi-call turn runs read, search, list, write, edit and a command, then answers', async () => {
  writeFileSync(join(h.workspace, 'notes.txt'), 'alpha\nbeta\n');
  const s = await h.newSession();
  h.fake.script([
    { text: 'Let me look.', toolUses: [{ name: 'read_file', input: { path: 'notes.txt' } }] },
    { toolUses: [{ name: 'search_files', input: { pattern: 'be.a' } }] },
    { toolUses: [{ name: 'list_files', input: {} }] },
    { toolUses: [{ name: 'write_file', input: { path: 'out/new.txt', content: 'gamma\n' } }] },
    {
      toolUses: [{ name: 'edit_file', input: { path: 'notes.txt', old_string: 'beta', new_string: 'BETA' } }],
    },
    { toolUses: [{ name: 'run_command', input: { command: 'cat notes.txt out/new.txt' } }] },
    { text: 'All done.' },
  ]);
  const submitted = await h.engine.submit({ sessionId: s.id, content: text('do the work') });
  // write_file, edit_file and run_command ask first: allow each (the third with scope session)
  for (const scope of ['once', 'once', 'session'] as const) {
    const asked = await waitForNth('tool.confirmation_requested', submitted.turn_id, scope);
    await h.engine.confirm({
      sessionId: s.id,
      turnId: submitted.turn_id,
      requestId: asked.payload.request_id as string,
      decision: 'allow',
      scope,
    });
  }
  const end = await h.turnEnd(submitted.turn_id);
  assert.equal(end.type, 'turn.completed', JSON.stringify(end.payload));
  assert.equal(readFileSync(join(h.workspace, 'notes.txt'), 'utf8'), 'alpha\nBETA\n');
  assert.equal(readFileSync(join(h.workspace, 'out/new.txt'), 'utf8'), 'gamma\n');
  const seq = sequence(submitted.turn_id);
  assert.deepEqual(seq.slice(0, 12), [
    'turn.started',
    'route.decided',
    'llm.call_started',
    'message.start',
    'text.delta',
    'tool.use_start',
    'tool.use_input_delta',
    'tool.use_end',
    'message.complete',
    'llm.call_completed',
    'tool.called',
    'tool.completed',
  ]);
  assert.equal(seq.filter((t) => t === 'llm.call_started').length, 7);
  assert.equal(seq.filter((t) => t === 'route.decided').length, 1);
  assert.equal(seq.filter((t) => t === 'tool.completed').length, 6);
  assert.equal(seq.at(-1), 'turn.completed');
  const calls = await h.store.kysely
    .selectFrom('tool_calls')
    .selectAll()
    .where('turn_id', '=', submitted.turn_id)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    calls.map((c) => [c.tool_name, c.status]),
    [
      ['read_file', 'completed'],
      ['search_files', 'completed'],
      ['list_files', 'completed'],
      ['write_file', 'completed'],
      ['edit_file', 'completed'],
      ['run_command', 'completed'],
    ],
  );
  assert.match(calls[0].output ?? '', /alpha/);
  assert.match(calls[5].output ?? '', /BETA/);
  // the turn's cost is the exact sum of its calls, and so is the session's
  const costs = await sql<{ cost: string }>`SELECT json_extract(payload, '$.cost_usd') AS cost FROM events
    WHERE turn_id = ${submitted.turn_id} AND type = 'llm.call_completed'`.execute(h.store.kysely);
  assert.equal(costs.rows.length, 7);
  const turnCost = (end.payload as { cost_usd: string }).cost_usd;
  const sum = costs.rows.reduce((a, r) => a + Number(r.cost), 0);
  assert.ok(Math.abs(Number(turnCost) - sum) < 1e-12);
});

async function waitForNth(type: string, turnId: string, label: string) {
  for (;;) {
    const answered = new Set(
      h.events.filter((e) => e.type === 'tool.confirmation_resolved').map((e) => e.payload.request_id),
    );
    const open = h.events.find(
      (e) => e.type === type && e.turn_id === turnId && !answered.has(e.payload.request_id),
    );
    if (open) return open;
    await new Promise((r) => setTimeout(r, 10));
    void label;
  }
}

test('a message with nothing left to say (blank, or only an @alias prefix) is invalid_content naming content', async () => {
  const s = await h.newSession();
  for (const t of ['   ', '@fast ']) {
    await assert.rejects(h.engine.submit({ sessionId: s.id, content: text(t) }), (err: SvcError) => {
      assert.equal(err.code, 'invalid_content');
      assert.deepEqual(err.details, { field: 'content' });
      return true;
    });
  }
  const row = await h.store.kysely
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', s.id)
    .executeTakeFirst();
  assert.equal(row?.current_turn_id, null);
});

test('an upstream failure ends the turn: llm.call_failed, then turn.completed failed with the upstream code and class', async () => {
  const s = await h.newSession();
  h.fake.script([{ error: 400, message: 'bad tool schema' }]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('hi') });
  const end = await h.turnEnd(t.turn_id);
  assert.deepEqual(sequence(t.turn_id), [
    'turn.started',
    'route.decided',
    'llm.call_started',
    'llm.call_failed',
    'turn.completed',
  ]);
  assert.equal(end.payload.status, 'failed');
  // the provider refused the request: not an internal error of svc
  assert.equal(end.payload.error_code, 'upstream_invalid_request');
  assert.equal(end.payload.error_class, 'invalid_request');
});

test('an error event inside the stream ends the turn: llm.call_failed, then turn.completed failed', async () => {
  const s = await h.newSession();
  h.fake.script([{ text: 'partial answer', streamError: 529 }]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('hi') });
  const end = await h.turnEnd(t.turn_id);
  assert.equal(end.payload.status, 'failed');
  assert.equal(end.payload.error_code, 'upstream_overloaded');
  assert.equal(end.payload.error_class, 'overloaded');
  const failed = h.events.filter((e) => e.turn_id === t.turn_id && e.type === 'llm.call_failed');
  assert.equal(failed.length, 1);
});

test('a turn that fails inside svc after a model call keeps that call in its cost and steps', async () => {
  writeFileSync(join(h.workspace, 'kept.txt'), 'kept\n');
  const s = await h.newSession();
  h.fake.script([
    { toolUses: [{ name: 'read_file', input: { path: 'kept.txt' } }], usage: { input: 1000, output: 50 } },
  ]);
  failToolResults = true;
  const t = await h.engine.submit({ sessionId: s.id, content: text('read it') });
  const end = await h.turnEnd(t.turn_id);
  assert.equal(end.type, 'turn.completed');
  assert.equal(end.payload.status, 'failed');
  assert.equal(end.payload.error_code, 'internal_error');
  const billed = h.events.find((e) => e.type === 'llm.call_completed' && e.turn_id === t.turn_id)!;
  assert.ok(Number(billed.payload.cost_usd) > 0);
  assert.equal(end.payload.cost_usd, billed.payload.cost_usd);
  assert.equal(end.payload.steps, 1);
  const row = await h.store.kysely
    .selectFrom('sessions')
    .select(['cost_so_far_usd', 'current_turn_id'])
    .where('id', '=', s.id)
    .executeTakeFirstOrThrow();
  assert.equal(row.current_turn_id, null);
  assert.equal(Number(row.cost_so_far_usd), Number(billed.payload.cost_usd));
});

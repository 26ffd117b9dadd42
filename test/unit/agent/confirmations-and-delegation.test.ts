import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { endSession } from '#src/agent/sessions/store.ts';
import { type AgentHarness, startAgentHarness } from '../../helpers/agent-harness.ts';

let h: AgentHarness;
before(async () => {
  h = await startAgentHarness({ confirmationTimeoutMs: 300 });
});
after(() => h.close());

const text = (t: string) => [{ type: 'text' as const, text: t }];
const ofTurn = (turnId: string, type: string) =>
  h.events.filter((e) => e.turn_id === turnId && e.type === type);

test('deny: tool.failed denied_by_user, nothing written, the model sees the refusal', async () => {
  const s = await h.newSession();
  h.fake.script([
    { toolUses: [{ name: 'write_file', input: { path: 'denied.txt', content: 'x' } }] },
    { text: 'ok' },
  ]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('write') });
  const asked = await h.waitFor('tool.confirmation_requested', t.turn_id);
  const r = await h.engine.confirm({
    sessionId: s.id,
    turnId: t.turn_id,
    requestId: asked.payload.request_id as string,
    decision: 'deny',
    scope: 'once',
  });
  assert.deepEqual(r, { request_id: asked.payload.request_id, decision: 'deny', applied: true });
  assert.equal((await h.turnEnd(t.turn_id)).type, 'turn.completed');
  assert.equal(ofTurn(t.turn_id, 'tool.failed')[0].payload.error_class, 'denied_by_user');
  assert.equal(existsSync(join(h.workspace, 'denied.txt')), false);
  const second = h.fake.requests.at(-1)!;
  assert.match(JSON.stringify(second.body), /denied_by_user/);
});

test('no answer within the timeout is a deny; a late answer is 200 with applied false (spec 2)', async () => {
  const s = await h.newSession();
  h.fake.script([{ toolUses: [{ name: 'run_command', input: { command: 'echo hi' } }] }, { text: 'ok' }]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('run') });
  const asked = await h.waitFor('tool.confirmation_requested', t.turn_id);
  await h.turnEnd(t.turn_id);
  const resolved = ofTurn(t.turn_id, 'tool.confirmation_resolved')[0];
  assert.equal(resolved.payload.decision, 'deny');
  assert.equal(resolved.payload.timed_out, true);
  assert.equal(ofTurn(t.turn_id, 'tool.failed')[0].payload.error_class, 'denied_by_user');
  assert.deepEqual(
    await h.engine.confirm({
      sessionId: s.id,
      turnId: t.turn_id,
      requestId: asked.payload.request_id as string,
      decision: 'allow',
      scope: 'once',
    }),
    { request_id: asked.payload.request_id, decision: 'allow', applied: false },
  );
  await assert.rejects(
    h.engine.confirm({
      sessionId: s.id,
      turnId: t.turn_id,
      requestId: 'nope',
      decision: 'allow',
      scope: 'once',
    }),
    { code: 'confirmation_not_found' },
  );
});

test('two concurrent answers: the first wins, the second is 409 confirmation_already_resolved', async () => {
  const slow = await startAgentHarness({ confirmationTimeoutMs: 60_000 });
  try {
    const s = await slow.newSession();
    slow.fake.script([
      { toolUses: [{ name: 'write_file', input: { path: 'race.txt', content: 'r' } }] },
      { text: 'ok' },
    ]);
    const t = await slow.engine.submit({ sessionId: s.id, content: text('write') });
    const asked = await slow.waitFor('tool.confirmation_requested', t.turn_id);
    const answer = (decision: 'allow' | 'deny') =>
      slow.engine.confirm({
        sessionId: s.id,
        turnId: t.turn_id,
        requestId: asked.payload.request_id as string,
        decision,
        scope: 'once',
      });
    const results = await Promise.allSettled([answer('allow'), answer('deny')]);
    assert.equal(results[0].status, 'fulfilled');
    assert.equal(results[1].status, 'rejected');
    assert.equal((results[1] as PromiseRejectedResult).reason.code, 'confirmation_already_resolved');
    await slow.turnEnd(t.turn_id);
    assert.equal(existsSync(join(slow.workspace, 'race.txt')), true);
  } finally {
    await slow.close();
  }
});

test('an answer naming a turn its session does not own is 404 turn_not_found and applies nothing', async () => {
  const slow = await startAgentHarness({ confirmationTimeoutMs: 60_000 });
  try {
    const s = await slow.newSession();
    const stranger = await slow.newSession();
    slow.fake.script([
      { toolUses: [{ name: 'write_file', input: { path: 'mine.txt', content: 'm' } }] },
      { text: 'ok' },
    ]);
    const t = await slow.engine.submit({ sessionId: s.id, content: text('write') });
    const asked = await slow.waitFor('tool.confirmation_requested', t.turn_id);
    const answer = (sessionId: string, turnId: string) =>
      slow.engine.confirm({
        sessionId,
        turnId,
        requestId: asked.payload.request_id as string,
        decision: 'allow',
        scope: 'once',
      });
    // spec 2 Errors: turn_not_found on confirmations, for another session's turn and for an unknown one
    await assert.rejects(answer(stranger.id, t.turn_id), { code: 'turn_not_found' });
    await assert.rejects(answer(s.id, 'no-such-turn'), { code: 'turn_not_found' });
    assert.equal((await answer(s.id, t.turn_id)).applied, true);
    await slow.turnEnd(t.turn_id);
    // once the turn ended, the request is resolved: still 409, not 404
    await assert.rejects(answer(s.id, t.turn_id), { code: 'confirmation_already_resolved' });
  } finally {
    await slow.close();
  }
});

test('an answer after the session ended is 409 confirmation_already_resolved with applied false', async () => {
  const s = await h.newSession();
  h.fake.script([{ toolUses: [{ name: 'write_file', input: { path: 'late.txt', content: 'l' } }] }]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('write') });
  const asked = await h.waitFor('tool.confirmation_requested', t.turn_id);
  // DELETE /sessions/{id}: the running turn is cancelled (its request settles), then the session ends
  await h.engine.cancel(s.id, t.turn_id, 'session_ended');
  await h.turnEnd(t.turn_id);
  await endSession(h.store.kysely, s.id, new Date().toISOString());
  await assert.rejects(
    h.engine.confirm({
      sessionId: s.id,
      turnId: t.turn_id,
      requestId: asked.payload.request_id as string,
      decision: 'allow',
      scope: 'once',
    }),
    (err: { code: string; details: { applied: boolean } }) =>
      err.code === 'confirmation_already_resolved' && err.details.applied === false,
  );
});

test('a confirmed tool’s latency_ms is its own run time, not the time the user took to answer', async () => {
  const s = await h.newSession();
  h.fake.script([
    { toolUses: [{ name: 'write_file', input: { path: 'slow-answer.txt', content: 's' } }] },
    { text: 'ok' },
  ]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('write') });
  const asked = await h.waitFor('tool.confirmation_requested', t.turn_id);
  await new Promise((r) => setTimeout(r, 150)); // the user reads the request (within the 300 ms timeout)
  await h.engine.confirm({
    sessionId: s.id,
    turnId: t.turn_id,
    requestId: asked.payload.request_id as string,
    decision: 'allow',
    scope: 'once',
  });
  await h.turnEnd(t.turn_id);
  const resolved = ofTurn(t.turn_id, 'tool.confirmation_resolved')[0];
  const done = ofTurn(t.turn_id, 'tool.completed')[0];
  // svc_tool_call_latency_seconds (5 ms..30 s buckets) observes this: the wait would swamp it. The run
  // lies between the answer and tool.completed, however long a loaded disk makes the write itself
  const sinceAnswerMs = (done.timestamp_us - resolved.timestamp_us) / 1000;
  const waitedMs = (resolved.timestamp_us - asked.timestamp_us) / 1000;
  assert.ok(waitedMs >= 100, `the user waited ${waitedMs} ms`);
  assert.ok(
    (done.payload.latency_ms as number) <= sinceAnswerMs + 1,
    `latency_ms ${done.payload.latency_ms} vs ${sinceAnswerMs} ms from the answer to tool.completed`,
  );
});

test('scope session holds for the rest of the session: an allowed tool runs, a denied one is refused, unasked', async () => {
  const slow = await startAgentHarness({ confirmationTimeoutMs: 60_000 });
  try {
    const s = await slow.newSession();
    slow.fake.script([
      { toolUses: [{ name: 'write_file', input: { path: 'one.txt', content: '1' } }] },
      { text: 'ok' },
    ]);
    const t1 = await slow.engine.submit({ sessionId: s.id, content: text('write one') });
    const asked = await slow.waitFor('tool.confirmation_requested', t1.turn_id);
    await slow.engine.confirm({
      sessionId: s.id,
      turnId: t1.turn_id,
      requestId: asked.payload.request_id as string,
      decision: 'allow',
      scope: 'session',
    });
    await slow.turnEnd(t1.turn_id);
    slow.fake.script([
      { toolUses: [{ name: 'write_file', input: { path: 'two.txt', content: '2' } }] },
      { text: 'ok' },
    ]);
    const t2 = await slow.engine.submit({ sessionId: s.id, content: text('write two') });
    await slow.turnEnd(t2.turn_id);
    assert.equal(
      slow.events.filter((e) => e.turn_id === t2.turn_id && e.type === 'tool.confirmation_requested').length,
      0,
    );
    assert.equal(existsSync(join(slow.workspace, 'two.txt')), true);

    // a deny with scope session: the next call of that tool fails denied_by_user without a question
    const editOne = { name: 'edit_file', input: { path: 'one.txt', old_string: '1', new_string: 'x' } };
    slow.fake.script([{ toolUses: [editOne] }, { text: 'ok' }]);
    const t3 = await slow.engine.submit({ sessionId: s.id, content: text('edit one') });
    const editAsked = await slow.waitFor('tool.confirmation_requested', t3.turn_id);
    await slow.engine.confirm({
      sessionId: s.id,
      turnId: t3.turn_id,
      requestId: editAsked.payload.request_id as string,
      decision: 'deny',
      scope: 'session',
    });
    await slow.turnEnd(t3.turn_id);
    slow.fake.script([{ toolUses: [editOne] }, { text: 'ok' }]);
    const t4 = await slow.engine.submit({ sessionId: s.id, content: text('edit one again') });
    await slow.turnEnd(t4.turn_id);
    const ofT4 = (type: string) => slow.events.filter((e) => e.turn_id === t4.turn_id && e.type === type);
    assert.equal(ofT4('tool.confirmation_requested').length, 0);
    assert.equal(ofT4('tool.failed')[0]?.payload.error_class, 'denied_by_user');
    assert.equal(readFileSync(join(slow.workspace, 'one.txt'), 'utf8'), '1');
  } finally {
    await slow.close();
  }
});

test('delegation: a worker session runs one turn, its cost rolls up, workers cannot write or delegate', async () => {
  const s = await h.newSession();
  h.fake.script([
    { toolUses: [{ name: 'delegate', input: { task: 'summarise the repo', model: 'fast' } }] },
    // the worker: tries to write (refused), then answers
    {
      toolUses: [{ name: 'write_file', input: { path: 'w.txt', content: 'w' } }],
      usage: { input: 50, output: 5 },
    },
    { text: 'worker summary', usage: { input: 60, output: 6 } },
    // the planner again
    { text: 'planner done' },
  ]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('delegate it') });
  const end = await h.turnEnd(t.turn_id);
  assert.equal(end.type, 'turn.completed');
  const started = ofTurn(t.turn_id, 'delegate.started')[0];
  const workerId = started.payload.worker_session_id as string;
  const completed = ofTurn(t.turn_id, 'delegate.completed')[0];
  assert.equal(completed.payload.result, 'worker summary');
  const worker = await h.store.kysely
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', workerId)
    .executeTakeFirstOrThrow();
  assert.equal(worker.is_worker, 1);
  assert.equal(worker.parent_session_id, s.id);
  assert.equal(worker.turn_count, 1);
  const workerEvents = h.events.filter((e) => e.session_id === workerId);
  const route = workerEvents.find((e) => e.type === 'route.decided')!;
  const chain = route.payload.chain as Array<{ policy: string; verdict: string }>;
  assert.equal(chain.find((c) => c.verdict === 'accepted')?.policy, 'delegate_request');
  assert.equal(workerEvents.find((e) => e.type === 'tool.failed')?.payload.error_class, 'permission_denied');
  assert.equal(existsSync(join(h.workspace, 'w.txt')), false);
  const calls = workerEvents.filter((e) => e.type === 'llm.call_completed');
  assert.ok(calls.every((c) => c.payload.parent_session_id === s.id));
  // planner cost = its own calls + the worker's, exactly
  const planner = await h.store.kysely
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', s.id)
    .executeTakeFirstOrThrow();
  const all = h.events.filter(
    (e) => e.type === 'llm.call_completed' && (e.turn_id === t.turn_id || e.session_id === workerId),
  );
  const sum = all.reduce((a, e) => a + Number(e.payload.cost_usd), 0);
  assert.ok(Math.abs(Number(planner.cost_so_far_usd) - sum) < 1e-12, `${planner.cost_so_far_usd} vs ${sum}`);
  const workerSum = calls.reduce((a, e) => a + Number(e.payload.cost_usd), 0);
  assert.ok(Math.abs(Number(completed.payload.cost_usd) - workerSum) < 1e-12);
  assert.ok(Math.abs(Number(worker.cost_so_far_usd) - workerSum) < 1e-12);
  // one turn, then the worker session ends: nobody can turn it into a planner that delegates and writes
  assert.notEqual(worker.ended_at, null);
  await assert.rejects(h.engine.submit({ sessionId: workerId, content: text('now delegate again') }), {
    code: 'session_already_ended',
  });
});

test('delegating to a model the registry does not know fails at once instead of running elsewhere', async () => {
  const s = await h.newSession();
  h.fake.script([
    { toolUses: [{ name: 'delegate', input: { task: 'count files', model: 'gpt-nonexistent' } }] },
    { text: 'understood' },
  ]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('delegate') });
  assert.equal((await h.turnEnd(t.turn_id)).type, 'turn.completed');
  assert.equal(ofTurn(t.turn_id, 'delegate.started').length, 0);
  const failed = ofTurn(t.turn_id, 'delegate.failed')[0];
  assert.equal(failed.payload.failure_mode, 'model_not_configured');
  assert.equal(failed.payload.worker_session_id, null);
  assert.equal(ofTurn(t.turn_id, 'tool.failed')[0].payload.error_class, 'invalid_input');
  const workers = await h.store.kysely
    .selectFrom('sessions')
    .select('id')
    .where('parent_session_id', '=', s.id)
    .execute();
  assert.deepEqual(workers, []);
});

test('delegating to a model that cannot take delegated work fails at once as invalid_input, like an unknown model', async () => {
  const s = await h.newSession();
  h.fake.script([
    { toolUses: [{ name: 'delegate', input: { task: 'count files', model: 'openai:gpt-5-nano' } }] },
    { text: 'understood' },
  ]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('delegate') });
  assert.equal((await h.turnEnd(t.turn_id)).type, 'turn.completed');
  assert.equal(ofTurn(t.turn_id, 'delegate.started').length, 0);
  const failed = ofTurn(t.turn_id, 'delegate.failed')[0];
  assert.equal(failed.payload.failure_mode, 'model_not_delegable');
  assert.match(String(failed.payload.message), /openai:gpt-5-nano cannot take delegated work/);
  assert.equal(ofTurn(t.turn_id, 'tool.failed')[0].payload.error_class, 'invalid_input');
});

test('a delegation naming no model, with no fast tier, refuses a model without can_delegate as a named one would', async (t) => {
  // one model, can_delegate left at its default (false), no fast tier: the delegate tool's default is none
  const local = await startAgentHarness({
    modelsYaml: `pricing_version: t
models:
  - id: anthropic:claude-sonnet-4-5
    tier: balanced
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }
    prices: { input: 3, output: 15 }
`,
  });
  t.after(() => local.close());
  const s = await local.newSession();
  local.fake.script([
    { toolUses: [{ name: 'delegate', input: { task: 'count files' } }] },
    { text: 'understood' },
  ]);
  const t1 = await local.engine.submit({ sessionId: s.id, content: text('delegate') });
  assert.equal((await local.turnEnd(t1.turn_id)).type, 'turn.completed');
  const failed = local.events.find((e) => e.turn_id === t1.turn_id && e.type === 'delegate.failed');
  assert.equal(failed?.payload.failure_mode, 'routing_failed');
  const worker = failed?.payload.worker_session_id as string;
  const route = local.events.find((e) => e.session_id === worker && e.type === 'route.decided');
  const chain = route?.payload.chain as Array<{ model: string; validation_failure?: string }>;
  assert.ok(
    chain.length > 0 && chain.every((c) => c.validation_failure !== undefined || c.model === null),
    JSON.stringify(chain),
  );
  assert.ok(chain.some((c) => c.validation_failure === 'missing_capability'));
  assert.equal(
    local.events.filter((e) => e.session_id === worker && e.type === 'llm.call_completed').length,
    0,
  );
});

test('cancel during delegation: the worker is cancelled, delegate.failed cancelled_by_user, then turn.cancelled', async () => {
  const s = await h.newSession();
  h.fake.script([
    { toolUses: [{ name: 'delegate', input: { task: 'talk slowly' } }] },
    { text: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), dripMs: 40 },
  ]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('delegate') });
  const started = await h.waitFor('delegate.started', t.turn_id);
  const workerId = started.payload.worker_session_id as string;
  await new Promise<void>((resolve) => {
    const poll = () =>
      h.events.some((e) => e.session_id === workerId && e.type === 'text.delta')
        ? resolve()
        : setTimeout(poll, 10);
    poll();
  });
  await h.engine.cancel(s.id, t.turn_id);
  const end = await h.turnEnd(t.turn_id);
  assert.equal(end.type, 'turn.cancelled');
  const workerEnd = h.events.find((e) => e.session_id === workerId && e.type === 'turn.cancelled');
  assert.ok(workerEnd);
  assert.equal(
    h.events.find((e) => e.session_id === workerId && e.type === 'llm.call_failed')?.payload.error_class,
    'cancelled',
  );
  const failed = ofTurn(t.turn_id, 'delegate.failed')[0];
  assert.equal(failed.payload.failure_mode, 'cancelled_by_user');
  const planner = h.events.filter((e) => e.turn_id === t.turn_id).map((e) => e.type);
  assert.ok(planner.indexOf('delegate.failed') < planner.indexOf('turn.cancelled'));
  const worker = await h.store.kysely
    .selectFrom('sessions')
    .select('ended_at')
    .where('id', '=', workerId)
    .executeTakeFirstOrThrow();
  assert.notEqual(worker.ended_at, null);
});

test('PATCH: immediate with no turn, queued to the turn boundary during one; @alias overrides one turn', async () => {
  const s = await h.newSession();
  const now = await h.engine.setActiveModel(s.id, 'fast');
  assert.equal(now.swap_queued, false);
  assert.equal(now.active_model, 'anthropic:claude-haiku-4-5');
  h.fake.script([{ text: 'slow', dripMs: 100 }]);
  const t = await h.engine.submit({ sessionId: s.id, content: text('hi') });
  const queued = await h.engine.setActiveModel(s.id, 'deep');
  assert.equal(queued.swap_queued, true);
  assert.equal(queued.swap_queued_until_turn, t.turn_id);
  await h.turnEnd(t.turn_id);
  const row = await h.store.kysely
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', s.id)
    .executeTakeFirstOrThrow();
  assert.equal(row.active_model, queued.active_model);
  assert.equal(row.sticky, 1);
  // the sticky model is slot 2's proposal; an @alias prefix is slot 1's and is stripped from the text
  h.fake.script([{ text: 'from haiku' }]);
  const t2 = await h.engine.submit({ sessionId: s.id, content: text('@fast what now') });
  await h.turnEnd(t2.turn_id);
  const route = ofTurn(t2.turn_id, 'route.decided')[0];
  assert.equal(route.payload.chosen_model, 'anthropic:claude-haiku-4-5');
  assert.equal((route.payload.chain as Array<{ policy: string }>)[0].policy, 'per_message_override');
  const sent = JSON.stringify(h.fake.requests.at(-1)!.body);
  assert.ok(sent.includes('what now') && !sent.includes('@fast'));
  const after = await h.store.kysely
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', s.id)
    .executeTakeFirstOrThrow();
  assert.equal(after.active_model, queued.active_model, 'a per-turn override leaves the active model alone');
  const cleared = await h.engine.setActiveModel(s.id, null);
  assert.equal(cleared.swap_queued, false);
  const unpinned = await h.store.kysely
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', s.id)
    .executeTakeFirstOrThrow();
  assert.equal(unpinned.sticky, 0);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { endSession } from '#src/agent/sessions/store.ts';
import type { ConfirmInput, SubmitTurnInput, TurnEngine } from '#src/agent/turns/engine.ts';
import { SvcError } from '#src/lib/errors.ts';
import { createAgentAppFixture } from './agent-app-fixture.ts';

/** A double of the TurnEngine contract: records what the routes hand over and throws what it is told to. */
function engineDouble() {
  const submitted: SubmitTurnInput[] = [];
  const confirmed: ConfirmInput[] = [];
  const cancelled: Array<[string, string, string | null | undefined]> = [];
  let next: SvcError | undefined;
  const fail = () => {
    const err = next;
    next = undefined;
    if (err) throw err;
  };
  const engine: TurnEngine = {
    async submit(input) {
      fail();
      submitted.push(input);
      return { turn_id: 'T1', session_id: input.sessionId, submitted_at: 'now', user_message_id: 'M1' };
    },
    async cancel(sessionId, turnId, reason) {
      fail();
      cancelled.push([sessionId, turnId, reason]);
      return { turn_id: turnId, cancellation_initiated: true };
    },
    async confirm(input) {
      fail();
      confirmed.push(input);
      return { request_id: input.requestId, decision: input.decision, applied: true };
    },
    async setActiveModel(sessionId, model) {
      fail();
      return { id: sessionId, active_model: model ?? 'anthropic:claude-sonnet-4-5', swap_queued: false };
    },
    activeTurns: () => 0,
    cancelAll: async () => {},
  };
  return { engine, submitted, confirmed, cancelled, failNext: (err: SvcError) => (next = err) };
}

async function setup(t: Parameters<typeof createAgentAppFixture>[0]) {
  const double = engineDouble();
  const fx = await createAgentAppFixture(t, { engine: double.engine });
  const res = await fx.call('POST', '/sessions', { workspace_path: fx.workspace });
  const { id } = (await res.json()) as { id: string };
  return { ...fx, ...double, sessionId: id };
}

const errorOf = async (res: Response) =>
  ((await res.json()) as { error: { code: string; message: string; details?: any } }).error;

test('a turn with text and image blocks is handed to the engine and answered 202', async (t) => {
  const fx = await setup(t);
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
  const content = [
    { type: 'text', text: 'hello' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
    { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
  ];
  const res = await fx.call('POST', `/sessions/${fx.sessionId}/turns`, {
    content,
    per_message_override: 'fast',
  });
  assert.equal(res.status, 202);
  assert.deepEqual(await res.json(), {
    turn_id: 'T1',
    session_id: fx.sessionId,
    submitted_at: 'now',
    user_message_id: 'M1',
  });
  assert.deepEqual(fx.submitted, [{ sessionId: fx.sessionId, content, perMessageOverride: 'fast' }]);
});

test('content that is not a list is a validation_error; blocks a user may not send are invalid_content', async (t) => {
  const fx = await setup(t);
  const path = `/sessions/${fx.sessionId}/turns`;
  let res = await fx.call('POST', path, { content: 'hi' });
  assert.equal(res.status, 400);
  let err = await errorOf(res);
  assert.equal(err.code, 'validation_error');
  assert.equal(err.details.field, 'content');
  res = await fx.call('POST', path, {});
  assert.equal((await errorOf(res)).details.field, 'content');
  for (const [content, field] of [
    [[], 'content'],
    [[{ type: 'tool_use', id: 'x', name: 'read_file', input: {} }], 'content[0].type'],
    [[{ type: 'text', text: 'ok' }, { type: 'text' }], 'content[1].text'],
    [
      [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'AAAA' } }],
      'content[0].source.media_type',
    ],
    [[{ type: 'image', source: { type: 'url', url: 'file:///etc/passwd' } }], 'content[0].source.url'],
  ] as const) {
    res = await fx.call('POST', path, { content });
    assert.equal(res.status, 400, JSON.stringify(content));
    err = await errorOf(res);
    assert.equal(err.code, 'invalid_content');
    assert.equal(err.details.field, field);
    assert.ok(err.message.startsWith(field));
  }
  assert.equal(fx.submitted.length, 0);
});

test('a per_message_override naming no model is a validation_error naming the field, not a silent fallback', async (t) => {
  const fx = await setup(t);
  const path = `/sessions/${fx.sessionId}/turns`;
  for (const ref of ['nope', 'anthropic:claude-not-a-model']) {
    const res = await fx.call('POST', path, {
      content: [{ type: 'text', text: 'x' }],
      per_message_override: ref,
    });
    assert.equal(res.status, 400, ref);
    const err = await errorOf(res);
    assert.equal(err.code, 'validation_error');
    assert.equal(err.details.field, 'per_message_override');
    assert.ok(err.message.startsWith('per_message_override'));
  }
  assert.equal(fx.submitted.length, 0);
});

test('engine refusals keep their codes and statuses', async (t) => {
  const fx = await setup(t);
  const path = `/sessions/${fx.sessionId}/turns`;
  const body = { content: [{ type: 'text', text: 'x' }] };
  for (const [code, status, details] of [
    ['turn_in_flight', 409, undefined],
    [
      'routing_failed',
      503,
      { tried: [{ model: 'anthropic:claude-sonnet-4-5', validation_failure: 'provider_unavailable' }] },
    ],
    ['invalid_content', 400, undefined],
  ] as const) {
    fx.failNext(new SvcError(code, { message: code, details }));
    const res = await fx.call('POST', path, body);
    assert.equal(res.status, status);
    const err = await errorOf(res);
    assert.equal(err.code, code);
    assert.deepEqual(err.details, details);
  }
  fx.failNext(new SvcError('turn_already_completed'));
  let res = await fx.call('POST', `${path}/T9/cancel`);
  assert.equal(res.status, 409);
  fx.failNext(new SvcError('turn_not_found'));
  res = await fx.call('POST', `${path}/T9/cancel`, { reason: 'stop' });
  assert.equal(res.status, 404);
  fx.failNext(new SvcError('confirmation_already_resolved', { details: { applied: false } }));
  res = await fx.call('POST', `${path}/T9/confirmations/R1`, { decision: 'allow' });
  assert.equal(res.status, 409);
  assert.deepEqual((await errorOf(res)).details, { applied: false });
  fx.failNext(new SvcError('confirmation_not_found'));
  res = await fx.call('POST', `${path}/T9/confirmations/R1`, { decision: 'deny' });
  assert.equal(res.status, 404);
});

test('cancel takes an optional body; confirmations default to scope once', async (t) => {
  const fx = await setup(t);
  const base = `/sessions/${fx.sessionId}/turns/T1`;
  let res = await fx.call('POST', `${base}/cancel`);
  assert.equal(res.status, 202);
  assert.deepEqual(await res.json(), { turn_id: 'T1', cancellation_initiated: true });
  res = await fx.call('POST', `${base}/cancel`, { reason: 'changed my mind' });
  assert.equal(res.status, 202);
  assert.deepEqual(fx.cancelled, [
    [fx.sessionId, 'T1', null],
    [fx.sessionId, 'T1', 'changed my mind'],
  ]);
  res = await fx.call('POST', `${base}/confirmations/R1`, { decision: 'allow' });
  assert.deepEqual(await res.json(), { request_id: 'R1', decision: 'allow', applied: true });
  res = await fx.call('POST', `${base}/confirmations/R2`, { decision: 'deny', scope: 'session' });
  assert.equal(res.status, 200);
  assert.deepEqual(
    fx.confirmed.map((c) => [c.requestId, c.decision, c.scope]),
    [
      ['R1', 'allow', 'once'],
      ['R2', 'deny', 'session'],
    ],
  );
  res = await fx.call('POST', `${base}/confirmations/R3`, { decision: 'maybe' });
  assert.equal((await errorOf(res)).details.field, 'decision');
  res = await fx.call('POST', `${base}/confirmations/R3`, { decision: 'allow', scope: 'forever' });
  assert.equal((await errorOf(res)).details.field, 'scope');
});

test('an unknown session is 404 and an ended one refuses turns, cancels and PATCH with 409', async (t) => {
  const fx = await setup(t);
  const body = { content: [{ type: 'text', text: 'x' }] };
  let res = await fx.call('POST', '/sessions/sess_nope/turns', body);
  assert.equal(res.status, 404);
  assert.equal((await errorOf(res)).code, 'session_not_found');
  await endSession(fx.store.kysely, fx.sessionId, '2026-01-01T00:00:00.000000Z');
  for (const [method, path, b] of [
    ['POST', `/sessions/${fx.sessionId}/turns`, body],
    ['POST', `/sessions/${fx.sessionId}/turns/T1/cancel`, {}],
    ['PATCH', `/sessions/${fx.sessionId}`, { active_model: 'fast' }],
  ] as const) {
    res = await fx.call(method, path, b);
    assert.equal(res.status, 409, path);
    assert.equal((await errorOf(res)).code, 'session_already_ended');
  }
  assert.equal(fx.submitted.length, 0);
});

test('PATCH resolves an alias to the canonical id before the engine sees it; unknown models are 400', async (t) => {
  const fx = await setup(t);
  let res = await fx.call('PATCH', `/sessions/${fx.sessionId}`, { active_model: 'opus' });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    id: fx.sessionId,
    active_model: 'anthropic:claude-opus-5-5',
    swap_queued: false,
  });
  res = await fx.call('PATCH', `/sessions/${fx.sessionId}`, { active_model: null });
  assert.equal(res.status, 200);
  res = await fx.call('PATCH', `/sessions/${fx.sessionId}`, { active_model: 'nope:model' });
  assert.equal(res.status, 400);
  assert.equal((await errorOf(res)).code, 'model_not_configured');
  res = await fx.call('PATCH', `/sessions/${fx.sessionId}`, {});
  assert.equal((await errorOf(res)).details.field, 'active_model');
});

test('without an engine the turn routes say 501 not_implemented', async (t) => {
  const fx = await createAgentAppFixture(t);
  const created = (await (await fx.call('POST', '/sessions', { workspace_path: fx.workspace })).json()) as {
    id: string;
  };
  const res = await fx.call('POST', `/sessions/${created.id}/turns`, {
    content: [{ type: 'text', text: 'x' }],
  });
  assert.equal(res.status, 501);
  assert.equal((await errorOf(res)).code, 'not_implemented');
});

/**
 * Agent turns through the real `svc serve` and the fake provider over HTTP: a scripted multi-call turn with
 * tools and confirmations, REST cancel, a confirmation race, delegation, PATCH during a turn, GET /models
 * availability after a provider refused a model, the provider key hidden from run_command, and recovery
 * from kill -9 mid-turn. Persisted events are read over REST and
 * SQL (streaming-only events travel on the WebSocket, not the store).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { type RunningFakeProvider, startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer, withStore } from '../helpers/agent-server.ts';
import { makeTempDir } from '../helpers/svc.ts';

let fake: RunningFakeProvider;
/**
 * The server of the tests that need no fresh process (each works in its own session); the kill -9 test
 * and the keyless server start their own. Stopped after the file, before the fake provider closes.
 */
let shared: AgentServer;
const cleanups: Array<() => unknown> = [];
before(async () => {
  fake = await startFakeProvider();
  // its temp folder holds the handoff file of a start killed before its new image read it (a process gone)
  const tmp = makeTempDir('svc-agent-tmp-');
  cleanups.push(tmp.cleanup);
  const gone = spawnSync(process.execPath, ['-e', '']).pid;
  mkdirSync(join(tmp.dir, `svc-env-${gone}-AbCdEf`), { mode: 0o700 });
  const leftover = { env: { ANTHROPIC_API_KEY: 'sk-ant-left-by-a-killed-start' } };
  writeFileSync(join(tmp.dir, `svc-env-${gone}-AbCdEf`, 'env.json'), JSON.stringify(leftover), {
    mode: 0o600,
  });
  shared = await startAgentServer(
    { after: (fn) => void cleanups.push(fn) },
    { env: { ...providerEnv(), TMPDIR: tmp.dir } },
  );
});
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
  await fake.close();
});

// keys of their own: the test checks no output shows them
const providerEnv = () => ({
  ...fakeProviderEnv(fake, ['anthropic', 'openai']),
  ANTHROPIC_API_KEY: 'sk-ant-secret-for-test',
  OPENAI_API_KEY: 'sk-openai-secret-for-test',
  SVC_AGENT_CONFIRMATION_TIMEOUT_MS: '20000',
});

const text = (t: string) => [{ type: 'text', text: t }];

async function newSession(server: AgentServer, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await server.api('POST', '/sessions', { workspace_path: server.workspace, ...extra });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

/** Polls the session's persisted events until `pred` holds; returns them all. */
async function eventsUntil(
  server: AgentServer,
  sessionId: string,
  pred: (events: Array<{ type: string; turn_id: string; payload: any }>) => boolean,
): Promise<Array<{ type: string; turn_id: string; payload: any; session_id: string }>> {
  for (let i = 0; i < 600; i++) {
    const res = await server.api('GET', `/sessions/${sessionId}/events?limit=1000`);
    assert.equal(res.status, 200);
    if (pred(res.body.events)) return res.body.events;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('events never matched');
}

const ended = (turnId: string) => (evs: Array<{ type: string; turn_id: string }>) =>
  evs.some((e) => e.turn_id === turnId && (e.type === 'turn.completed' || e.type === 'turn.cancelled'));

/** Each closing event's parent, and the payload field that ties the two together. */
const PARENT_OF: Record<string, [parent: string, key: string]> = {
  'tool.confirmation_requested': ['tool.called', 'tool_use_id'],
  'tool.confirmation_resolved': ['tool.confirmation_requested', 'request_id'],
  'tool.completed': ['tool.called', 'tool_use_id'],
  'tool.failed': ['tool.called', 'tool_use_id'],
  'delegate.completed': ['delegate.started', 'tool_use_id'],
  'delegate.failed': ['delegate.started', 'tool_use_id'],
  'turn.completed': ['turn.started', ''],
  'turn.cancelled': ['turn.started', ''],
};

/** A turn's ends, answers and confirmations point at the event they close (parent_event_id), as recovery's do. */
function assertParentLinks(events: Array<Record<string, any>>, turnId: string): void {
  const mine = events.filter((e) => e.turn_id === turnId);
  const byId = new Map(mine.map((e) => [e.id, e]));
  let linked = 0;
  for (const e of mine) {
    const expected = PARENT_OF[e.type];
    if (!expected) continue;
    const parent = byId.get(e.parent_event_id);
    assert.equal(parent?.type, expected[0], `${e.type}'s parent_event_id ${e.parent_event_id}`);
    if (expected[1]) assert.equal(parent.payload[expected[1]], e.payload[expected[1]], e.type);
    linked++;
  }
  assert.ok(linked > 0);
}

async function allowNext(
  server: AgentServer,
  sid: string,
  turnId: string,
  seen: Set<string>,
  scope = 'once',
) {
  const evs = await eventsUntil(server, sid, (all) =>
    all.some((e) => e.type === 'tool.confirmation_requested' && !seen.has(e.payload.request_id)),
  );
  const asked = evs.find((e) => e.type === 'tool.confirmation_requested' && !seen.has(e.payload.request_id))!;
  seen.add(asked.payload.request_id);
  const res = await server.api(
    'POST',
    `/sessions/${sid}/turns/${turnId}/confirmations/${asked.payload.request_id}`,
    { decision: 'allow', scope },
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.applied, true);
}

test('a scripted multi-call turn over REST: tools run in the workspace, events, messages, tool calls and costs', async () => {
  const server = shared;
  writeFileSync(join(server.workspace, 'app.txt'), 'version=1\n');
  writeFileSync(join(server.workspace, 'AGENTS.md'), 'Always answer in haiku.\n');
  const sid = await newSession(server);
  fake.script([
    {
      text: 'Reading.',
      toolUses: [{ name: 'read_file', input: { path: 'app.txt' } }],
      usage: { input: 100, output: 10 },
    },
    { toolUses: [{ name: 'search_files', input: { pattern: 'version=\\d' } }] },
    { toolUses: [{ name: 'list_files', input: { recursive: true } }] },
    {
      toolUses: [
        { name: 'edit_file', input: { path: 'app.txt', old_string: 'version=1', new_string: 'version=2' } },
      ],
    },
    { toolUses: [{ name: 'write_file', input: { path: 'notes/done.md', content: 'done\n' } }] },
    // the command's own environment, and the one the server was started with (its parent's, which a process
    // of the same user reads)
    {
      toolUses: [
        {
          name: 'run_command',
          input: {
            command:
              "cat app.txt; env; cat \"$TMPDIR\"/svc-env-*/env.json; tr '\\0' '\\n' < /proc/$PPID/environ",
          },
        },
      ],
    },
    { text: 'Bumped the version.', usage: { input: 300, output: 20 } },
  ]);
  const sub = await server.api('POST', `/sessions/${sid}/turns`, { content: text('bump the version') });
  assert.equal(sub.status, 202, JSON.stringify(sub.body));
  assert.match(sub.body.turn_id, /^[0-9A-Z]{26}$/);
  assert.equal(sub.body.session_id, sid);
  const busy = await server.api('GET', `/sessions/${sid}`);
  assert.equal(busy.body.current_turn_id, sub.body.turn_id);
  assert.equal(busy.body.current_turn_status, 'in_flight');
  const again = await server.api('POST', `/sessions/${sid}/turns`, { content: text('and again') });
  assert.equal(again.status, 409);
  assert.equal(again.body.error.code, 'turn_in_flight');

  const seen = new Set<string>();
  for (const scope of ['once', 'once', 'once']) await allowNext(server, sid, sub.body.turn_id, seen, scope);
  const events = await eventsUntil(server, sid, ended(sub.body.turn_id));
  const types = events.filter((e) => e.turn_id === sub.body.turn_id).map((e) => e.type);
  assert.deepEqual(types.slice(0, 6), [
    'turn.started',
    'route.decided',
    'llm.call_started',
    'llm.call_completed',
    'tool.called',
    'tool.completed',
  ]);
  assert.equal(types.at(-1), 'turn.completed');
  assert.equal(types.filter((x) => x === 'llm.call_completed').length, 7);
  assert.equal(types.filter((x) => x === 'tool.completed').length, 6);
  assertParentLinks(events, sub.body.turn_id);
  assert.equal(readFileSync(join(server.workspace, 'app.txt'), 'utf8'), 'version=2\n');
  assert.equal(readFileSync(join(server.workspace, 'notes/done.md'), 'utf8'), 'done\n');

  // the model saw AGENTS.md in its system prompt and every tool result; run_command never saw the key, in
  // its environment, the server's or a killed start's leftover handoff file (removed at the start)
  const first = fake.requests.find((r) => r.path.startsWith('/v1/messages'))!;
  assert.match(JSON.stringify(first.body), /Always answer in haiku/);
  const out = withStore(server.db, (db) =>
    db
      .prepare(`SELECT output FROM tool_calls WHERE tool_name = 'run_command' AND turn_id = ?`)
      .get(sub.body.turn_id),
  ) as { output: string };
  assert.match(out.output, /version=2/);
  assert.doesNotMatch(
    out.output,
    /sk-ant-secret-for-test|sk-openai-secret-for-test|ANTHROPIC_API_KEY|sk-ant-left/,
  );

  const session = (await server.api('GET', `/sessions/${sid}`)).body;
  assert.equal(session.turn_count, 1);
  assert.equal(session.current_turn_id, null);
  const costs = withStore(server.db, (db) =>
    db
      .prepare(`SELECT cost_usd FROM events WHERE type = 'llm.call_completed' AND session_id = ?`)
      .all(sid)
      .map((r) => Number((r as { cost_usd: string }).cost_usd)),
  );
  assert.ok(Math.abs(session.cost_so_far_usd - costs.reduce((a, b) => a + b, 0)) < 1e-9);
  const msgs = (await server.api('GET', `/sessions/${sid}/messages?limit=200`)).body.messages;
  assert.equal(msgs[0].role, 'user');
  assert.deepEqual(msgs[0].content, text('bump the version'));
  assert.equal(msgs.at(-1).role, 'assistant');
  assert.equal(msgs.at(-1).content.at(-1).text, 'Bumped the version.');
  const calls = withStore(server.db, (db) =>
    db
      .prepare('SELECT tool_name, status FROM tool_calls WHERE turn_id = ? ORDER BY id')
      .all(sub.body.turn_id),
  );
  assert.deepEqual(
    calls.map((c) => (c as { tool_name: string }).tool_name),
    ['read_file', 'search_files', 'list_files', 'edit_file', 'write_file', 'run_command'],
  );
  assert.ok(calls.every((c) => (c as { status: string }).status === 'completed'));
  // agent calls carry no gateway attribution and their session
  const call = withStore(server.db, (db) =>
    db
      .prepare(`SELECT actor, payload FROM events WHERE type = 'llm.call_completed' AND turn_id = ? LIMIT 1`)
      .get(sub.body.turn_id),
  ) as { actor: string; payload: string };
  assert.equal(call.actor, 'agent');
  const payload = JSON.parse(call.payload);
  assert.equal(payload.gateway_key_id, null);
  assert.equal(payload.inbound_shape, null);
});

test('a large write_file: the file and the message hold the whole content, the events and the tool_calls row a 64 KiB preview', async () => {
  const server = shared;
  const sid = await newSession(server);
  const content = `${'a'.repeat(64 * 1024 - 1)}\u{1F600}${'b'.repeat(200_000)}`; // an emoji across the cut
  fake.script([{ toolUses: [{ name: 'write_file', input: { path: 'big.txt', content } }] }, { text: 'ok' }]);
  const sub = await server.api('POST', `/sessions/${sid}/turns`, { content: text('write it') });
  await allowNext(server, sid, sub.body.turn_id, new Set());
  await eventsUntil(server, sid, ended(sub.body.turn_id));
  assert.equal(readFileSync(join(server.workspace, 'big.txt'), 'utf8'), content);
  const msgs = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  assert.equal(msgs[1].content.find((b: { type: string }) => b.type === 'tool_use').input.content, content);
  // before: tool.called, tool.confirmation_requested and the row each held the 264 KB content again
  const [called, asked] = ['tool.called', 'tool.confirmation_requested'].map((type) =>
    withStore(server.db, (db) =>
      JSON.parse(
        (
          db
            .prepare('SELECT payload FROM events WHERE type = ? AND turn_id = ?')
            .get(type, sub.body.turn_id) as {
            payload: string;
          }
        ).payload,
      ),
    ),
  );
  for (const p of [called, asked]) {
    assert.deepEqual(p.input_truncated, { content: content.length });
    assert.equal(p.input.path, 'big.txt');
    assert.equal(
      p.input.content,
      `${'a'.repeat(64 * 1024 - 1)}… [cut here: ${content.length} characters in all]`,
    );
  }
  const row = withStore(server.db, (db) =>
    db.prepare('SELECT input FROM tool_calls WHERE turn_id = ?').get(sub.body.turn_id),
  ) as { input: string };
  assert.deepEqual(JSON.parse(row.input), called.input);
});

test('REST cancel, a confirmation race, PATCH queued to the turn boundary, and routing_failed without keys', async (t) => {
  const server = shared;
  const sid = await newSession(server);
  fake.script([
    { toolUses: [{ name: 'write_file', input: { path: 'x.txt', content: 'x' } }] },
    { text: 'ok' },
  ]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('write x') })).body;
  const evs = await eventsUntil(server, sid, (all) =>
    all.some((e) => e.type === 'tool.confirmation_requested'),
  );
  const rid = evs.find((e) => e.type === 'tool.confirmation_requested')!.payload.request_id;
  const patch = await server.api('PATCH', `/sessions/${sid}`, { active_model: 'fast' });
  assert.equal(patch.status, 200);
  assert.equal(patch.body.swap_queued, true);
  assert.equal(patch.body.swap_queued_until_turn, turn.turn_id);
  const path = `/sessions/${sid}/turns/${turn.turn_id}/confirmations/${rid}`;
  // scope null is the default (once), as a client that writes every optional field sends it
  const [a, b] = await Promise.all([
    server.api('POST', path, { decision: 'allow', scope: null }),
    server.api('POST', path, { decision: 'deny' }),
  ]);
  assert.deepEqual([a.status, b.status].sort(), [200, 409]);
  const loser = a.status === 409 ? a : b;
  assert.equal(loser.body.error.code, 'confirmation_already_resolved');
  assert.equal(loser.body.error.details.applied, false);
  assertParentLinks(await eventsUntil(server, sid, ended(turn.turn_id)), turn.turn_id);
  assert.equal((await server.api('GET', `/sessions/${sid}`)).body.active_model, 'anthropic:claude-haiku-4-5');
  const late = await server.api('POST', `/sessions/${sid}/turns/${turn.turn_id}/cancel`, {});
  assert.equal(late.status, 409);
  assert.equal(late.body.error.code, 'turn_already_completed');

  fake.script([{ text: Array.from({ length: 60 }, (_, i) => `w${i}`).join(' '), dripMs: 50 }]);
  const slow = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('talk') })).body;
  await eventsUntil(server, sid, (all) =>
    all.some((e) => e.turn_id === slow.turn_id && e.type === 'llm.call_started'),
  );
  // clearing the pinned choice mid-turn answers the model the boundary will apply (the routed default)
  const cleared = await server.api('PATCH', `/sessions/${sid}`, { active_model: null });
  assert.equal(cleared.body.swap_queued, true, JSON.stringify(cleared.body));
  assert.notEqual(cleared.body.active_model, 'anthropic:claude-haiku-4-5');
  const cancel = await server.api('POST', `/sessions/${sid}/turns/${slow.turn_id}/cancel`, {
    reason: 'stop',
  });
  assert.equal(cancel.status, 202);
  assert.deepEqual(cancel.body, { turn_id: slow.turn_id, cancellation_initiated: true });
  const all = await eventsUntil(server, sid, ended(slow.turn_id));
  assert.equal((await server.api('GET', `/sessions/${sid}`)).body.active_model, cleared.body.active_model);
  assertParentLinks(all, slow.turn_id);
  const tail = all.filter((e) => e.turn_id === slow.turn_id).map((e) => e.type);
  assert.deepEqual(tail.slice(-2), ['llm.call_failed', 'turn.cancelled']);
  assert.equal(
    all.find((e) => e.type === 'turn.cancelled' && e.turn_id === slow.turn_id)!.payload.reason,
    'stop',
  );
  const msgs = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  assert.equal(msgs.at(-1).status, 'cancelled');

  const keyless = await startAgentServer(t);
  const ksid = await newSession(keyless);
  const refused = await keyless.api('POST', `/sessions/${ksid}/turns`, { content: text('hi') });
  assert.equal(refused.status, 503);
  assert.equal(refused.body.error.code, 'routing_failed');
  assert.ok(Array.isArray(refused.body.error.details.tried));
  assert.equal((await keyless.api('GET', `/sessions/${ksid}`)).body.current_turn_id, null);
  // the turn that routed nowhere ends like any failed turn: the same turn.completed fields, model null
  const keylessEvents = await eventsUntil(keyless, ksid, (all) =>
    all.some((e) => e.type === 'turn.completed'),
  );
  const refusedEnd = keylessEvents.find((e) => e.type === 'turn.completed')!;
  // the 503 names the turn it refused, so a client can tie that turn.completed to its submission
  assert.equal(refused.body.error.details.turn_id, refusedEnd.turn_id);
  assert.deepEqual(refusedEnd.payload, {
    status: 'failed',
    stop_reason: null,
    error_code: 'routing_failed',
    error_class: null,
    cost_usd: '0.000000',
    model: null,
    steps: 0,
  });
});

test('DELETE racing a turn submission: the turn is refused session_already_ended or cancelled, never run on', async () => {
  const server = shared;
  for (let i = 0; i < 8; i++) {
    const sid = await newSession(server);
    const [turn, del] = await Promise.all([
      server.api('POST', `/sessions/${sid}/turns`, {
        content: text('go [[fake:drip=20;text=a b c d e f g h i j]]'),
      }),
      server.api('DELETE', `/sessions/${sid}`),
    ]);
    assert.equal(del.status, 200);
    if (turn.status === 409) {
      assert.equal(turn.body.error.code, 'session_already_ended');
      continue;
    }
    assert.equal(turn.status, 202, JSON.stringify(turn.body));
    const end = (await eventsUntil(server, sid, ended(turn.body.turn_id))).find(
      (e) => e.turn_id === turn.body.turn_id && e.type.startsWith('turn.') && e.type !== 'turn.started',
    )!;
    // a turn that claimed the session just before the DELETE ended it is cancelled, not run to its end
    assert.deepEqual([end.type, end.payload.reason], ['turn.cancelled', 'session_ended']);
  }
});

test('delegation over REST: the worker session is listed with its parent, and its cost is the planner’s', async () => {
  const server = shared;
  const sid = await newSession(server);
  fake.script([
    { toolUses: [{ name: 'delegate', input: { task: 'count the files', model: 'haiku' } }] },
    { text: 'two files', usage: { input: 40, output: 4 } },
    { text: 'the worker says two files' },
  ]);
  const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text('delegate') })).body;
  const events = await eventsUntil(server, sid, ended(turn.turn_id));
  const started = events.find((e) => e.type === 'delegate.started')!;
  const done = events.find((e) => e.type === 'delegate.completed')!;
  assert.equal(done.payload.result, 'two files');
  assertParentLinks(events, turn.turn_id);
  const workers = (await server.api('GET', '/sessions?is_worker=true')).body.sessions;
  const worker = workers.find((w: { id: string }) => w.id === started.payload.worker_session_id);
  assert.equal(worker.parent_session_id, sid);
  assert.equal(worker.is_worker, true);
  const planner = (await server.api('GET', `/sessions/${sid}`)).body;
  const all = withStore(server.db, (db) =>
    db
      .prepare(
        `SELECT cost_usd FROM events WHERE type = 'llm.call_completed' AND (session_id = ? OR session_id = ?)`,
      )
      .all(sid, worker.id)
      .map((r) => Number((r as { cost_usd: string }).cost_usd)),
  );
  assert.ok(Math.abs(planner.cost_so_far_usd - all.reduce((a, b) => a + b, 0)) < 1e-9);
});

test('GET /models: a model its provider says it does not have is model_unavailable until a call to it is answered', async () => {
  const server = shared;
  const availability = async () =>
    new Map<string, string>(
      (await server.api('GET', '/models')).body.models.map((m: any) => [m.id, m.availability]),
    );
  const turnOn = async (model: string, words: string) => {
    const sid = await newSession(server, { initial_active_model: model });
    const turn = (await server.api('POST', `/sessions/${sid}/turns`, { content: text(words) })).body;
    return (await eventsUntil(server, sid, ended(turn.turn_id))).filter((e) => e.turn_id === turn.turn_id);
  };
  const opus = 'anthropic:claude-opus-4-1';
  const mini = 'openai:gpt-4.1-mini';
  assert.equal((await availability()).get(opus), 'healthy');
  // the APIs' answers for a model they do not have: Anthropic's 404 not_found_error 'model: …', OpenAI's
  // 404 model_not_found
  for (const model of [opus, mini]) {
    const failed = (await turnOn(model, '[[fake:error=404]] hello')).find(
      (e) => e.type === 'llm.call_failed',
    );
    assert.equal(failed?.payload.status, 404, model);
  }
  let seen = await availability();
  assert.equal(seen.get(opus), 'model_unavailable');
  assert.equal(seen.get(mini), 'model_unavailable');
  assert.equal(seen.get('anthropic:claude-sonnet-4-5'), 'healthy');
  // another refusal (a 400 on the request) says nothing about the model; an answered call makes it healthy
  await turnOn(mini, '[[fake:error=400]] hello');
  await turnOn(opus, 'hello again');
  // a gateway on the same store wrote OpenAI's refusal of gpt-5 (its row, as `svc gateway` stamps it)
  withStore(server.db, (db) =>
    db
      .prepare(
        `INSERT INTO events (id, timestamp, timestamp_us, session_id, turn_id, type, actor, payload, parent_event_id, sensitivity)
         VALUES ('01KZZZZZZZZZZZZZZZZZZZZZZY', ?, ?, NULL, 'gwturn', 'llm.call_failed', 'gateway', ?, NULL, 'pseudonymous')`,
      )
      .run(
        new Date().toISOString(),
        Date.now() * 1000,
        JSON.stringify({
          model: 'openai:gpt-5',
          provider: 'openai',
          gateway_key_id: 'gk_01KZZZZZZZZZZZZZZZZZZZZZZZ',
          error_class: 'invalid_request',
          message: 'The model `gpt-5` does not exist or you do not have access to it.',
          status: 404,
          upstream_type: 'model_not_found',
        }),
      ),
  );
  seen = await availability();
  assert.equal(seen.get(opus), 'healthy');
  assert.equal(seen.get(mini), 'model_unavailable');
  assert.equal(seen.get('openai:gpt-5'), 'model_unavailable');
});

test('kill -9 mid-turn: the restart detects the gap, cancels the turn with server_restart, and a new turn works', async (t) => {
  const first = await startAgentServer(t, { env: providerEnv() });
  const sid = await newSession(first);
  fake.script([{ hang: true }]);
  const calls = fake.requests.length;
  const turn = (await first.api('POST', `/sessions/${sid}/turns`, { content: text('hang') })).body;
  await eventsUntil(first, sid, (all) => all.some((e) => e.type === 'llm.call_started'));
  // llm.call_started is stored as the call begins: the hang step must be taken before the kill, or the
  // next turn would take it
  for (let i = 0; i < 400 && fake.requests.length === calls; i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(fake.requests.length > calls, 'the call reached the provider');
  await first.svc.stop('SIGKILL');
  const second = await startAgentServer(t, { env: providerEnv(), home: first.home });
  const evs = await eventsUntil(second, sid, ended(turn.turn_id));
  const mine = evs.filter((e) => e.turn_id === turn.turn_id).map((e) => e.type);
  assert.ok(mine.includes('bus.gap_detected'));
  assert.equal(evs.find((e) => e.type === 'turn.cancelled')!.payload.reason, 'server_restart');
  fake.script([{ text: 'back' }]);
  const next = await second.api('POST', `/sessions/${sid}/turns`, { content: text('again') });
  assert.equal(next.status, 202, JSON.stringify(next.body));
  await eventsUntil(second, sid, ended(next.body.turn_id));
});

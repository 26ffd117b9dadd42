import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startAgentServer, withStore } from '../helpers/agent-server.ts';

const server = await startAgentServer({ after });
const { api } = server;
const ULID = '[0-9A-HJKMNP-TV-Z]{26}';
const TIME_US = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

async function newSession(workspace = server.workspace, extra: Record<string, unknown> = {}) {
  const res = await api('POST', '/sessions', { workspace_path: workspace, ...extra });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string; active_model: string; created_at: string; routing_policy_version: string };
}

test('POST /sessions answers 201 with a sess_ ULID, the default model and the policy SHA-256', async () => {
  const res = await api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(res.status, 201);
  assert.deepEqual(Object.keys(res.body).sort(), [
    'active_model',
    'created_at',
    'id',
    'routing_policy_version',
    'workspace_path',
  ]);
  assert.match(res.body.id, new RegExp(`^sess_${ULID}$`));
  assert.equal(res.body.workspace_path, server.workspace);
  assert.equal(res.body.active_model, 'anthropic:claude-sonnet-4-5');
  assert.match(res.body.created_at, TIME_US);
  const policy = await api('GET', '/routing/policy');
  assert.match(res.body.routing_policy_version, /^[0-9a-f]{64}$/);
  assert.equal(res.body.routing_policy_version, policy.body.version);
  assert.equal(res.headers.get('svc-api-version'), '1.0');
  const row = withStore(server.db, (db) =>
    db
      .prepare('SELECT sticky, turn_count, cost_so_far_usd, is_worker FROM sessions WHERE id = ?')
      .get(res.body.id),
  );
  assert.deepEqual({ ...row }, { sticky: 0, turn_count: 0, cost_so_far_usd: '0', is_worker: 0 });
});

test('initial_active_model takes an id, alias or tier and pins it; an unknown one is 400 model_not_configured', async () => {
  const byAlias = await newSession(server.workspace, { initial_active_model: 'opus' });
  assert.equal(byAlias.active_model, 'anthropic:claude-opus-5-5');
  const byId = await newSession(server.workspace, { initial_active_model: 'openai:gpt-5-mini' });
  assert.equal(byId.active_model, 'openai:gpt-5-mini');
  const sticky = withStore(server.db, (db) =>
    db.prepare('SELECT sticky FROM sessions WHERE id = ?').get(byId.id),
  );
  assert.equal(sticky?.sticky, 1);
  const bad = await api('POST', '/sessions', {
    workspace_path: server.workspace,
    initial_active_model: 'gpt-99',
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'model_not_configured');
  assert.match(bad.body.error.message, /gpt-99/);
});

test('a workspace that is missing, a file or a relative path is 400 workspace_not_found; a malformed body names the field', async () => {
  const file = join(server.home, 'not-a-dir.txt');
  writeFileSync(file, 'x');
  for (const path of [join(server.home, 'missing'), file, 'relative/dir']) {
    const res = await api('POST', '/sessions', { workspace_path: path });
    assert.equal(res.status, 400, path);
    assert.equal(res.body.error.code, 'workspace_not_found');
    assert.equal(res.body.error.details.field, 'workspace_path');
  }
  for (const [body, field] of [
    [{}, 'workspace_path'],
    [{ workspace_path: 42 }, 'workspace_path'],
    [{ workspace_path: server.workspace, initial_active_model: 7 }, 'initial_active_model'],
    ['"a string"', 'body'],
  ] as const) {
    const res = await api('POST', '/sessions', body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, 'validation_error');
    assert.equal(res.body.error.details.field, field);
    assert.match(res.body.error.message, new RegExp(`^${field}`));
  }
});

test('GET /sessions lists most recent first, filters by workspace and worker flag, and pages with next_cursor', async () => {
  const ws = join(server.home, 'paging');
  mkdirSync(ws);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await newSession(ws)).id);
  withStore(server.db, (db) =>
    db
      .prepare(
        `INSERT INTO sessions (id, workspace_path, active_model, created_at, updated_at, routing_policy_version, is_worker, parent_session_id)
         SELECT 'sess_WORKER' || id, workspace_path, active_model, created_at, updated_at, routing_policy_version, 1, id FROM sessions WHERE id = ?`,
      )
      .run(ids[0]),
  );
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const q: string = `/sessions?workspace=${encodeURIComponent(ws)}&is_worker=false&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await api('GET', q);
    assert.equal(res.status, 200);
    assert.ok(res.body.sessions.length <= 2);
    seen.push(...res.body.sessions.map((s: { id: string }) => s.id));
    cursor = res.body.next_cursor;
    pages++;
  } while (cursor);
  assert.deepEqual(seen, [...ids].reverse());
  assert.equal(pages, 3);
  const workers = await api('GET', `/sessions?workspace=${encodeURIComponent(ws)}&is_worker=true`);
  assert.deepEqual(
    workers.body.sessions.map((s: { id: string; is_worker: boolean; parent_session_id: string }) => [
      s.id,
      s.is_worker,
      s.parent_session_id,
    ]),
    [[`sess_WORKER${ids[0]}`, true, ids[0]]],
  );
  const summary = (await api('GET', `/sessions?workspace=${encodeURIComponent(ws)}&limit=1`)).body
    .sessions[0];
  assert.deepEqual(Object.keys(summary).sort(), [
    'active_model',
    'cost_so_far_usd',
    'created_at',
    'ended_at',
    'id',
    'is_worker',
    'parent_session_id',
    'turn_count',
    'updated_at',
    'workspace_path',
  ]);
  assert.equal(summary.cost_so_far_usd, 0);
  const all = await api('GET', '/sessions');
  assert.ok(all.body.sessions.length >= 6 && all.body.sessions.length <= 50);
});

test('GET /sessions refuses a bad limit, worker flag, cursor or relative workspace with validation_error naming it', async () => {
  for (const [query, field] of [
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=ten', 'limit'],
    ['is_worker=yes', 'is_worker'],
    ['cursor=not-a-cursor', 'cursor'],
    ['workspace=workspace', 'workspace'],
  ]) {
    const res = await api('GET', `/sessions?${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.code, 'validation_error');
    assert.equal(res.body.error.details.field, field);
  }
  assert.equal((await api('GET', '/sessions?limit=200')).status, 200);
});

test('GET /sessions/{id} issues a fresh attach token and the ws_url each time; unknown ids are 404', async () => {
  const { id } = await newSession();
  const a = await api('GET', `/sessions/${id}`);
  const b = await api('GET', `/sessions/${id}`);
  assert.equal(a.status, 200);
  for (const key of [
    'id',
    'workspace_path',
    'active_model',
    'routing_policy_version',
    'cost_so_far_usd',
    'turn_count',
    'current_turn_id',
    'current_turn_status',
    'attach_token',
    'ws_url',
  ])
    assert.ok(key in a.body, key);
  assert.match(a.body.attach_token, new RegExp(`^atk_${ULID}$`));
  assert.notEqual(a.body.attach_token, b.body.attach_token);
  assert.equal(
    a.body.ws_url,
    `ws://127.0.0.1:${server.svc.port}/sessions/${id}/stream?attach=${a.body.attach_token}`,
  );
  assert.equal(a.body.current_turn_id, null);
  assert.equal(a.body.current_turn_status, null);
  const missing = await api('GET', '/sessions/sess_01ARZ3NDEKTSV4RRFFQ69G5FAV');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'session_not_found');
});

test('DELETE ends a session once: later turns, cancels and PATCH are 409 session_already_ended', async () => {
  const { id } = await newSession();
  const del = await api('DELETE', `/sessions/${id}`);
  assert.equal(del.status, 200);
  assert.deepEqual(Object.keys(del.body).sort(), ['ended_at', 'id']);
  assert.match(del.body.ended_at, TIME_US);
  const again = await api('DELETE', `/sessions/${id}`);
  assert.deepEqual(again.body, del.body);
  for (const [method, path, body] of [
    ['POST', `/sessions/${id}/turns`, { content: [{ type: 'text', text: 'hi' }] }],
    ['POST', `/sessions/${id}/turns/01ARZ3NDEKTSV4RRFFQ69G5FAV/cancel`, {}],
    ['PATCH', `/sessions/${id}`, { active_model: 'fast' }],
  ] as const) {
    const res = await api(method, path, body);
    assert.equal(res.status, 409, path);
    assert.equal(res.body.error.code, 'session_already_ended');
  }
  const row = withStore(server.db, (db) =>
    db.prepare('SELECT ended_at, disposition FROM sessions WHERE id = ?').get(id),
  );
  assert.deepEqual({ ...row }, { ended_at: del.body.ended_at, disposition: 'completed' });
  assert.equal((await api('GET', `/sessions/${id}`)).body.ended_at, del.body.ended_at);
  assert.equal((await api('DELETE', '/sessions/sess_nope')).status, 404);
  const bad = await api('DELETE', `/sessions/${id}?purge=yes`);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.details.field, 'purge');
});

test('DELETE ?purge=true removes the session, its workers, their messages, tool calls and events only', async () => {
  const keep = await newSession();
  const gone = await newSession();
  const worker = `sess_W${gone.id.slice(5)}`;
  withStore(server.db, (db) => {
    db.prepare(
      `INSERT INTO sessions (id, workspace_path, active_model, created_at, updated_at, routing_policy_version, is_worker, parent_session_id)
       VALUES (?, ?, 'anthropic:claude-sonnet-4-5', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', 'v', 1, ?)`,
    ).run(worker, server.workspace, gone.id);
    let n = 0;
    for (const sid of [keep.id, gone.id, worker]) {
      n++;
      db.prepare(
        `INSERT INTO messages (id, session_id, turn_id, role, content, created_at) VALUES (?, ?, 'T${n}', 'user', '[{"type":"text","text":"x"}]', '2026-01-01T00:00:00.000000Z')`,
      ).run(`01PURGEMSG${n}`, sid);
      db.prepare(
        `INSERT INTO tool_calls (id, session_id, turn_id, tool_use_id, tool_name, input, status, started_at) VALUES (?, ?, 'T${n}', 'toolu', 'read_file', '{}', 'completed', '2026-01-01T00:00:00.000000Z')`,
      ).run(`01PURGETOOL${n}`, sid);
      db.prepare(
        `INSERT INTO events (id, timestamp, timestamp_us, session_id, turn_id, type, actor, payload, sensitivity) VALUES (?, '2026-01-01T00:00:00.000000Z', 0, ?, 'T${n}', 'turn.completed', 'agent', '{}', 'public')`,
      ).run(`01PURGEEVT${n}`, sid);
    }
  });
  const res = await api('DELETE', `/sessions/${gone.id}?purge=true`);
  assert.equal(res.status, 200);
  assert.equal(res.body.id, gone.id);
  assert.match(res.body.ended_at, TIME_US);
  const counts = withStore(server.db, (db) =>
    ['sessions', 'messages', 'tool_calls', 'events'].map((table) => {
      const r = db
        .prepare(
          `SELECT count(*) AS n FROM ${table} WHERE ${table === 'sessions' ? 'id' : 'session_id'} IN (?, ?, ?)`,
        )
        .get(keep.id, gone.id, worker) as { n: number };
      return r.n;
    }),
  );
  assert.deepEqual(counts, [1, 1, 1, 1]);
  assert.equal((await api('GET', `/sessions/${gone.id}`)).status, 404);
  assert.equal((await api('GET', `/sessions/${worker}`)).status, 404);
  assert.equal((await api('GET', `/sessions/${keep.id}/messages`)).body.messages.length, 1);
});

test('PATCH validates its body and model before the turn machinery sees it', async () => {
  const { id } = await newSession();
  let res = await api('PATCH', `/sessions/${id}`, { active_model: 'no-such-model' });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'model_not_configured');
  res = await api('PATCH', `/sessions/${id}`, { model: 'fast' });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'validation_error');
  assert.equal(res.body.error.details.field, 'active_model');
  res = await api('PATCH', '/sessions/sess_nope', { active_model: 'fast' });
  assert.equal(res.status, 404);
});

/**
 * `svc serve` on PostgreSQL while the database is away (README REST API: 503 `store_unavailable`): every
 * REST call that needs the store (create, list, read a session, post a turn, analytics) and the WebSocket
 * handshake are refused with 503 `store_unavailable`, `retry-after` and `x-should-retry: true` in the
 * agent server's error body, instead of 500 internal_error; the refused calls leave nothing behind (no
 * session, no half turn). A turn accepted before the outage, whose tool ends while the store is away,
 * waits for the store and ends once it is back with all its messages and exactly one closing event,
 * instead of failing half-written, never closing and holding its session (409 turn_in_flight) until a
 * restart. The outage is a TCP relay between the server and PostgreSQL; the tool is a command reading a
 * FIFO, held until the outage began.
 * One svc serve per database (README §PostgreSQL store): a second one is refused before its start-up
 * recovery could cancel the first's running turn as server_restart; a first one killed with -9 frees it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { useTestPostgres } from '../helpers/postgres.ts';
import { freePort, runSvc } from '../helpers/svc.ts';
import { startTcpRelay } from '../helpers/tcp-relay.ts';
import { attach, refusal } from '../helpers/ws-client.ts';

const postgres = useTestPostgres();

const text = (t: string) => [{ type: 'text', text: t }];

test('503 store_unavailable while PostgreSQL is away; a turn accepted before it ends once, after it', {
  timeout: 90_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const fake = await startFakeProvider();
  t.after(() => fake.close());
  const direct = new URL(await postgres.createDatabase());
  const relay = await startTcpRelay(direct.hostname, Number(direct.port));
  const viaRelay = new URL(direct);
  viaRelay.port = String(relay.port);
  // the URL, password included, as a flag: the command below reads the server's command line
  const server = await startAgentServer(t, {
    env: fakeProviderEnv(fake, ['anthropic']),
    args: ['--database-url', viaRelay.toString()],
  });
  t.after(() => relay.down()); // after the server's stop (cleanups run in order): its flush needs the store
  const fifo = join(server.workspace, 'gate.fifo');
  execFileSync('mkfifo', [fifo]);
  const newSession = async () => {
    const r = await server.api('POST', '/sessions', { workspace_path: server.workspace });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  };
  const running = await newSession();
  const idle = await newSession();
  const stream = await attach(server, running);
  t.after(() => stream.close());
  stream.send({ type: 'subscribe', filter: 'preset:full', since: null, snapshot: false });
  await stream.next((f) => f.type === 'subscribe_ack');
  const idleWsUrl = (await server.api('GET', `/sessions/${idle}`)).body.ws_url as string;

  fake.script([
    // the server's command line and start environment: what another process of its user can read
    {
      toolUses: [
        {
          name: 'run_command',
          input: {
            command:
              "cat gate.fifo; tr '\\0' '\\n' < /proc/$PPID/cmdline; tr '\\0' '\\n' < /proc/$PPID/environ",
          },
        },
      ],
    },
    { text: 'Done.' },
  ]);
  const accepted = await server.api('POST', `/sessions/${running}/turns`, { content: text('hello') });
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  const turnId = accepted.body.turn_id as string;
  const asked = await stream.next(
    (f) => f.type === 'event' && f.event.type === 'tool.confirmation_requested',
  );
  const allowed = await server.api(
    'POST',
    `/sessions/${running}/turns/${turnId}/confirmations/${asked.event.payload.request_id}`,
    { decision: 'allow' },
  );
  assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
  await stream.next((f) => f.type === 'event' && f.event.type === 'tool.called'); // the command waits on the FIFO

  relay.down(); // PostgreSQL restarting: every connection cut, new ones refused
  const calls: Array<[string, string, unknown?]> = [
    ['POST', '/sessions', { workspace_path: server.workspace }],
    ['GET', '/sessions'],
    ['GET', `/sessions/${idle}`],
    ['POST', `/sessions/${idle}/turns`, { content: text('refused') }],
    ['PATCH', `/sessions/${idle}`, { active_model: null }],
    ['GET', `/sessions/${idle}/messages`],
    ['GET', '/analytics/sessions'],
    ['GET', '/analytics/user/u1/export'],
    ['POST', '/analytics/user/u1/forget'],
  ];
  for (const [method, path, body] of calls) {
    const r = await server.api(method, path, body);
    const what = `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`;
    assert.equal(r.status, 503, what);
    assert.equal(r.body.error.code, 'store_unavailable', what);
    assert.equal(typeof r.body.error.message, 'string', what);
    assert.equal(r.headers.get('retry-after'), '1', what);
    assert.equal(r.headers.get('x-should-retry'), 'true', what);
  }
  const handshake = await refusal(idleWsUrl);
  assert.equal(handshake.status, 503, JSON.stringify(handshake.body));
  assert.equal(handshake.body.error.code, 'store_unavailable');

  // the tool ends while the store is away: the turn waits for the store rather than failing half-written
  const waiting = stderrMatches(server.svc.child, /the turn waits for it/);
  writeFileSync(fifo, 'ok\n');
  await waiting;
  await relay.up();
  const closing = await stream.next(
    (f) => f.type === 'event' && ['turn.completed', 'turn.cancelled'].includes(f.event.type),
  );
  assert.equal(closing.event.type, 'turn.completed');
  assert.equal(closing.event.turn_id, turnId);
  assert.equal(closing.event.payload.status, 'completed', JSON.stringify(closing.event.payload));

  const events = await server.api('GET', `/sessions/${running}/events?turn_id=${turnId}&limit=1000`);
  assert.equal(events.status, 200, JSON.stringify(events.body));
  const ends = (events.body.events as Array<{ type: string }>).filter((e) =>
    ['turn.completed', 'turn.cancelled'].includes(e.type),
  );
  assert.equal(ends.length, 1, 'exactly one closing event is stored');
  const session = await server.api('GET', `/sessions/${running}`);
  assert.equal(session.body.current_turn_id, null, 'the turn released its session');
  assert.equal(session.body.turn_count, 1);
  const messages = await server.api('GET', `/sessions/${running}/messages`);
  assert.deepEqual(
    (messages.body.messages as Array<{ role: string; status: string }>).map((m) => [m.role, m.status]),
    [
      ['user', 'completed'],
      ['assistant', 'completed'],
      ['user', 'completed'],
      ['assistant', 'completed'],
    ],
  );
  const toolResult = JSON.stringify(messages.body.messages[2]);
  assert.match(toolResult, /serve/, 'the command read the command line');
  assert.ok(
    !toolResult.includes(decodeURIComponent(direct.password)),
    'no database password in the tool result',
  );
  assert.doesNotMatch(toolResult, /sk-ant-test/, 'no provider key in the tool result');

  // the refused calls left nothing: no third session, the idle one has no turn and no message
  const list = await server.api('GET', '/sessions');
  assert.deepEqual(
    (list.body.sessions as Array<{ id: string }>).map((s) => s.id).sort(),
    [idle, running].sort(),
  );
  const untouched = await server.api('GET', `/sessions/${idle}`);
  assert.equal(untouched.body.turn_count, 0);
  assert.equal(untouched.body.current_turn_id, null);
  assert.deepEqual((await server.api('GET', `/sessions/${idle}/messages`)).body.messages, []);
  const next = await server.api('POST', `/sessions/${idle}/turns`, { content: text('now') });
  assert.equal(next.status, 202, JSON.stringify(next.body));
});

test('a tool output holding a NUL byte does not end the turn on PostgreSQL (its text cannot hold NUL)', {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const fake = await startFakeProvider();
  t.after(() => fake.close());
  const server = await startAgentServer(t, {
    env: {
      SVC_DATABASE_URL: await postgres.createDatabase(),
      ...fakeProviderEnv(fake, ['anthropic']),
    },
  });
  // a NUL past the first 8 KiB: read_file does not take the file for binary, so the NUL is in its output
  writeFileSync(join(server.workspace, 'log.txt'), `${'x'.repeat(9000)}\nbefore\u0000after\n`);
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  const stream = await attach(server, sid);
  t.after(() => stream.close());
  stream.send({ type: 'subscribe', filter: 'preset:full', since: null, snapshot: false });
  await stream.next((f) => f.type === 'subscribe_ack');
  fake.script([
    { toolUses: [{ name: 'read_file', input: { path: 'log.txt', offset: 2 } }] },
    { text: 'read it' },
  ]);
  const turn = await server.api('POST', `/sessions/${sid}/turns`, { content: text('read the log') });
  assert.equal(turn.status, 202, JSON.stringify(turn.body));
  const end = await stream.next(
    (f) => f.type === 'event' && f.event.type === 'turn.completed' && f.event.turn_id === turn.body.turn_id,
  );
  assert.equal(end.event.payload.status, 'completed', JSON.stringify(end.event.payload));
  const messages = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  const result = messages.flatMap((m: { content: Array<{ type: string; content?: string }> }) =>
    m.content.filter((b) => b.type === 'tool_result'),
  );
  assert.deepEqual(
    result.map((b: { content?: string }) => b.content),
    ['before\u0000after\n'],
  );
});

test("a failover's read-only phase is 503 store_unavailable like an outage, and over once the primary writes", {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const database = new URL(url).pathname.slice(1);
  const server = await startAgentServer(t, { env: { SVC_DATABASE_URL: url } });
  const admin = new pg.Client({ connectionString: postgres.url() });
  await admin.connect();
  t.after(() => admin.end());
  // the server's connections end and new ones reach a server that takes no writes (a demoted primary)
  await admin.query(`ALTER DATABASE "${database}" SET default_transaction_read_only = on`);
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database]);
  // reads still work there, on new connections that stay read-only for their whole life: several at once
  // leave several such connections idle in the pool
  const reads = await Promise.all(Array.from({ length: 4 }, () => server.api('GET', '/sessions')));
  assert.deepEqual(
    reads.map((r) => r.status),
    [200, 200, 200, 200],
  );
  const refused = await server.api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(refused.status, 503, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, 'store_unavailable');
  assert.equal(refused.headers.get('retry-after'), '1');
  await admin.query(`ALTER DATABASE "${database}" RESET default_transaction_read_only`);
  // every connection opened before the refusal was dropped with it: the next call connects anew and writes
  const created = await server.api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(created.status, 201, JSON.stringify(created.body));
});

test('an export whose store goes away mid-stream is cut off with one JSON log line, no stack trace', {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const direct = new URL(await postgres.createDatabase());
  const relay = await startTcpRelay(direct.hostname, Number(direct.port));
  const viaRelay = new URL(direct);
  viaRelay.port = String(relay.port);
  const server = await startAgentServer(t, { env: { SVC_DATABASE_URL: viaRelay.toString() } });
  t.after(() => relay.down());
  // more rows than one export page (500), so the export reads the store again after its first chunk
  const client = new pg.Client({ connectionString: direct.toString() });
  await client.connect();
  await client.query(
    `INSERT INTO events (id, timestamp, timestamp_us, type, actor, payload, sensitivity)
     SELECT 'E' || lpad(i::text, 25, '0'), '2026-01-01T00:00:00.000000Z', 1767225600000000 + i,
            'quota.alert', 'gateway', '{"user_id":"u1"}', 'internal'
     FROM generate_series(1, 600) AS i`,
  );
  await client.end();
  const res = await fetch(`${server.url}/analytics/user/u1/export`);
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  await reader.read(); // the first page was read; the next read finds the store gone
  relay.down();
  const failed = stderrMatches(server.svc.child, /user export failed mid-stream/);
  await assert.rejects(async () => {
    for (;;) if ((await reader.read()).done) break;
  }, 'the cut-off export does not end like a complete one');
  await failed;
  // a reload logs after the failure: once its line is in, anything the failure printed is too
  const reloaded = stderrMatches(server.svc.child, /routing policy reloaded/);
  assert.equal((await server.api('POST', '/routing/reload')).status, 200);
  await reloaded;
  for (const line of server.svc.output().stderr.split('\n').filter(Boolean))
    assert.doesNotThrow(() => JSON.parse(line), `a log line that is not JSON: ${line}`);
});

test('a second svc serve on the database is refused; the first one’s running turn completes; kill -9 frees it', {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const fake = await startFakeProvider();
  t.after(() => fake.close());
  const url = new URL(await postgres.createDatabase());
  const env = {
    SVC_DATABASE_URL: url.toString(),
    ...fakeProviderEnv(fake, ['anthropic']),
  };
  const first = await startAgentServer(t, { env });
  const sid = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body.id;
  const stream = await attach(first, sid);
  t.after(() => stream.close());
  stream.send({ type: 'subscribe', filter: 'preset:full', since: null, snapshot: false });
  await stream.next((f) => f.type === 'subscribe_ack');
  fake.script([{ hold: true, text: 'held answer' }]);
  const turn = await first.api('POST', `/sessions/${sid}/turns`, { content: text('go') });
  assert.equal(turn.status, 202, JSON.stringify(turn.body));
  await stream.next((f) => f.type === 'event' && f.event.type === 'llm.call_started');

  const second = await runSvc(['serve', '--port', String(await freePort())], {
    env: first.env,
    timeoutMs: 15_000,
  });
  assert.equal(second.code, 1, second.stderr);
  const lines = second.stderr.trim().split('\n');
  assert.equal(lines.length, 1, second.stderr);
  assert.match(lines[0], /^svc: Another svc serve is running on the trace store /);
  assert.ok(lines[0].includes(url.host + url.pathname), lines[0]);
  assert.ok(!lines[0].includes(new URL(env.SVC_DATABASE_URL).password), 'no password in the refusal');
  assert.doesNotMatch(second.stdout + second.stderr, /listening/);

  assert.equal(fake.release(), 1);
  const end = await stream.next(
    (f) => f.type === 'event' && ['turn.completed', 'turn.cancelled'].includes(f.event.type),
  );
  assert.equal(end.event.type, 'turn.completed', JSON.stringify(end.event.payload));
  const events = await first.api('GET', `/sessions/${sid}/events?limit=100`);
  const types = (events.body.events as Array<{ type: string }>).map((e) => e.type);
  assert.ok(!types.includes('turn.cancelled') && !types.includes('bus.gap_detected'), types.join());

  assert.equal(await first.svc.stop('SIGKILL'), null);
  const after = await startAgentServer(t, { env, home: first.home });
  assert.equal((await after.api('GET', `/sessions/${sid}`)).status, 200);
});

// --- helpers ---

/** Resolves once the process's stderr (from now on) matches `re`. */
function stderrMatches(child: { stderr: NodeJS.ReadableStream | null }, re: RegExp): Promise<void> {
  return new Promise((resolve) => {
    let seen = '';
    const onData = (d: Buffer | string) => {
      seen += d.toString();
      if (!re.test(seen)) return;
      child.stderr?.off('data', onData);
      resolve();
    };
    child.stderr?.on('data', onData);
  });
}

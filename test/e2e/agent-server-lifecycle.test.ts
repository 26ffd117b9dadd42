import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer, withStore } from '../helpers/agent-server.ts';
import { freePort, isolatedEnv, makeTempDir, runSvc, startSvc } from '../helpers/svc.ts';

test('svc serve starts without any provider key (a warning), answers, and exits 0 on SIGTERM', async (t) => {
  const server = await startAgentServer(t);
  const { stderr } = server.svc.output();
  assert.match(stderr, /"level":"warn".*no provider key set/);
  assert.equal((await server.api('GET', '/health')).status, 200);
  const models = (await server.api('GET', '/models')).body.models as Array<{ availability: string }>;
  assert.ok(models.every((m) => m.availability === 'provider_unavailable'));
  assert.equal(await server.svc.stop('SIGTERM'), 0);
  const out = server.svc.output();
  assert.match(out.stderr, /"msg":"agent server stopping","signal":"SIGTERM"/);
  assert.match(out.stderr, /"msg":"agent server stopped"/);
  assert.match(out.stdout, /"msg":"request","method":"GET","path":"\/health","status":200/);
  assert.doesNotMatch(out.stderr + out.stdout, /test-key|prompt/);
});

test('SIGINT stops it the same way', async (t) => {
  const server = await startAgentServer(t);
  assert.equal(await server.svc.stop('SIGINT'), 0);
});

test('a non-loopback host is refused with an error log and 127.0.0.1 is bound (flag and SVC_SERVE_HOST)', async (t) => {
  for (const options of [{ args: ['--host', '0.0.0.0'] }, { env: { SVC_SERVE_HOST: '192.168.1.10' } }]) {
    const server = await startAgentServer(t, options);
    assert.match(
      server.svc.output().stderr,
      /"level":"error","msg":"refusing to bind (0\.0\.0\.0|192\.168\.1\.10)/,
    );
    assert.match(server.svc.output().stderr, /"msg":"agent server listening","url":"http:\/\/127\.0\.0\.1:/);
    assert.equal((await server.api('GET', '/health')).status, 200);
    assert.equal(await server.svc.stop(), 0);
  }
});

test('SVC_SERVE_PORT and --db-path are honoured', async (t) => {
  const tmp = makeTempDir('svc-agent-port-');
  t.after(() => tmp.cleanup());
  const port = await freePort();
  const db = join(tmp.dir, 'elsewhere', 'trace.db');
  const svc = await startSvc(['serve', '--db-path', db], {
    env: isolatedEnv(tmp.dir, { SVC_SERVE_PORT: String(port) }),
    port,
    readyPath: '/health',
  });
  t.after(() => svc.stop());
  const res = await fetch(`http://127.0.0.1:${port}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workspace_path: tmp.dir }),
  });
  assert.equal(res.status, 201);
  const { id } = (await res.json()) as { id: string };
  assert.equal(await svc.stop(), 0);
  assert.equal(
    withStore(
      db,
      (d) => (d.prepare('SELECT count(*) AS n FROM sessions WHERE id = ?').get(id) as { n: number }).n,
    ),
    1,
  );
});

test('an unreadable --models file or a bad --port is refused at start with one sentence', async (t) => {
  const tmp = makeTempDir('svc-agent-bad-');
  t.after(() => tmp.cleanup());
  const env = isolatedEnv(tmp.dir);
  const models = await runSvc(
    ['serve', '--port', String(await freePort()), '--models', join(tmp.dir, 'nope.yaml')],
    {
      env,
    },
  );
  assert.equal(models.code, 1);
  assert.match(models.stderr, /Cannot read the model registry/);
  const port = await runSvc(['serve', '--port', 'eighty'], { env });
  assert.equal(port.code, 2);
  assert.match(port.stderr, /--port must be a port number/);
});

test('a turn a killed server left open gets bus.gap_detected and turn.cancelled at the next start; its session is free', async (t) => {
  const tmp = makeTempDir('svc-agent-restart-');
  t.after(() => tmp.cleanup());
  const first = await startAgentServer(t, { home: tmp.dir });
  const { id } = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body;
  assert.equal(await first.svc.stop('SIGKILL'), null);
  // what a process killed mid-turn leaves behind: the claim on the session, the opening events, a partial message
  const turn = '01KILLEDTURN0000000000000A';
  withStore(first.db, (db) => {
    db.prepare("UPDATE sessions SET current_turn_id = ?, current_turn_status = 'in_flight' WHERE id = ?").run(
      turn,
      id,
    );
    const ev = db.prepare(
      `INSERT INTO events (id, timestamp, timestamp_us, session_id, turn_id, type, actor, payload, parent_event_id, sensitivity)
       VALUES (?, '2026-01-01T00:00:00.000000Z', 1, ?, ?, ?, 'agent', '{}', ?, 'private')`,
    );
    ev.run('01KILLEDEVT000000000000001', id, turn, 'turn.started', null);
    ev.run('01KILLEDEVT000000000000002', id, turn, 'route.decided', '01KILLEDEVT000000000000001');
    ev.run('01KILLEDEVT000000000000003', id, turn, 'llm.call_started', '01KILLEDEVT000000000000001');
    db.prepare(
      `INSERT INTO messages (id, session_id, turn_id, role, content, status, created_at)
       VALUES ('01KILLEDMSG000000000000001', ?, ?, 'assistant', '[{"type":"text","text":"half"}]', 'in_progress', '2026-01-01T00:00:00.000000Z')`,
    ).run(id, turn);
  });
  const second = await startAgentServer(t, { home: tmp.dir });
  // the gap events are published right after the bind, and logged once committed
  await waitFor(() => /turns left open by a stopped server were cancelled/.test(second.svc.output().stderr));
  const events = withStore(second.db, (db) =>
    db
      .prepare(
        "SELECT type, actor, parent_event_id, payload FROM events WHERE turn_id = ? AND id > '01KILLEDEVT000000000000003' ORDER BY id",
      )
      .all(turn),
  ) as Array<{ type: string; actor: string; parent_event_id: string; payload: string }>;
  assert.deepEqual(
    events.map((e) => [e.type, e.parent_event_id]),
    [
      ['bus.gap_detected', '01KILLEDEVT000000000000003'],
      ['turn.cancelled', '01KILLEDEVT000000000000001'],
    ],
  );
  assert.deepEqual(JSON.parse(events[0].payload).llm_call_started_ids, ['01KILLEDEVT000000000000003']);
  assert.equal(JSON.parse(events[1].payload).reason, 'server_restart');
  const session = (await second.api('GET', `/sessions/${id}`)).body;
  assert.equal(session.current_turn_id, null);
  assert.equal(session.current_turn_status, null);
  const messages = (await second.api('GET', `/sessions/${id}/messages`)).body.messages;
  assert.equal(messages[0].status, 'cancelled');
  const listed = (await second.api('GET', `/sessions/${id}/events?types=bus.gap_detected,turn.cancelled`))
    .body;
  assert.equal(listed.events.length, 2);
  assert.equal(await second.svc.stop(), 0);
  // a third start finds nothing left to close
  const third = await startAgentServer(t, { home: tmp.dir });
  await waitFor(() => /agent server listening/.test(third.svc.output().stderr));
  assert.doesNotMatch(third.svc.output().stderr, /turns left open/);
  const count = withStore(
    third.db,
    (db) =>
      (
        db
          .prepare("SELECT count(*) AS n FROM events WHERE turn_id = ? AND type = 'turn.cancelled'")
          .get(turn) as { n: number }
      ).n,
  );
  assert.equal(count, 1);
});

test('a turn submission still arriving when SIGTERM comes is refused with 503, and the stop ends at once with exit 0', async (t) => {
  // its turn used to start after the stop had cancelled the running ones: it ran on against a provider that
  // hangs, the stop waited for it until the 30 s deadline (exit 1) and the next start found it open
  const fake = await startFakeProvider({ defaultStep: 'hang' });
  t.after(() => fake.close());
  const server = await startAgentServer(t, {
    env: fakeProviderEnv(fake, ['anthropic']),
  });
  const { id } = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body;
  const slow = await slowPost(server.url, `/sessions/${id}/turns`, {
    content: [{ type: 'text', text: 'hello' }],
  });
  const exit = server.svc.stop('SIGTERM');
  await waitFor(() => /agent server stopping/.test(server.svc.output().stderr));
  const answer = await slow.finish();
  assert.match(answer, /\r\n\r\nHTTP\/1\.1 503 /);
  assert.match(answer, /"code":"service_shutting_down"/);
  assert.equal(await exit, 0);
  assert.equal(fake.requests.length, 0);
  const open = withStore(server.db, (db) =>
    db.prepare('SELECT current_turn_id FROM sessions WHERE id = ?').get(id),
  );
  assert.deepEqual({ ...open }, { current_turn_id: null });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(check(), 'condition not reached within 10 s');
}

/**
 * A POST in flight: its headers (with `expect: 100-continue`) and the first bytes of its JSON body are sent,
 * and the server's interim 100 says it read the headers (a signal taken before that would find an idle
 * connection and close it). `finish` sends the rest; it resolves with all the server wrote once it closed.
 */
async function slowPost(url: string, path: string, json: unknown): Promise<{ finish(): Promise<string> }> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify(json);
  const socket = connect(Number(port), hostname);
  let answer = '';
  socket.setEncoding('utf8').on('data', (d: string) => {
    answer += d;
  });
  await once(socket, 'connect');
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
      `expect: 100-continue\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 5)}`,
  );
  await waitFor(() => /^HTTP\/1\.1 100 /.test(answer));
  return {
    async finish() {
      socket.end(body.slice(5));
      await once(socket, 'close');
      return answer;
    },
  };
}

test('while a request begun before SIGTERM finishes, new requests get 503 service_shutting_down, not a refused connection', async (t) => {
  const server = await startAgentServer(t);
  // a request in flight at the stop: its body arrives in two parts, the second after the signal
  const slow = await slowPost(server.url, '/sessions', { workspace_path: server.workspace });
  const exit = server.svc.stop('SIGTERM');
  await waitFor(() => /agent server stopping/.test(server.svc.output().stderr));
  const refused = await fetch(`${server.url}/health`);
  assert.equal(refused.status, 503);
  assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'service_shutting_down');
  assert.equal(refused.headers.get('connection'), 'close');
  const answer = await slow.finish();
  assert.match(answer, /\r\n\r\nHTTP\/1\.1 201 /);
  assert.equal(await exit, 0);
});

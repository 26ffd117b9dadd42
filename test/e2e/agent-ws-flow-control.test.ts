/**
 * Flow control of the WebSocket stream (spec 2 §WebSocket stream, §Limits) through the real `svc serve`:
 * heartbeats with a short SVC_WS_PING_INTERVAL_MS (answered pings keep a socket, three unanswered close
 * it), an inbound frame above 64 KiB closes with 1009 (bad UTF-8 with 1007, a protocol error with 1002),
 * and a client that stops reading is closed with 1008 client_too_slow and a bus.handler_warning while the
 * turn and another client go on unhindered, also when what piles up is the answers to its own pings and
 * bad frames.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer, withStore } from '../helpers/agent-server.ts';
import { attach, type Frame, type StreamClient } from '../helpers/ws-client.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const provider = fakeProviderEnv(fake, ['anthropic']);
// heartbeats every 100 ms on one server (idle sockets and one a turn keeps busy); a queue of 50 events
// (and the default 30 s pings) on the other
const server = await startAgentServer({ after }, { env: { ...provider, SVC_WS_QUEUE_LIMIT: '50' } });
const streaming = await startAgentServer({ after }, { env: { ...provider, SVC_WS_PING_INTERVAL_MS: '100' } });
const beating = streaming;

const session = async (on: AgentServer) =>
  (await on.api('POST', '/sessions', { workspace_path: on.workspace })).body.id as string;

async function subscribed(on: AgentServer, sid: string): Promise<StreamClient> {
  const c = await attach(on, sid);
  c.send({ type: 'subscribe', filter: 'preset:full' });
  await c.next((f) => f.type === 'subscribe_ack');
  return c;
}

const pings = (c: StreamClient) => c.frames.filter((f: Frame) => f.type === 'ping');

test('the server pings an idle client; pongs keep it open and three unanswered pings close it', async () => {
  const sid = await session(beating);
  const answering = await subscribed(beating, sid);
  answering.ws.on('message', (data) => {
    const f = JSON.parse(data.toString());
    if (f.type === 'ping') answering.send({ type: 'pong', nonce: f.nonce });
  });
  const silent = await subscribed(beating, sid);
  const closed = await silent.closed;
  assert.equal(closed.code, 4000);
  assert.equal(JSON.parse(closed.reason).code, 'heartbeat_timeout');
  assert.equal(pings(silent).length, 3);
  assert.ok(pings(silent).every((p) => typeof p.nonce === 'string' && p.nonce.length > 0));
  // the answering client saw more pings than that and is still open
  await answering.next(() => pings(answering).length >= 5);
  assert.equal(answering.ws.readyState, answering.ws.OPEN);
  answering.close();
  await answering.closed;
});

// spec 2: the server pings "when idle". A client that only reads (no pong) used to be pinged and closed
// with 4000 in the middle of a turn streaming to it, after three ping intervals.
test('a socket the turn keeps busy is not idle: no pings while events flow, the heartbeat only once it is quiet', async () => {
  const sid = await session(streaming);
  const reader = await subscribed(streaming, sid); // answers no ping
  fake.script([{ text: Array.from({ length: 60 }, (_, i) => `w${i}`).join(' '), dripMs: 20 }]);
  const turn = (
    await streaming.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'talk' }] })
  ).body;
  await reader.next(
    (f) => f.type === 'event' && f.event.type === 'turn.completed' && f.event.turn_id === turn.turn_id,
  );
  const deltas = reader.events().filter((e) => e.type === 'text.delta');
  assert.equal(
    deltas.map((e) => e.payload.text).join(''),
    Array.from({ length: 60 }, (_, i) => `w${i}`).join(' '),
  );
  const closed = await reader.closed; // quiet now: three unanswered pings
  assert.equal(closed.code, 4000);
});

test('an inbound frame above 64 KiB closes the socket with 1009; a smaller bad frame only gets an error', async () => {
  const c = await subscribed(server, await session(server));
  c.send({ type: 'nonsense', pad: 'x'.repeat(60 * 1024) });
  assert.equal((await c.next((f) => f.type === 'error')).code, 'unknown_frame_type');
  c.send({ type: 'ping', nonce: 'x'.repeat(65 * 1024) });
  const closed = await c.closed;
  assert.equal(closed.code, 1009);
  assert.equal(JSON.parse(closed.reason).code, 'frame_too_large'); // every close reason is JSON {code, message}
  // the refused frame left no stack trace on stderr (@hono/node-ws printed a ReferenceError for each):
  // a reload logs a line after it, so once that line is in, so is anything the close wrote
  const before = server.svc.output().stderr.split('\n').length;
  assert.equal((await server.api('POST', '/routing/reload')).status, 200);
  await waitForStderr(server, /routing policy reloaded/, before);
  for (const line of server.svc.output().stderr.split('\n').filter(Boolean))
    assert.doesNotThrow(() => JSON.parse(line), `a log line that is not JSON: ${line}`);
});

test('a text frame that is not UTF-8 closes with 1007, a frame breaking the protocol with 1002: JSON reasons too', async () => {
  // RFC 6455 fails such connections; the close reason is JSON {code, message} like every other (before: empty)
  const sid = await session(server);
  const text = await subscribed(server, sid);
  text.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
  const badText = await text.closed;
  assert.equal(badText.code, 1007);
  assert.equal(JSON.parse(badText.reason).code, 'invalid_utf8');
  const raw = await subscribed(server, sid);
  // a masked frame with the reserved opcode 3, written past the client library
  (raw.ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(
    Buffer.from([0x83, 0x80, 1, 2, 3, 4]),
  );
  const broken = await raw.closed;
  assert.equal(broken.code, 1002);
  assert.equal(JSON.parse(broken.reason).code, 'protocol_error');
});

async function waitForStderr(on: AgentServer, re: RegExp, fromLine: number): Promise<void> {
  const seen = () =>
    on.svc
      .output()
      .stderr.split('\n')
      .slice(fromLine - 1)
      .some((l) => re.test(l));
  while (!seen()) await new Promise((r) => on.svc.child.stderr?.once('data', r));
}

test('a client that sends pings and bad frames but never reads is closed with 1008 client_too_slow and a bus.handler_warning, not answered without end', {
  timeout: 60_000,
}, async () => {
  const sid = await session(server);
  fake.script([{ hang: true }]);
  const turn = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'wait' }],
  });
  assert.equal(turn.status, 202);
  const watcher = await subscribed(server, sid);
  const c = await subscribed(server, sid);
  c.ws.pause(); // reads nothing: every pong and error frame stays with the server
  // ~13 MB of answers (200-character nonces): far more than the kernel buffers between the two ends hold;
  // then a cancel of the turn, which the server reaches only if it kept answering everything before it
  const pings = 60_000;
  const nonce = 'n'.repeat(200);
  for (let i = 0; i < pings; i++) c.send(i % 2 ? { type: 'ping', nonce } : { type: 'nonsense', nonce });
  c.send({ type: 'cancel', turn_id: turn.body.turn_id });
  // spec 2: a slow client triggers bus.handler_warning and a forced close, whatever piled up for it
  const warning = (
    await watcher.next(
      (f) =>
        f.type === 'event' && (f.event.type === 'bus.handler_warning' || f.event.type === 'turn.cancelled'),
    )
  ).event;
  assert.equal(
    warning.type,
    'bus.handler_warning',
    'every frame was answered: the queue grew with the flood',
  );
  assert.equal(warning.session_id, sid);
  assert.equal(warning.payload.subscriber, 'stream_server');
  assert.equal(warning.payload.event_id, null);
  assert.match(warning.payload.message, /^client_too_slow: more than 50 answers/);
  c.ws.resume();
  const closed = await c.closed;
  assert.equal(closed.code, 1008);
  assert.equal(JSON.parse(closed.reason).code, 'client_too_slow');
  assert.ok(c.frames.length < pings, `${c.frames.length} frames`);
  assert.match(server.svc.output().stderr, /websocket client too slow/);
  assert.equal(
    (await server.api('POST', `/sessions/${sid}/turns/${turn.body.turn_id}/cancel`, {})).status,
    202,
  );
  await watcher.next((f) => f.type === 'event' && f.event.type === 'turn.cancelled');
  const stored = withStore(server.db, (db) =>
    db
      .prepare(`SELECT count(*) AS n FROM events WHERE type = 'bus.handler_warning' AND session_id = ?`)
      .get(sid),
  ) as { n: number };
  assert.equal(stored.n, 1, 'persisted in the trace store');
  watcher.close();
  await watcher.closed;
});

test('a client that stops reading is closed with 1008 client_too_slow and a bus.handler_warning; the turn and another client are not held up', async () => {
  const sid = await session(server);
  // the other client takes the turn's lifecycle only, so it can never be the slow one itself
  const other = await attach(server, sid);
  other.send({
    type: 'subscribe',
    filter: { event_types: ['turn.started', 'llm.call_completed', 'turn.completed'] },
  });
  await other.next((f) => f.type === 'subscribe_ack');
  const slow = await subscribed(server, sid);
  slow.ws.pause(); // stops reading its socket: TCP backpressure, then the server's queue fills
  // ~6 MB of text deltas: more than the kernel buffers between the two ends can hold
  const word = 'w'.repeat(1500);
  fake.script([{ text: Array.from({ length: 4000 }, (_, i) => `${word}${i}`).join(' ') }]);
  const turn = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'talk' }],
  });
  assert.equal(turn.status, 202);
  // the turn ends while the slow client still reads nothing
  const done = await other.next((f) => f.type === 'event' && f.event.type === 'turn.completed');
  assert.equal(done.event.payload.status, 'completed');
  assert.deepEqual(
    other.events().map((e) => e.type),
    ['turn.started', 'llm.call_completed', 'turn.completed'],
  );

  slow.ws.resume();
  const closed = await slow.closed;
  assert.equal(closed.code, 1008);
  const reason = JSON.parse(closed.reason);
  assert.equal(reason.code, 'client_too_slow');
  assert.match(reason.message, /50 events/);
  // what the slow client did get has no gap: ids ascend and the deltas are the first ones in order
  const got = slow.events();
  assert.deepEqual(
    got.map((e) => e.id),
    got.map((e) => e.id).sort(),
  );
  const deltas = got.filter((e) => e.type === 'text.delta');
  assert.ok(deltas.length > 0 && deltas.length < 4000, `${deltas.length} deltas`);
  for (const [i, d] of deltas.entries()) assert.equal(d.payload.text.trim(), `${word}${i}`);

  const warnings = withStore(server.db, (db) =>
    db
      .prepare(`SELECT payload, turn_id FROM events WHERE type = 'bus.handler_warning' AND session_id = ?`)
      .all(sid),
  ) as Array<{ payload: string; turn_id: string }>;
  assert.equal(warnings.length, 1);
  const payload = JSON.parse(warnings[0].payload);
  assert.equal(payload.subscriber, 'stream_server');
  assert.match(payload.message, /client_too_slow/);
  assert.equal(warnings[0].turn_id, turn.body.turn_id);
  other.close();
  await other.closed;
});

/**
 * `svc chat` whose server went away for good: after about a minute of reconnects it ends with one sentence
 * that names the server's URL and what to check (the API's own sentence) and how to resume the session,
 * where it said only "Lost the connection to the agent server (the server does not answer)."; and one that
 * takes the stream's connection but never answers is given up after 30 seconds, not waited for for ever.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { mock, test } from 'node:test';
import { WebSocketServer } from 'ws';
import type { ChatApi, SessionView } from '#src/cli/chat/api.ts';
import { openChatStream, STREAM_ANSWER_TIMEOUT_MS } from '#src/cli/chat/stream.ts';
import { SvcError } from '#src/lib/errors.ts';

test('a server gone for good ends the stream with a sentence naming its URL and the session to resume', async (t) => {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  t.after(() => wss.close());
  await new Promise((r) => wss.once('listening', r));
  const { port } = wss.address() as AddressInfo;
  wss.on('connection', (ws) =>
    ws.on('message', () => {
      ws.send(JSON.stringify({ type: 'subscribe_ack' }));
      ws.send(JSON.stringify({ type: 'snapshot', session: {}, messages: [], snapshot_at_event_id: null }));
    }),
  );
  let up = true;
  const api = {
    async getSession(id: string) {
      if (!up)
        throw new SvcError('io_error', {
          message:
            'Cannot reach the agent server at http://127.0.0.1:1; start it with `svc serve` or pass --server.',
        });
      return { id, ws_url: `ws://127.0.0.1:${port}/` } as SessionView;
    },
  } as ChatApi;
  let fatal: SvcError | undefined;
  const notices: string[] = [];
  const stream = openChatStream(api, 'sess_TEST', {
    onEvent() {},
    onSnapshot() {},
    onResubscribed() {},
    onNotice: (text) => notices.push(text),
    onFatal: (err) => {
      fatal = err;
    },
  });
  await stream.ready;
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  up = false;
  for (const client of wss.clients) client.terminate();
  while (notices.length === 0) await new Promise((r) => setImmediate(r));
  // the backoff (250 ms doubling to 4 s) runs on the mocked clock; each attempt's refusal is a few ticks
  for (let i = 0; i < 100 && !fatal; i++) {
    mock.timers.tick(4000);
    for (let j = 0; j < 5; j++) await new Promise((r) => setImmediate(r));
  }
  assert.ok(fatal, 'the stream never gave up');
  assert.equal(
    fatal.message,
    'Lost the connection to the agent server for a minute (Cannot reach the agent server at http://127.0.0.1:1; start it with `svc serve` or pass --server); once it answers again, resume with `svc chat --session sess_TEST`.',
  );
  stream.close();
});

test('a server that takes the stream connection and never answers ends the chat at start in one sentence', {
  timeout: 20_000,
}, async (t) => {
  // a proxy or a stopped server holding the connection: before, the chat waited for ever with no prompt
  const held = new Set<Socket>();
  const silent = createServer((s) => held.add(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of held) s.destroy();
    silent.close();
  });
  const { port } = silent.address() as AddressInfo;
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  const connected = once(silent, 'connection');
  const api = {
    async getSession(id: string) {
      return { id, ws_url: `ws://127.0.0.1:${port}/sessions/${id}/stream?attach=atk_SECRET` } as SessionView;
    },
  } as ChatApi;
  const stream = openChatStream(api, 'sess_TEST', {
    onEvent() {},
    onSnapshot() {},
    onResubscribed() {},
    onNotice() {},
    onFatal() {},
  });
  await connected;
  mock.timers.tick(STREAM_ANSWER_TIMEOUT_MS);
  await assert.rejects(stream.ready, {
    message: `The session's stream ws://127.0.0.1:${port}/sessions/sess_TEST/stream could not be opened (no answer within 30 seconds); check that \`svc serve\` is running there and that a proxy in front of it passes WebSocket upgrades.`,
  });
  stream.close();
});

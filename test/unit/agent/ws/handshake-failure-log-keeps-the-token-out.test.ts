/**
 * A handshake that fails unexpectedly is logged with its path, never its query: the ws_url's `attach`
 * parameter is the session's attach token, a credential (logs never hold a secret).
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { WebSocketServer } from 'ws';
import { createUpgradeListener } from '#src/agent/ws/upgrade.ts';
import { createLogger } from '#src/lib/log.ts';

test('a failed handshake is logged without the attach token of its URL', async () => {
  let logged!: (line: string) => void;
  const line = new Promise<string>((resolve) => (logged = resolve));
  const listener = createUpgradeListener({
    isStreamPath: () => true,
    request: () => {
      throw new Error('the app failed');
    },
    wss: { on: () => {} } as unknown as WebSocketServer,
    accepted: new WeakSet(),
    log: createLogger({ write: logged }),
  });
  const req = {
    url: '/sessions/01JSESSION/stream?attach=att_s3cr3t-token',
    method: 'GET',
    headers: { host: '127.0.0.1' },
  } as unknown as IncomingMessage;
  listener(req, new PassThrough(), Buffer.alloc(0));
  const entry = JSON.parse(await line);
  assert.equal(entry.msg, 'websocket handshake failed');
  assert.equal(entry.path, '/sessions/01JSESSION/stream');
  assert.ok(!JSON.stringify(entry).includes('att_s3cr3t-token'), JSON.stringify(entry));
});

/**
 * A request body sent with `Content-Encoding: gzip` (or any coding but identity) is answered 415
 * `unsupported_media_type` in the path's own error shape, saying to send the body uncompressed (RFC 9110
 * §15.5.16; README §Gateway), not 400 "the request body is not valid JSON", which sent the client after
 * JSON that was fine. `identity` is no coding and is read as usual.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { makeTempDir, type RunningSvc, startSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
let gw: RunningSvc;
let token: string;
test.before(async () => {
  const files = gatewayFiles(tmp.dir);
  ({ token } = await issueKey(files.env));
  gw = await startSvc(['gateway', '--port', '{port}'], { env: files.env });
});
test.after(async () => {
  await gw?.stop();
  tmp.cleanup();
});

const chat = { model: 'anthropic:claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] };
const messages = { ...chat, max_tokens: 5 };

function post(path: string, body: Uint8Array | string, encoding: string): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
      'content-encoding': encoding,
    },
    body,
  });
}

test('a gzip body on the chat path is 415 in the OpenAI error shape', async () => {
  const res = await post('/v1/chat/completions', gzipSync(JSON.stringify(chat)), 'gzip');
  assert.equal(res.status, 415);
  const body = (await res.json()) as { error: { type: string; code: string; message: string } };
  assert.equal(body.error.code, 'unsupported_media_type');
  assert.equal(body.error.type, 'invalid_request_error');
  assert.match(
    body.error.message,
    /Content-Encoding gzip is not supported; send the request body uncompressed/,
  );
});

test('a br body on the messages path is 415 in the Anthropic error shape', async () => {
  const res = await post('/v1/messages', 'not really brotli', 'br');
  assert.equal(res.status, 415);
  const body = (await res.json()) as { type: string; error: { type: string; code: string; message: string } };
  assert.equal(body.type, 'error');
  assert.equal(body.error.code, 'unsupported_media_type');
  assert.equal(body.error.type, 'invalid_request_error');
  assert.match(body.error.message, /Content-Encoding br is not supported/);
});

test('Content-Encoding: identity is read as an uncompressed body', async () => {
  const res = await post('/v1/messages', JSON.stringify({ ...messages, max_tokens: 'x' }), 'identity');
  assert.equal(res.status, 400, 'the body was read and validated');
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'invalid_request');
  assert.match(body.error.message, /max_tokens/);
});

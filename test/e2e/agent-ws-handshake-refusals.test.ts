/**
 * The WebSocket handshake of `svc serve` (spec 2 §WebSocket stream, §Authentication, DECISIONS §4): every
 * refusal is an HTTP answer before the upgrade with the service's JSON error body, and a token works once,
 * for its own session only, while earlier tokens stay valid.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { after, test } from 'node:test';
import { WebSocket } from 'ws';
import { rawRequest, startAgentServer } from '../helpers/agent-server.ts';
import { open, refusal } from '../helpers/ws-client.ts';

const server = await startAgentServer({ after });
const port = server.svc.port;
const base = `ws://127.0.0.1:${port}`;
const newSession = async () =>
  (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id as string;
const tokenOf = async (sid: string) =>
  (await server.api('GET', `/sessions/${sid}`)).body.attach_token as string;

test('an unknown session is 404 session_not_found, a missing or unknown token 401, before any upgrade', async () => {
  const sid = await newSession();
  const token = await tokenOf(sid);
  let r = await refusal(`${base}/sessions/sess_01ARZ3NDEKTSV4RRFFQ69G5FAV/stream?attach=${token}`);
  assert.equal(r.status, 404);
  assert.equal(r.body.error.code, 'session_not_found');
  r = await refusal(`${base}/sessions/${sid}/stream`);
  assert.equal(r.status, 401);
  assert.equal(r.body.error.code, 'invalid_attach_token');
  assert.match(r.body.error.message, /missing/);
  r = await refusal(`${base}/sessions/${sid}/stream?attach=atk_01ARZ3NDEKTSV4RRFFQ69G5FAV`);
  assert.equal(r.status, 401);
  assert.equal(r.body.error.code, 'invalid_attach_token');
  // the 404 did not use the token up
  const ok = await open(`${base}/sessions/${sid}/stream?attach=${token}`);
  ok.close();
  await ok.closed;
});

test('a token works once; a second use is 401 and a fresh GET gives a new one while older ones stay valid', async () => {
  const sid = await newSession();
  const first = await server.api('GET', `/sessions/${sid}`);
  const second = await server.api('GET', `/sessions/${sid}`);
  assert.notEqual(first.body.attach_token, second.body.attach_token);
  assert.equal(
    first.body.ws_url,
    `ws://127.0.0.1:${port}/sessions/${sid}/stream?attach=${first.body.attach_token}`,
  );
  const a = await open(second.body.ws_url);
  const b = await open(first.body.ws_url);
  const reused = await refusal(first.body.ws_url);
  assert.equal(reused.status, 401);
  assert.equal(reused.body.error.code, 'invalid_attach_token');
  assert.match(reused.body.error.message, /already used/);
  for (const c of [a, b]) {
    c.close();
    await c.closed;
  }
});

test("another session's token is 403 attach_token_wrong_session and stays valid for its own session", async () => {
  const mine = await newSession();
  const other = await newSession();
  const token = await tokenOf(other);
  const r = await refusal(`${base}/sessions/${mine}/stream?attach=${token}`);
  assert.equal(r.status, 403);
  assert.equal(r.body.error.code, 'attach_token_wrong_session');
  const own = await open(`${base}/sessions/${other}/stream?attach=${token}`);
  own.close();
  await own.closed;
});

test('a foreign Host or Origin is refused at the handshake with 403, and the token is kept', async () => {
  const sid = await newSession();
  const token = await tokenOf(sid);
  const url = `${base}/sessions/${sid}/stream?attach=${token}`;
  let r = await refusal(url, { origin: 'http://evil.example' });
  assert.equal(r.status, 403);
  assert.equal(r.body.error.code, 'origin_not_allowed');
  r = await refusal(url, { host: 'evil.example' });
  assert.equal(r.status, 403);
  assert.equal(r.body.error.code, 'host_not_allowed');
  const ok = await open(url, { origin: `http://localhost:${port}` });
  ok.close();
  await ok.closed;
});

test('the stream path without an upgrade is 426 upgrade_required; REST still answers on the same port', async () => {
  const sid = await newSession();
  const res = await rawRequest(port, 'GET', `/sessions/${sid}/stream?attach=x`, {
    host: `127.0.0.1:${port}`,
  });
  assert.equal(res.status, 426);
  assert.equal(JSON.parse(res.body).error.code, 'upgrade_required');
  const other = await refusal(`${base}/health`);
  assert.equal(other.status, 404);
  assert.equal(other.body.error.code, 'not_found');
});

test('the 101 of an accepted upgrade carries Svc-API-Version and Svc-API-Versions-Supported like every service answer', async () => {
  const sid = await newSession();
  const ws = new WebSocket(`${base}/sessions/${sid}/stream?attach=${await tokenOf(sid)}`);
  const opened = once(ws, 'open'); // emitted in the same tick as 'upgrade'
  const [res] = (await once(ws, 'upgrade')) as [IncomingMessage];
  await opened;
  assert.equal(res.statusCode, 101);
  assert.equal(res.headers['svc-api-version'], '1.0');
  assert.equal(res.headers['svc-api-versions-supported'], '1.0');
  ws.close();
  await once(ws, 'close');
});

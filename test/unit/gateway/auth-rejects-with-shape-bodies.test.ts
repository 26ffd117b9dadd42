import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { createBus } from '#src/events/bus.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';
import { createGatewayApp } from '#src/gateway/app.ts';
import { extractToken } from '#src/gateway/auth.ts';
import { createKeystoreCache, updateKeystoreFile } from '#src/gateway/keystore/file.ts';
import { issueKey, type Keystore, revokeKey, rotateKey } from '#src/gateway/keystore/keystore.ts';
import { tokenHashPrefix } from '#src/lib/hash.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import type { Clock } from '#src/lib/time.ts';
import { makeTempDir } from '../../helpers/svc.ts';

interface ErrorBody {
  type?: string;
  error: { [field: string]: unknown };
  request_id?: string;
}
const body = async (res: Response | Promise<Response>) => (await (await res).json()) as ErrorBody;

const tmp = makeTempDir();
test.after(() => tmp.cleanup());

async function setup(name: string) {
  const path = join(tmp.dir, name, 'keys.json');
  const newId = createIdFactory();
  let now = Date.parse('2026-11-22T06:00:00Z') * 1000;
  const clock: Clock = { nowUs: () => now };
  const issued = await updateKeystoreFile(path, () => {
    const r = issueKey({ keys: [] }, { name: 'k', workspace_path: '/w' }, { newId, nowUs: now });
    return { next: r.store, result: r };
  });
  const events: EventEnvelope[] = [];
  const bus = createBus({ newId, clock, log: silentLogger });
  bus.subscribe({ name: 'test', handle: (e) => void events.push(e) });
  const keys = createKeystoreCache(path, { log: silentLogger });
  const app = createGatewayApp({ keys, bus, clock, newId, log: silentLogger });
  const call = (route: 'messages' | 'chat', headers: Record<string, string>) =>
    app.request(route === 'messages' ? '/v1/messages' : '/v1/chat/completions', {
      method: 'POST',
      headers: { host: '127.0.0.1:8422', 'content-type': 'application/json', ...headers },
      body: '{}',
    });
  const update = (fn: (s: Keystore) => Keystore) =>
    updateKeystoreFile(path, (s) => ({ next: fn(s as Keystore), result: undefined }));
  const failures = () =>
    events.filter((e) => e.type === 'gateway.auth_failed').map((e) => e.payload as Record<string, unknown>);
  return {
    issued,
    call,
    update,
    failures,
    newId,
    advance: (us: number) => {
      now += us;
    },
    now: () => now,
  };
}

test('the token is read from x-api-key first, else from a Bearer authorization', () => {
  const h = (o: Record<string, string>) => new Headers(o);
  const token = (t: string) => ({ type: 'token', token: t });
  assert.deepEqual(extractToken(h({ 'x-api-key': 'gw_a', authorization: 'Bearer gw_b' })), token('gw_a'));
  assert.deepEqual(extractToken(h({ authorization: 'bearer gw_b' })), token('gw_b'));
  assert.deepEqual(extractToken(h({})), { type: 'missing' });
  assert.deepEqual(extractToken(h({ authorization: 'Bearer ' })), { type: 'missing' });
  // a provider key in x-api-key beside a gateway Bearer token (Claude Code with both variables set)
  assert.deepEqual(extractToken(h({ 'x-api-key': 'sk-ant-x', authorization: 'Bearer gw_b' })), token('gw_b'));
  assert.deepEqual(
    extractToken(h({ 'x-api-key': 'sk-ant-x', authorization: 'Bearer sk-y' })),
    token('sk-ant-x'),
  );
  assert.deepEqual(
    extractToken(h({ 'x-api-key': 'sk-ant-x', authorization: 'Basic abc' })),
    token('sk-ant-x'),
  );
});

test('an Authorization that is not one Bearer token is malformed, not missing', () => {
  const two = new Headers();
  two.append('authorization', 'Bearer gw_a');
  two.append('authorization', 'Bearer gw_b');
  for (const headers of [
    new Headers({ authorization: 'Basic abc' }),
    new Headers({ authorization: 'Bearer a b' }),
    new Headers({ authorization: 'gw_a' }),
    two,
  ]) {
    assert.deepEqual(extractToken(headers), { type: 'malformed' }, headers.get('authorization')!);
  }
});

test('a valid key reaches the pipeline handler on both shapes', async () => {
  const s = await setup('ok');
  for (const [route, headers] of [
    ['messages', { 'x-api-key': s.issued.token }],
    ['chat', { authorization: `Bearer ${s.issued.token}` }],
  ] as const) {
    const res = await s.call(route, headers);
    assert.equal(res.status, 501, route);
    assert.match(res.headers.get('svc-request-id') ?? '', /^[0-9A-Z]{26}$/);
  }
  assert.deepEqual(s.failures(), []);
});

test('a missing token is 401 missing_token in each shape, with an auth_failed event', async () => {
  const s = await setup('missing');
  const m = await s.call('messages', {});
  assert.equal(m.status, 401);
  const mb = await body(m);
  assert.equal(mb.type, 'error');
  assert.equal(mb.error.code, 'missing_token');
  assert.equal(mb.error.type, 'authentication_error');
  // the Anthropic body names its request at the top level, as the API's does (wire-formats §1.11)
  assert.deepEqual(Object.keys(mb), ['type', 'error', 'request_id']);
  assert.equal(mb.request_id, m.headers.get('request-id'));
  assert.match(String(mb.request_id), /^[0-9A-Z]{26}$/);
  const c = await s.call('chat', {});
  const cb = await body(c);
  assert.equal(cb.error.code, 'missing_token');
  assert.equal(cb.error.param, null);
  assert.deepEqual(Object.keys(cb), ['error'], 'the OpenAI body has no top-level request id');
  assert.deepEqual(s.failures(), [
    { reason: 'missing_token', inbound_shape: 'anthropic' },
    { reason: 'missing_token', inbound_shape: 'openai' },
  ]);
});

test('an unknown or malformed token gets the same invalid_token body', async () => {
  const s = await setup('invalid');
  const a = await body(s.call('chat', { authorization: 'Bearer gw_01NOTAREALTOKEN0000000000' }));
  const b = await body(s.call('chat', { authorization: 'Bearer x' }));
  assert.deepEqual(a, b);
  assert.equal(a.error.code, 'invalid_token');
  assert.deepEqual(s.failures()[1], {
    reason: 'invalid_token',
    inbound_shape: 'openai',
    token_hash_prefix: tokenHashPrefix('x'),
  });
});

test('a revoked key is 401 key_revoked with key_id and revoked_at on the next request', async () => {
  const s = await setup('revoked');
  const { key_id } = s.issued.record;
  await s.update((st) => revokeKey(st, key_id, s.now()).store);
  const m = await body(s.call('messages', { 'x-api-key': s.issued.token }));
  assert.equal(m.error.code, 'key_revoked');
  assert.equal(m.error.key_id, key_id);
  assert.match(String(m.error.revoked_at), /^\d{4}-\d\d-\d\dT.*Z$/);
  const c = await body(s.call('chat', { authorization: `Bearer ${s.issued.token}` }));
  assert.equal(c.error.code, 'key_revoked');
  assert.equal(c.error.key_id, key_id);
  assert.equal(s.failures()[0].gateway_key_id, key_id);
});

test('during a grace window both keys authenticate; after it the predecessor is key_revoked', async () => {
  const s = await setup('grace');
  let successor = '';
  await s.update((st) => {
    const r = rotateKey(st, s.issued.record.key_id, 60_000_000, { newId: s.newId, nowUs: s.now() });
    successor = r.token;
    return r.store;
  });
  assert.equal((await s.call('chat', { authorization: `Bearer ${s.issued.token}` })).status, 501);
  assert.equal((await s.call('messages', { 'x-api-key': successor })).status, 501);
  s.advance(60_000_001);
  const old = await body(s.call('chat', { authorization: `Bearer ${s.issued.token}` }));
  assert.equal(old.error.code, 'key_revoked');
  assert.equal((await s.call('messages', { 'x-api-key': successor })).status, 501);
});

test('unknown paths, the analytics namespace included, are 404', async () => {
  const s = await setup('notfound');
  void s;
  const app = createGatewayApp({
    keys: createKeystoreCache(join(tmp.dir, 'notfound', 'keys.json'), { log: silentLogger }),
    bus: createBus({ newId: createIdFactory(), clock: { nowUs: () => 0 }, log: silentLogger }),
    clock: { nowUs: () => 0 },
    newId: createIdFactory(),
    log: silentLogger,
  });
  for (const p of ['/analytics/summary', '/nope', '/v1/messages/x']) {
    const res = await app.request(p, { headers: { host: 'localhost' } });
    assert.equal(res.status, 404, p);
  }
});

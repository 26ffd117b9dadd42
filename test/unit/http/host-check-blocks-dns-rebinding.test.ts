import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Hono } from 'hono';
import { createHostCheck, isAllowedHost, isAllowedOrigin, parseAllowedHosts } from '#src/http/host-check.ts';
import { resolveLoopbackHost } from '#src/http/listen.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { createLogger } from '#src/lib/log.ts';

test('loopback names and addresses pass with any port; other names do not', () => {
  for (const h of [
    'localhost',
    'localhost:8422',
    '127.0.0.1:1',
    '127.1.2.3',
    '[::1]:8422',
    '::1',
    'app.localhost:9',
  ]) {
    assert.ok(isAllowedHost(h, []), h);
  }
  for (const h of [
    undefined,
    '',
    'evil.com',
    'evil.com:8422',
    '127.0.0.1.evil.com',
    '10.0.0.1',
    '[::2]:1',
    'localhost:abc',
    '127.0.0.1:99999',
    'localhost:65536',
    '[::1]:70000',
    '[::1]99',
  ]) {
    assert.ok(!isAllowedHost(h, []), String(h));
  }
});

test('a Host value is split at its one colon only when the rest is a port; more colons make a bare IPv6 literal', () => {
  for (const h of ['LOCALHOST:80', ' localhost:1 ', '127.0.0.1:65535', '0:0:0:0:0:0:0:1', 'x.localhost'])
    assert.ok(isAllowedHost(h, []), h);
  for (const h of [
    ':8080',
    '127.0.0.1:',
    '127.0.0.1:0x1',
    'a:b:c',
    'localhost::1',
    '127.0.0.256',
    'localhost.evil',
  ])
    assert.ok(!isAllowedHost(h, []), h);
  assert.ok(isAllowedHost('a:b:c', ['a:b:c']));
  assert.ok(isAllowedHost('svc:8422', ['svc:8422']));
  assert.ok(!isAllowedHost('svc:1', ['svc:8422']));
});

test('SVC_ALLOWED_HOSTS adds names such as a cluster Service name', () => {
  const allowed = parseAllowedHosts(' svc-gateway , svc-gateway.ns.svc.cluster.local ,,');
  assert.deepEqual(allowed, ['svc-gateway', 'svc-gateway.ns.svc.cluster.local']);
  assert.ok(isAllowedHost('svc-gateway:8422', allowed));
  assert.ok(isAllowedHost('SVC-GATEWAY.ns.svc.cluster.local', allowed));
  assert.ok(!isAllowedHost('other:8422', allowed));
});

test('SVC_ALLOWED_HOSTS refuses an entry no Host can equal: port 0, a port with leading zeros, an empty name or label', () => {
  for (const entry of [
    'svc:0',
    'svc:00080',
    '[fd00::1]:0',
    'svc:65536',
    ':8422',
    '[]:8422',
    'svc..ns',
    'svc:',
  ]) {
    assert.throws(
      () => parseAllowedHosts(`svc.ns,${entry}`),
      (err: unknown) =>
        isSvcError(err) &&
        err.code === 'startup_refused' &&
        err.exitCode === 1 &&
        err.message.startsWith(`SVC_ALLOWED_HOSTS entry "${entry}" is not a host name or address`),
      entry,
    );
  }
  assert.deepEqual(parseAllowedHosts('svc:1,svc:65535,[fd00::1]:8423,fd00::1,10.0.0.1:80'), [
    'svc:1',
    'svc:65535',
    '[fd00::1]:8423',
    'fd00::1',
    '10.0.0.1:80',
  ]);
});

test('a browser Origin must be the server own or an allowed name; no Origin is fine, null is foreign', () => {
  const host = '127.0.0.1:8422';
  assert.ok(isAllowedOrigin(undefined, [], host));
  assert.ok(isAllowedOrigin('http://127.0.0.1:8422', [], host));
  assert.ok(isAllowedOrigin('http://localhost:8421', [], 'localhost:8421'));
  assert.ok(isAllowedOrigin('http://[::1]:8422', [], '[::1]:8422'));
  assert.ok(isAllowedOrigin('http://localhost', [], 'localhost'), 'default ports on both sides');
  assert.ok(isAllowedOrigin('https://svc.example.com', [], 'svc.example.com'), 'behind a TLS terminator');
  assert.ok(!isAllowedOrigin('http://evil.com', [], host));
  assert.ok(!isAllowedOrigin('null', [], host));
  assert.ok(!isAllowedOrigin('file://x', [], host));
  assert.ok(isAllowedOrigin('https://svc-gateway', ['svc-gateway'], host));
});

test('a page of another local program (another loopback port or name) is a foreign Origin', () => {
  const host = '127.0.0.1:8422';
  assert.ok(!isAllowedOrigin('http://localhost:3000', [], host));
  assert.ok(!isAllowedOrigin('http://127.0.0.1:5173', [], host));
  assert.ok(!isAllowedOrigin('http://127.0.0.1', [], host), 'port 80 is another port');
  assert.ok(isAllowedOrigin('http://localhost:8422', [], host), 'loopback names on one port: one server');
  assert.ok(!isAllowedOrigin('http://127.0.0.1:8422', [], undefined), 'no Host to be the same as');
  // the operator can admit one, port pinned
  assert.ok(isAllowedOrigin('http://localhost:5173', ['localhost:5173'], host));
  assert.ok(!isAllowedOrigin('http://localhost:5174', ['localhost:5173'], host));
});

test('the middleware throws host_not_allowed / origin_not_allowed before the handler runs', async () => {
  const app = new Hono();
  app.use(createHostCheck({ allowedHosts: [] }));
  app.get('/', (c) => c.text('ok'));
  app.onError((err, c) => c.text(isSvcError(err) ? err.code : 'other', 403));
  const ok = await app.request('/', { headers: { host: 'localhost:1' } });
  assert.equal(await ok.text(), 'ok');
  const badHost = await app.request('/', { headers: { host: 'rebind.evil.com' } });
  assert.equal(await badHost.text(), 'host_not_allowed');
  const badOrigin = await app.request('/', { headers: { host: 'localhost', origin: 'http://evil.com' } });
  assert.equal(await badOrigin.text(), 'origin_not_allowed');
  const otherPort = await app.request('/', {
    headers: { host: 'localhost:8422', origin: 'http://localhost:3000' },
  });
  assert.equal(await otherPort.text(), 'origin_not_allowed');
  const own = await app.request('/', {
    headers: { host: 'localhost:8422', origin: 'http://localhost:8422' },
  });
  assert.equal(await own.text(), 'ok');
});

test('a non-loopback bind host is rewritten to 127.0.0.1 with a warning', () => {
  const lines: string[] = [];
  const log = createLogger({ write: (l) => lines.push(l) });
  assert.equal(resolveLoopbackHost('0.0.0.0', log), '127.0.0.1');
  assert.equal(lines.length, 1);
  assert.match(lines[0], /"level":"warn".*0\.0\.0\.0/);
  assert.equal(resolveLoopbackHost('127.0.0.2', log), '127.0.0.2');
  assert.equal(resolveLoopbackHost('::1', log), '::1');
  assert.equal(resolveLoopbackHost('localhost', log), '127.0.0.1');
  assert.equal(resolveLoopbackHost(undefined, log), '127.0.0.1');
  assert.equal(lines.length, 1);
});

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { gatewayFiles, issueKey, readEvents } from '../helpers/gateway-keys.ts';
import { rawExchange } from '../helpers/raw-http.ts';
import { freePort, makeTempDir, type RunningSvc, runSvc, startSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
const running: RunningSvc[] = [];
test.after(async () => {
  for (const s of running) await s.stop();
  tmp.cleanup();
});
let n = 0;
const fresh = (extra: Record<string, string | undefined> = {}) => {
  const home = join(tmp.dir, `h${n++}`);
  mkdirSync(home);
  return gatewayFiles(home, extra);
};

/** A raw request with an arbitrary Host header (fetch does not allow overriding it). */
function rawGet(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the gateway refuses to start without a provider key, a keystore, or any key', async () => {
  const noProvider = fresh({ ANTHROPIC_API_KEY: undefined });
  await issueKey(noProvider.env);
  const a = await runSvc(['gateway', '--port', String(await freePort())], { env: noProvider.env });
  assert.equal(a.code, 1);
  assert.match(a.stderr, /ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY/);

  const noKeystore = fresh();
  const b = await runSvc(['gateway', '--port', String(await freePort())], { env: noKeystore.env });
  assert.equal(b.code, 1);
  assert.match(b.stderr, /no keystore at .*keys\.json.*issue-key/);

  const empty = fresh({ ANTHROPIC_API_KEY: undefined, OPENROUTER_API_KEY: 'x' });
  writeFileSync(empty.keystore, '{"keys": []}');
  const c = await runSvc(['gateway', '--port', String(await freePort())], { env: empty.env });
  assert.equal(c.code, 1);
  assert.match(c.stderr, /has no keys.*issue-key/);
  for (const r of [a, b, c]) assert.equal(r.stderr.trim().split('\n').length, 1);
});

test('a non-loopback host is rewritten to 127.0.0.1 with a warning; healthz answers without auth', async () => {
  const f = fresh({ SVC_GATEWAY_HOST: '0.0.0.0' });
  await issueKey(f.env);
  const gw = await startSvc(['gateway', '--port', '{port}'], { env: f.env });
  running.push(gw);
  assert.match(gw.output().stderr, /"level":"warn".*0\.0\.0\.0.*127\.0\.0\.1/);
  const res = await fetch(`${gw.url}/healthz`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('svc-api-version'), '1.0');
  assert.equal(res.headers.get('svc-api-versions-supported'), '1.0');
  const body = (await res.json()) as { status: string; uptime_seconds: number };
  assert.equal(body.status, 'ok');
  assert.equal(typeof body.uptime_seconds, 'number');
  // the gateway hosts no analytics, but that path is service-owned: its 404 carries the version headers
  const analytics = await fetch(`${gw.url}/analytics/summary`);
  assert.equal(analytics.status, 404);
  assert.equal(analytics.headers.get('svc-api-version'), '1.0');
  assert.equal(analytics.headers.get('svc-api-versions-supported'), '1.0');
  assert.equal(await gw.stop(), 0);
  const registered = readEvents(f.db, 'bus.subscriber_registered').map((e) => e.payload.subscriber);
  assert.ok(registered.includes('trace_writer'), 'bus.subscriber_registered at start');
});

test('a foreign Host or browser Origin is refused with 403; SVC_ALLOWED_HOSTS admits a Service name', async () => {
  const f = fresh({ SVC_ALLOWED_HOSTS: 'svc-gateway,svc-gateway.default.svc' });
  const { token } = await issueKey(f.env);
  const gw = await startSvc(['gateway', '--port', '{port}'], { env: f.env });
  running.push(gw);
  const foreign = await rawGet(gw.port, '/healthz', { host: 'rebind.attacker.example' });
  assert.equal(foreign.status, 403);
  assert.equal(JSON.parse(foreign.body).error.code, 'host_not_allowed');
  // the refusal comes before versioning, yet a service-owned path's answer carries the headers (spec 1)
  assert.equal(foreign.headers['svc-api-version'], '1.0');
  assert.equal(foreign.headers['svc-api-versions-supported'], '1.0');
  const pinned = await rawGet(gw.port, '/analytics/summary', {
    host: 'rebind.attacker.example',
    'svc-api-version': '1.3',
  });
  assert.equal(pinned.status, 403);
  assert.equal(pinned.headers['svc-api-version'], '1.3');
  const onShape = await rawGet(gw.port, '/v1/models', { host: 'rebind.attacker.example:8422' });
  assert.equal(onShape.status, 403);
  assert.equal(JSON.parse(onShape.body).error.code, 'host_not_allowed');
  // provider-shape paths and /metrics never carry them (spec 1 §Versioning, DECISIONS §5)
  assert.equal(onShape.headers['svc-api-version'], undefined);
  const metrics = await rawGet(gw.port, '/metrics', { host: 'rebind.attacker.example' });
  assert.equal(metrics.status, 403);
  assert.equal(metrics.headers['svc-api-version'], undefined);
  // a Host the HTTP adapter cannot read as written is refused the same way, not with its own bare 400
  for (const host of [
    '127.1',
    '2130706433',
    '[::ffff:127.0.0.1]',
    '127.0.0.1:99999',
    '[::1]99',
    'exa mple',
  ]) {
    const odd = await rawGet(gw.port, '/healthz', { host });
    assert.equal(odd.status, 403, `Host ${JSON.stringify(host)}`);
    assert.equal(JSON.parse(odd.body).error.code, 'host_not_allowed');
    assert.equal(odd.headers['svc-api-version'], '1.0');
    assert.match(String(odd.headers['svc-request-id']), /^\w+/);
    const oddShape = await rawGet(gw.port, '/v1/models', { host });
    assert.equal(oddShape.status, 403, `Host ${JSON.stringify(host)} on /v1/models`);
    assert.equal(JSON.parse(oddShape.body).error.code, 'host_not_allowed');
  }
  // an HTTP/1.1 request without any Host
  const hostless = await rawExchange(gw.port, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
  assert.match(hostless, /^HTTP\/1\.1 403 /);
  assert.match(hostless, /"code":"host_not_allowed"/);
  assert.match(hostless, /svc-api-version: 1\.0/i);
  // a second Host line is read with the first (as fetch's Headers joins them), in either order: refused,
  // never the first line alone; a header name's case does not matter
  const hostLines = [`Host: 127.0.0.1:${gw.port}`, 'Host: rebind.attacker.example'];
  for (const lines of [hostLines, [...hostLines].reverse()]) {
    const twice = await rawExchange(
      gw.port,
      `GET /healthz HTTP/1.1\r\n${lines.join('\r\n')}\r\nConnection: close\r\n\r\n`,
    );
    assert.match(twice, /^HTTP\/1\.1 403 /, lines.join(' then '));
    assert.match(twice, /"code":"host_not_allowed"/);
  }
  const upper = await rawExchange(
    gw.port,
    `GET /healthz HTTP/1.1\r\nHOST: 127.0.0.1:${gw.port}\r\nConnection: close\r\n\r\n`,
  );
  assert.match(upper, /^HTTP\/1\.1 200 /);
  const service = await rawGet(gw.port, '/healthz', { host: 'svc-gateway:8422' });
  assert.equal(service.status, 200);
  const localhost = await rawGet(gw.port, '/healthz', { host: `localhost:${gw.port}` });
  assert.equal(localhost.status, 200);
  const origin = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { origin: 'http://attacker.example' },
    body: '{}',
  });
  assert.equal(origin.status, 403);
  const originBody = (await origin.json()) as { type: string; error: { code: string } };
  assert.equal(originBody.type, 'error');
  assert.equal(originBody.error.code, 'origin_not_allowed');
  assert.equal(origin.headers.get('svc-api-version'), null);
  const originOnHealth = await fetch(`${gw.url}/healthz`, { headers: { origin: 'http://attacker.example' } });
  assert.equal(originOnHealth.status, 403);
  assert.equal(originOnHealth.headers.get('svc-api-version'), '1.0');
  assert.equal(originOnHealth.headers.get('svc-api-versions-supported'), '1.0');
  const sameOrigin = await fetch(`${gw.url}/healthz`, { headers: { origin: gw.url } });
  assert.equal(sameOrigin.status, 200);
  // a page of another local program (a dev server on another localhost port) is as foreign as any site:
  // its form post (a simple request, no CORS preflight) with a token it got hold of never reaches a model
  for (const other of ['http://localhost:3000', `http://127.0.0.1:${gw.port + 1}`]) {
    const fromPage = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { origin: other, 'content-type': 'text/plain', 'x-api-key': token },
      body: JSON.stringify({ model: 'anthropic:claude-haiku-4-5', max_tokens: 8, messages: [] }),
    });
    assert.equal(fromPage.status, 403, other);
    assert.equal(((await fromPage.json()) as { error: { code: string } }).error.code, 'origin_not_allowed');
  }
});

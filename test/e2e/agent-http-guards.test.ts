import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { rawRequest, startAgentServer } from '../helpers/agent-server.ts';
import { rawExchange } from '../helpers/raw-http.ts';

const server = await startAgentServer({ after }, { env: { SVC_ALLOWED_HOSTS: 'svc-agent.internal' } });
const { api } = server;
const port = server.svc.port;
const session = (await api('POST', '/sessions', { workspace_path: server.workspace })).body as { id: string };

test('a body that is not JSON is 415 unsupported_media_type on every endpoint that takes one', async () => {
  const turn = `/sessions/${session.id}/turns`;
  const notUtf8 = Buffer.concat([
    Buffer.from(`{"workspace_path":"${server.workspace}","content":[{"type":"text","text":"h`),
    Buffer.from([0xff, 0xc3]),
    Buffer.from('i"}]}'),
  ]);
  const cases: Array<[string, string]> = [
    ['POST', '/sessions'],
    ['PATCH', `/sessions/${session.id}`],
    ['POST', turn],
    ['POST', `${turn}/01ARZ3NDEKTSV4RRFFQ69G5FAV/confirmations/R1`],
    ['POST', `${turn}/01ARZ3NDEKTSV4RRFFQ69G5FAV/cancel`],
    ['POST', '/routing/check'],
  ];
  for (const [method, path] of cases) {
    for (const [headers, body] of [
      [{ 'content-type': 'text/plain' }, '{"workspace_path":"/tmp"}'],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, 'a=b'],
      [{ 'content-type': 'application/json' }, '{"workspace_path": '],
      [{}, '{}'],
      // compressed (or said to be): the gateway refuses it alike; it was read as text and accepted
      [{ 'content-type': 'application/json', 'content-encoding': 'gzip' }, '{"workspace_path":"/tmp"}'],
      // not UTF-8, so not JSON (RFC 8259 §8.1): it was decoded to U+FFFD and the turn stored that text
      [{ 'content-type': 'application/json' }, notUtf8],
    ] as const) {
      const res = await rawRequest(port, method, path, { host: `127.0.0.1:${port}`, ...headers }, body);
      assert.equal(res.status, 415, `${method} ${path} ${JSON.stringify(headers)}`);
      assert.equal(JSON.parse(res.body).error.code, 'unsupported_media_type');
    }
  }
  assert.deepEqual((await api('GET', `/sessions/${session.id}/messages`)).body.messages, []);
  // a required body that is absent is not JSON either; optional ones (cancel, check) accept nothing
  assert.equal((await api('POST', '/sessions')).status, 415);
  assert.equal((await api('POST', '/routing/check')).status, 200);
  const charset = await api('POST', '/sessions', JSON.stringify({ workspace_path: server.workspace }), {
    'content-type': 'application/json; charset=utf-8',
  });
  assert.equal(charset.status, 201);
});

test('a foreign Host or browser Origin is 403; loopback names and SVC_ALLOWED_HOSTS pass; no CORS headers', async () => {
  const get = (headers: Record<string, string>) => rawRequest(port, 'GET', '/sessions', headers);
  let res = await get({ host: 'evil.example' });
  assert.equal(res.status, 403);
  assert.equal(JSON.parse(res.body).error.code, 'host_not_allowed');
  // the refusal comes before versioning, yet carries the version headers like every service answer (spec 1)
  assert.equal(res.headers['svc-api-version'], '1.0');
  assert.equal(res.headers['svc-api-versions-supported'], '1.0');
  res = await get({ host: `127.0.0.1:${port}`, origin: 'http://evil.example' });
  assert.equal(res.status, 403);
  assert.equal(JSON.parse(res.body).error.code, 'origin_not_allowed');
  assert.equal(res.headers['svc-api-version'], '1.0');
  res = await rawRequest(
    port,
    'POST',
    '/sessions',
    { host: `localhost:${port}`, origin: 'null', 'content-type': 'application/json' },
    '{}',
  );
  assert.equal(JSON.parse(res.body).error.code, 'origin_not_allowed');
  const passing: Array<Record<string, string>> = [
    { host: `localhost:${port}`, origin: `http://localhost:${port}` },
    { host: `[::1]:${port}` },
    { host: 'svc-agent.internal' },
  ];
  for (const headers of passing) {
    res = await get(headers);
    assert.equal(res.status, 200, JSON.stringify(headers));
  }
  const preflight = await rawRequest(port, 'OPTIONS', '/sessions', {
    host: `127.0.0.1:${port}`,
    origin: 'http://evil.example',
    'access-control-request-method': 'POST',
  });
  assert.equal(preflight.status, 403);
  for (const r of [res, preflight])
    assert.deepEqual(
      Object.keys(r.headers).filter((h) => h.startsWith('access-control-')),
      [],
    );
});

test("another site's page cannot run a GET without an Origin (an image, a no-cors fetch): 403; following a link to the dashboard passes", async () => {
  const host = `127.0.0.1:${port}`;
  // what a browser sends for <img src="http://127.0.0.1:8421/analytics/user/alice/export"> on another site
  // (or another localhost port, which is same-site): no Origin on a GET, Sec-Fetch-* say who asked
  for (const site of ['cross-site', 'same-site']) {
    const res = await rawRequest(port, 'GET', '/analytics/user/alice/export', {
      host,
      'sec-fetch-site': site,
      'sec-fetch-mode': 'no-cors',
      'sec-fetch-dest': 'image',
    });
    assert.equal(res.status, 403, site);
    assert.equal(JSON.parse(res.body).error.code, 'origin_not_allowed', site);
  }
  const passing: Array<[string, Record<string, string>]> = [
    [
      '/dashboard/',
      { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
    ],
    ['/sessions', { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' }],
    ['/sessions', { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }],
    // an Origin decides by itself: the server's own page's fetch
    ['/sessions', { origin: `http://${host}`, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' }],
  ];
  for (const [path, headers] of passing) {
    const res = await rawRequest(port, 'GET', path, { host, ...headers });
    assert.equal(res.status, 200, `${path} ${JSON.stringify(headers)}: ${res.body.slice(0, 200)}`);
  }
});

test('version headers on every service path, 410 for a pin below the minimum, none on /metrics', async () => {
  let res = await api('GET', '/health', undefined, { 'svc-api-version': '1.0' });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('svc-api-version'), '1.0');
  assert.equal(res.headers.get('svc-api-versions-supported'), '1.0');
  res = await api('GET', `/sessions/${session.id}`, undefined, { 'svc-api-version': '0.9' });
  assert.equal(res.status, 410);
  assert.equal(res.body.error.code, 'version_unsupported');
  assert.equal(res.headers.get('svc-api-versions-supported'), '1.0');
  res = await api('POST', '/sessions', { workspace_path: server.workspace }, { 'svc-api-version': '0.1' });
  assert.equal(res.status, 410);
  const metrics = await fetch(`${server.url}/metrics`, { headers: { 'svc-api-version': '0.9' } });
  assert.equal(metrics.status, 200);
  assert.equal(metrics.headers.get('svc-api-version'), null);
  assert.match(await metrics.text(), /svc_session_count \d+/);
});

test('unknown paths are JSON 404 not_found, whatever the method', async () => {
  for (const [method, path] of [
    ['GET', '/nope'],
    ['GET', '/v1/messages'],
    ['POST', '/sessions/x/y/z'],
    ['PUT', '/nope'],
  ]) {
    const res = await api(method, path);
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.equal(res.body.error.code, 'not_found');
    assert.equal(res.headers.get('content-type'), 'application/json');
  }
});

test('a known path with a method it does not serve is 405 method_not_allowed with an Allow header', async () => {
  const sid = session.id;
  const turn = `/sessions/${sid}/turns/01ARZ3NDEKTSV4RRFFQ69G5FAV`;
  for (const [method, path, allow] of [
    ['PUT', '/sessions', 'GET, HEAD, POST'],
    ['POST', `/sessions/${sid}`, 'GET, HEAD, PATCH, DELETE'],
    ['DELETE', `/sessions/${sid}/messages`, 'GET, HEAD'],
    ['PUT', `/sessions/${sid}/events`, 'GET, HEAD'],
    ['GET', `/sessions/${sid}/turns`, 'POST'],
    ['GET', `${turn}/cancel`, 'POST'],
    ['DELETE', `${turn}/confirmations/R1`, 'POST'],
    ['POST', `/sessions/${sid}/stream`, 'GET, HEAD'],
    ['POST', '/health', 'GET, HEAD'],
    ['DELETE', '/models', 'GET, HEAD'],
    ['GET', '/routing/reload', 'POST'],
    ['POST', '/analytics/sessions', 'GET, HEAD'],
  ]) {
    const res = await api(method, path);
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(res.headers.get('allow'), allow, `${method} ${path}`);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.body.error.code, 'method_not_allowed');
    assert.match(res.body.error.message, new RegExp(`^${method} is not allowed`));
    assert.deepEqual(res.body.error.details.allow, allow.split(', '));
    // a service answer like any other (spec 1 version headers)
    assert.equal(res.headers.get('svc-api-version'), '1.0');
  }
});

test('a query parameter given twice is 400 validation_error naming it, not read as its first value', async () => {
  const other = (await api('POST', '/sessions', { workspace_path: server.workspace })).body as { id: string };
  for (const [method, path, field] of [
    // the first value (true) ended and purged the session
    ['DELETE', `/sessions/${other.id}?purge=true&purge=false`, 'purge'],
    ['GET', '/sessions?limit=5&limit=abc', 'limit'],
    ['GET', `/sessions/${other.id}/messages?limit=1&limit=2`, 'limit'],
    ['GET', `/sessions/${other.id}/events?types=turn.started&types=turn.completed`, 'types'],
  ] as const) {
    const res = await api(method, path);
    assert.equal(res.status, 400, `${method} ${path}`);
    assert.equal(res.body.error.code, 'validation_error');
    assert.equal(res.body.error.details.field, field);
    assert.equal(res.body.error.message, `${field}: is given 2 times; give it once`);
  }
  // the session was not ended: a patch is still taken (an ended one is 409 session_already_ended)
  const still = await api('PATCH', `/sessions/${other.id}`, { active_model: null });
  assert.equal(still.status, 200, JSON.stringify(still.body));
});

test('turn submissions are validated before anything runs: invalid_content, validation_error, 404', async () => {
  const path = `/sessions/${session.id}/turns`;
  let res = await api('POST', path, { content: [{ type: 'tool_result', tool_use_id: 'x', content: 'y' }] });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'invalid_content');
  assert.equal(res.body.error.details.field, 'content[0].type');
  res = await api('POST', path, { content: [] });
  assert.equal(res.body.error.code, 'invalid_content');
  res = await api('POST', path, { content: 'hello' });
  assert.equal(res.body.error.code, 'validation_error');
  assert.equal(res.body.error.details.field, 'content');
  res = await api('POST', path, { content: [{ type: 'text', text: 'x' }], per_message_override: 5 });
  assert.equal(res.body.error.details.field, 'per_message_override');
  res = await api('POST', '/sessions/sess_nope/turns', { content: [{ type: 'text', text: 'x' }] });
  assert.equal(res.status, 404);
  assert.equal(res.body.error.code, 'session_not_found');
  res = await api('POST', `${path}/T1/confirmations/R1`, { decision: 'perhaps' });
  assert.equal(res.body.error.details.field, 'decision');
  res = await api('POST', `${path}/T1/cancel`, { reason: 5 });
  assert.equal(res.body.error.details.field, 'reason');
});

test('HTTP that Node refuses before the app (a malformed header, headers over 16 KiB, a target that is no path) gets the error body, version headers and a log line', async () => {
  for (const [bytes, status, code] of [
    ['GET /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n', 400, 'invalid_request'],
    // targets the Node adapter cannot make a URL of: it answered a bare 400 (no body, headers or log line)
    ['OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 400, 'invalid_request'],
    ['GET /sessions\\x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 400, 'invalid_request'],
    [
      `GET /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nx-pad: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'request_headers_too_large',
    ],
  ] as const) {
    const answer = await rawExchange(port, bytes);
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), answer);
    assert.match(head, /\r\nsvc-api-version: 1\.0\r\n/i);
    assert.match(head, /\r\nconnection: close(\r\n|$)/i);
    assert.equal(JSON.parse(body).error.code, code);
    const logged = () =>
      server.svc
        .output()
        .stdout.split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .some((l) => l.msg === 'request' && l.status === status && l.error_code === code);
    await new Promise<void>((resolve) => {
      const check = () => {
        if (!logged()) return;
        server.svc.child.stdout?.off('data', check);
        resolve();
      };
      server.svc.child.stdout?.on('data', check);
      check();
    });
  }
  assert.doesNotMatch(server.svc.output().stdout, /aaaaaaaa|no colon here/, 'the bytes sent are not logged');
});

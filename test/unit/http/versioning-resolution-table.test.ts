import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { Hono } from 'hono';
import { createServiceErrorHandler, serviceNotFound } from '#src/http/service-errors.ts';
import {
  CURRENT_API_VERSION,
  createVersioning,
  DEPRECATED_API_VERSIONS,
  MIN_SUPPORTED_API_VERSION,
  resolveApiVersion,
  type VersioningEnv,
} from '#src/http/versioning.ts';
import { isSvcError, SvcError } from '#src/lib/errors.ts';
import { createLogger, silentLogger } from '#src/lib/log.ts';

const DEPRECATED = [
  { version: '2.0', sunset: '2026-06-30' },
  { version: '1.5', sunset: '2026-01-31' },
];
const ON_SUNSET_DAY = '2026-06-30T23:59:59.999Z';
const AFTER_SUNSET = '2026-07-01T00:00:00.000Z';

function makeApp(nowIso = '2026-03-01T12:00:00Z', logLines: string[] = []) {
  const app = new Hono<VersioningEnv>();
  const handled: string[] = [];
  app.use(
    createVersioning({
      current: '2.1',
      minSupported: '1.0',
      deprecated: DEPRECATED,
      now: () => new Date(nowIso),
      log: createLogger({ write: (l) => logLines.push(l) }),
    }),
  );
  app.get('/sessions', (c) => {
    handled.push(c.var.apiVersion);
    return c.json({ ok: true });
  });
  app.get('/boom', () => {
    throw new SvcError('session_not_found', { message: 'no such session' });
  });
  app.post('/v1/messages', (c) => c.json({ provider: true }));
  app.get('/metrics', (c) => c.text('# metrics'));
  app.notFound(serviceNotFound);
  app.onError(createServiceErrorHandler({ log: silentLogger }));
  return { app, handled };
}

const seen: Response[] = [];
async function get(
  app: Hono<any>,
  path: string,
  version?: string,
  init: RequestInit = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  if (version !== undefined) headers.set('Svc-API-Version', version);
  const res = await app.request(path, { ...init, headers });
  seen.push(res);
  return res;
}

function versionHeaders(res: Response) {
  return {
    version: res.headers.get('svc-api-version'),
    supported: res.headers.get('svc-api-versions-supported'),
    deprecation: res.headers.get('deprecation'),
    sunset: res.headers.get('sunset'),
  };
}

test('the shipped constants are current 1.0, minimum 1.0 and no deprecated versions', () => {
  assert.equal(CURRENT_API_VERSION, '1.0');
  assert.equal(MIN_SUPPORTED_API_VERSION, '1.0');
  assert.deepEqual(DEPRECATED_API_VERSIONS, []);
});

test('row: absent header serves the current version', async () => {
  const { app, handled } = makeApp();
  const res = await get(app, '/sessions');
  assert.equal(res.status, 200);
  assert.deepEqual(versionHeaders(res), {
    version: '2.1',
    supported: '2.1, 2.0, 1.0',
    deprecation: null,
    sunset: null,
  });
  assert.deepEqual(handled, ['2.1']);
});

test('row: empty header serves the current version', async () => {
  const res = await get(makeApp().app, '/sessions', '');
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('svc-api-version'), '2.1');
});

test('row: deprecated version inside its window is served with Deprecation and Sunset and a warning', async () => {
  const lines: string[] = [];
  const { app } = makeApp('2026-03-01T00:00:00Z', lines);
  const res = await get(app, '/sessions', '2.0', { headers: { authorization: 'Bearer gw_secret_token' } });
  assert.equal(res.status, 200);
  assert.deepEqual(versionHeaders(res), {
    version: '2.0',
    supported: '2.1, 2.0, 1.0',
    deprecation: 'true',
    sunset: '2026-06-30',
  });
  const warn = lines.map((l) => JSON.parse(l)).find((l) => l.level === 'warn');
  assert.equal(
    warn.token_hash_prefix,
    createHash('sha256').update('gw_secret_token').digest('hex').slice(0, 12),
  );
  assert.equal(warn.requested, '2.0');
  assert.ok(!lines.join('').includes('gw_secret_token'));
});

test('row: on the sunset day itself (UTC) the deprecated version is still served', async () => {
  const res = await get(makeApp(ON_SUNSET_DAY).app, '/sessions', '2.0');
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('deprecation'), 'true');
  assert.equal(res.headers.get('sunset'), '2026-06-30');
});

test('row: the day after the sunset date is 410 past_sunset with the Sunset header', async () => {
  const { app, handled } = makeApp(AFTER_SUNSET);
  const res = await get(app, '/sessions', '2.0');
  assert.equal(res.status, 410);
  assert.deepEqual(versionHeaders(res), {
    version: '2.0',
    supported: '2.1, 1.0',
    deprecation: null,
    sunset: '2026-06-30',
  });
  const body = (await res.json()) as any;
  assert.equal(body.error.code, 'version_unsupported');
  assert.equal(body.error.reason, 'past_sunset');
  assert.equal(body.error.requested, '2.0');
  assert.equal(body.error.min_supported, '1.0');
  assert.equal(body.error.current, '2.1');
  assert.equal(typeof body.error.message, 'string');
  assert.deepEqual(handled, []);
});

test('row: a version below the minimum is 410 below_min without Sunset', async () => {
  const { app, handled } = makeApp();
  const res = await get(app, '/sessions', '0.9');
  assert.equal(res.status, 410);
  assert.deepEqual(versionHeaders(res), {
    version: '0.9',
    supported: '2.1, 2.0, 1.0',
    deprecation: null,
    sunset: null,
  });
  assert.deepEqual(((await res.json()) as any).error, {
    code: 'version_unsupported',
    message: (await get(app, '/sessions', '0.9').then((r) => r.json() as any)).error.message,
    requested: '0.9',
    min_supported: '1.0',
    current: '2.1',
    reason: 'below_min',
  });
  assert.deepEqual(handled, []);
});

test('row: a full semantic version below the minimum, pre-release or build included, is 410 below_min', async () => {
  for (const v of ['0.9.0-beta.1', '0.9.3+build.7', '0.1.0-rc.1+exp.sha.5114f85']) {
    const res = await get(makeApp().app, '/sessions', v);
    assert.equal(res.status, 410, v);
    assert.equal(res.headers.get('svc-api-version'), v);
    assert.equal(((await res.json()) as any).error.reason, 'below_min', v);
  }
  // at or above the minimum it is served, and a deprecated one is served with its Deprecation and Sunset
  assert.equal((await get(makeApp().app, '/sessions', '1.0.0-rc.1')).status, 200);
  const deprecated = await get(makeApp().app, '/sessions', '2.0.1-beta');
  assert.equal(deprecated.status, 200);
  assert.equal(deprecated.headers.get('sunset'), '2026-06-30');
});

test('row: an unknown or future version above the minimum is echoed and served', async () => {
  for (const v of ['3.7', '1.2', '2.1.4']) {
    const res = await get(makeApp().app, '/sessions', v);
    assert.equal(res.status, 200, v);
    assert.equal(res.headers.get('svc-api-version'), v);
    assert.equal(res.headers.get('deprecation'), null);
  }
});

test('row: a malformed version is echoed and served', async () => {
  // semantic versioning forbids leading zeros: `00.9` is no version below the minimum, but a malformed one
  for (const v of [
    'banana',
    'v1',
    '1',
    '1.0-beta',
    '0.9-beta',
    '0.9.0-',
    '0.9.0-beta..1',
    'v0.9.0',
    '00.9',
    '0.09',
    '0.9.00',
  ]) {
    const res = await get(makeApp().app, '/sessions', v);
    assert.equal(res.status, 200, v);
    assert.equal(res.headers.get('svc-api-version'), v);
  }
});

test('OPTIONS answers 204 with the version headers before any handler', async () => {
  const { app, handled } = makeApp();
  const res = await get(app, '/sessions', undefined, { method: 'OPTIONS' });
  assert.equal(res.status, 204);
  assert.deepEqual(versionHeaders(res), {
    version: '2.1',
    supported: '2.1, 2.0, 1.0',
    deprecation: null,
    sunset: null,
  });
  const dep = await get(app, '/anything/at/all', '2.0', { method: 'OPTIONS' });
  assert.equal(dep.status, 204);
  assert.equal(dep.headers.get('deprecation'), 'true');
  assert.equal(dep.headers.get('sunset'), '2026-06-30');
  const gone = await get(app, '/sessions', '0.1', { method: 'OPTIONS' });
  assert.equal(gone.status, 410);
  assert.deepEqual(handled, []);
});

test('error and 404 responses of service paths carry the headers too', async () => {
  const { app } = makeApp();
  const boom = await get(app, '/boom', '2.0');
  assert.equal(boom.status, 404);
  assert.equal(((await boom.json()) as any).error.code, 'session_not_found');
  assert.equal(boom.headers.get('svc-api-version'), '2.0');
  assert.equal(boom.headers.get('sunset'), '2026-06-30');
  const missing = await get(app, '/nope');
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get('svc-api-versions-supported'), '2.1, 2.0, 1.0');
});

test('provider-shape paths and /metrics are untouched, even with an unsupported pin', async () => {
  const { app } = makeApp();
  for (const [method, path] of [
    ['POST', '/v1/messages'],
    ['GET', '/metrics'],
  ]) {
    const res = await get(app, path, '0.1', { method });
    assert.equal(res.status, 200, path);
    assert.deepEqual(versionHeaders(res), {
      version: null,
      supported: null,
      deprecation: null,
      sunset: null,
    });
  }
});

test('streaming responses keep the headers and are not buffered', { timeout: 10_000 }, async () => {
  const app = new Hono();
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  app.use(createVersioning({ log: silentLogger }));
  app.get('/stream', () => {
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode('first'));
        await released; // the rest only after the client has read the first chunk
        controller.enqueue(new TextEncoder().encode('second'));
        controller.close();
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  });
  const res = await app.request('/stream');
  assert.equal(res.headers.get('svc-api-version'), '1.0');
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const reader = res.body!.getReader();
  const first = await reader.read();
  assert.equal(new TextDecoder().decode(first.value), 'first');
  release();
  const second = await reader.read();
  assert.equal(new TextDecoder().decode(second.value), 'second');
});

test('Deprecation never appears without Sunset on any response above', () => {
  assert.ok(seen.length > 10);
  for (const res of seen) if (res.headers.has('deprecation')) assert.ok(res.headers.has('sunset'));
});

test('the pure resolver follows the table with a strict UTC date comparison', () => {
  const table = {
    current: '1.0',
    minSupported: '1.0',
    deprecated: [{ version: '1.0', sunset: '2027-01-01' }],
  };
  assert.deepEqual(resolveApiVersion('1.0', table, '2027-01-01'), {
    outcome: 'served',
    version: '1.0',
    sunset: '2027-01-01',
  });
  assert.deepEqual(resolveApiVersion('1.0', table, '2027-01-02'), {
    outcome: 'rejected',
    version: '1.0',
    reason: 'past_sunset',
    sunset: '2027-01-01',
  });
  assert.deepEqual(resolveApiVersion(' 0.9 ', table, '2026-01-01'), {
    outcome: 'rejected',
    version: '0.9',
    reason: 'below_min',
  });
  assert.deepEqual(resolveApiVersion(undefined, table, '2026-01-01'), {
    outcome: 'served',
    version: '1.0',
  });
});

test('an invalid version table is refused at creation', () => {
  assert.throws(
    () => createVersioning({ log: silentLogger, deprecated: [{ version: '1.0', sunset: '2026-13-45' }] }),
    (err: unknown) => isSvcError(err) && err.code === 'config_invalid',
  );
  assert.throws(() => createVersioning({ log: silentLogger, current: 'one' }));
});

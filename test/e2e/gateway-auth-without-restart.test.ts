import assert from 'node:assert/strict';
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { editKeyRecord, gatewayFiles, issueKey, parseLines, readEvents } from '../helpers/gateway-keys.ts';
import { makeTempDir, type RunningSvc, runSvc, startSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
const fake = await startFakeProvider();
const f = gatewayFiles(tmp.dir, fakeProviderEnv(fake, ['anthropic', 'openai']));
const running: RunningSvc[] = [];
const tokens: string[] = [];
test.after(async () => {
  for (const s of running) await s.stop();
  await fake.close();
  tmp.cleanup();
});

interface Outcome {
  status: number;
  error?: Record<string, unknown>;
}

/** Calls both shapes through the official SDKs; errors normalised to the `error` object of each body. */
async function callMessages(url: string, token: string): Promise<Outcome> {
  const client = new Anthropic({ apiKey: token, baseURL: url, maxRetries: 0 });
  try {
    await client.messages.create({
      model: 'anthropic:claude-sonnet-4-5',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    });
    return { status: 200 };
  } catch (err) {
    if (!(err instanceof Anthropic.APIError)) throw err;
    return { status: err.status ?? 0, error: (err.error as { error: Record<string, unknown> }).error };
  }
}

async function callChat(url: string, token: string): Promise<Outcome> {
  const client = new OpenAI({ apiKey: token, baseURL: `${url}/v1`, maxRetries: 0 });
  try {
    await client.chat.completions.create({
      model: 'openai:gpt-5-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    return { status: 200 };
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    return { status: err.status ?? 0, error: err.error as Record<string, unknown> };
  }
}

/** Authenticated and answered by the provider through the gateway. */
function assertReachedProxy(o: Outcome, what: string): void {
  assert.equal(o.status, 200, `${what}: ${JSON.stringify(o)}`);
}

/** gateway_key_id of the newest llm.call_completed: the key actually used (spec 1 §Authentication 5). */
function lastCallKeyId(): unknown {
  return readEvents(f.db, 'llm.call_completed').at(-1)?.payload.gateway_key_id;
}

function assertRevoked(o: Outcome, keyId: string, what: string): string {
  assert.equal(o.status, 401, what);
  assert.equal(o.error?.code, 'key_revoked', what);
  assert.equal(o.error?.key_id, keyId, what);
  assert.match(String(o.error?.revoked_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, what);
  return String(o.error?.revoked_at);
}

/** The gateway's one warning that it made the keystore private, naming the file and its mode before. */
function assertKeystoreWarning(gw: RunningSvc, previousMode: string): void {
  const warnings = gw
    .output()
    .stderr.split('\n')
    .filter((l) => l.includes('the keystore was writable by other users; it is now mode 0600'));
  assert.equal(warnings.length, 1, gw.output().stderr);
  const line = JSON.parse(warnings[0]);
  assert.equal(line.level, 'warn');
  assert.equal(line.keystore, f.keystore);
  assert.equal(line.previous_mode, previousMode);
}

/** A POST whose headers go on the wire exactly as listed (repeated names stay separate header lines). */
function rawPost(
  base: string,
  path: string,
  headers: string[],
  body = '{}',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, {
      method: 'POST',
      // an array of raw headers gets no automatic Host
      headers: ['host', new URL(base).host, 'content-type', 'application/json', ...headers],
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function start(): Promise<RunningSvc> {
  const s = await startSvc(['gateway', '--port', '{port}'], { env: f.env });
  running.push(s);
  return s;
}

test('keys issued, revoked and rotated while the gateway runs take effect on the next request', async (t) => {
  const first = await issueKey(f.env);
  tokens.push(first.token);
  const gw = await start();

  await t.test('an issued key reaches the proxy path on both shapes', async () => {
    assertReachedProxy(await callMessages(gw.url, first.token), 'messages');
    assertReachedProxy(await callChat(gw.url, first.token), 'chat');
  });

  await t.test('a key issued after start works without restart', async () => {
    const later = await issueKey(f.env);
    tokens.push(later.token);
    assertReachedProxy(await callChat(gw.url, later.token), 'chat');
  });

  await t.test('missing and unknown tokens get 401 in each shape', async () => {
    const bad = await callMessages(gw.url, 'gw_01NOTAREALKEY000000000000');
    assert.equal(bad.status, 401);
    assert.equal(bad.error?.code, 'invalid_token');
    assert.equal(bad.error?.type, 'authentication_error');
    const badChat = await callChat(gw.url, 'not-even-a-gateway-token');
    assert.equal(badChat.status, 401);
    assert.equal(badChat.error?.code, 'invalid_token');
    const missing = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    assert.equal(missing.status, 401);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'missing_token');
  });

  await t.test(
    'an Authorization that is not one Bearer token is 401 invalid_token, not missing_token',
    async () => {
      const cases: Array<[string, string[]]> = [
        [
          'two Authorization headers',
          ['authorization', `Bearer ${first.token}`, 'authorization', 'Bearer gw_b'],
        ],
        ['Bearer a b', ['authorization', `Bearer ${first.token} extra`]],
        ['Basic', ['authorization', `Basic ${Buffer.from(`u:${first.token}`).toString('base64')}`]],
      ];
      for (const [what, headers] of cases) {
        const { status, body } = await rawPost(gw.url, '/v1/chat/completions', headers);
        assert.equal(status, 401, what);
        assert.equal((JSON.parse(body) as { error: { code: string } }).error.code, 'invalid_token', what);
      }
    },
  );

  await t.test(
    'revoke → the very next request is 401 key_revoked on both shapes, with key_id and revoked_at',
    async () => {
      const r = await runSvc(['gateway', 'revoke-key', first.keyId], { env: f.env });
      assert.equal(r.code, 0, r.stderr);
      const revokedAt = parseLines(r.stdout).revoked_at;
      assert.equal(
        assertRevoked(await callMessages(gw.url, first.token), first.keyId, 'messages'),
        revokedAt,
      );
      assert.equal(assertRevoked(await callChat(gw.url, first.token), first.keyId, 'chat'), revokedAt);
      // the request log names the revoked key (who still uses it), never its token
      const refused = gw
        .output()
        .stdout.split('\n')
        .filter((l) => l.includes('"msg":"request"') && l.includes('"status":401'))
        .at(-1);
      assert.ok(refused, 'a request log line for the refused call');
      assert.equal(JSON.parse(refused).key_id, first.keyId);
      assert.ok(!refused.includes(first.token));
    },
  );

  await t.test(
    'rotate → both keys work in the grace window; after it the old one fails, without restart',
    async () => {
      const old = await issueKey(f.env);
      tokens.push(old.token);
      const r = await runSvc(['gateway', 'rotate-key', old.keyId, '--grace-period', '30m'], { env: f.env });
      assert.equal(r.code, 0, r.stderr);
      const { new_key_id: newKeyId, new_token: newToken } = parseLines(r.stdout);
      tokens.push(newToken);
      assertReachedProxy(await callMessages(gw.url, old.token), 'old key in grace');
      assert.equal(lastCallKeyId(), old.keyId, 'events carry the predecessor when it was used');
      assertReachedProxy(await callChat(gw.url, newToken), 'new key');
      assert.equal(lastCallKeyId(), newKeyId, 'events carry the successor when it was used');

      // Shorten the grace to ~1 s from now; the gateway loads the edit on the next request (new key),
      // then the boundary passes with no further file change: auth-time evaluation must cut the old key.
      const until = new Date(Date.now() + 1000).toISOString();
      editKeyRecord(f.keystore, old.keyId, { grace_period_until: until });
      assertReachedProxy(await callChat(gw.url, newToken), 'new key after edit');
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(until) - Date.now()) + 100));
      assert.equal(assertRevoked(await callChat(gw.url, old.token), old.keyId, 'old key after grace'), until);
      assertRevoked(await callMessages(gw.url, old.token), old.keyId, 'old key after grace (messages)');
      assertReachedProxy(await callMessages(gw.url, newToken), 'new key after grace');

      const before = JSON.parse(readFileSync(f.keystore, 'utf8')).keys.find(
        (k: { key_id: string }) => k.key_id === old.keyId,
      );
      assert.equal(before.status, 'active', 'on-disk status is unchanged until a sweep');
      const list = await runSvc(['gateway', 'list-keys', '--format', 'json'], { env: f.env });
      const listed = JSON.parse(list.stdout).keys as Array<Record<string, string>>;
      assert.equal(listed.find((k) => k.key_id === old.keyId)?.effective_status, 'revoked');
      assert.equal(listed.find((k) => k.key_id === newKeyId)?.effective_status, 'active');
      await runSvc(['gateway', 'list-keys'], { env: f.env });
      const swept = readEvents(f.db, 'gateway.key_revoked').filter(
        (e) => e.payload.reason === 'grace_period_expired',
      );
      assert.deepEqual(
        swept.map((e) => e.payload.key_id),
        [old.keyId],
      );
    },
  );

  await t.test(
    'a keystore made writable by other users while the gateway runs is set back to 0600, with a warning',
    async () => {
      const key = await issueKey(f.env);
      tokens.push(key.token);
      // anyone who can write the file could add the hash of a token of their own
      chmodSync(f.keystore, 0o646);
      assertReachedProxy(await callChat(gw.url, key.token), 'a key of the keystore');
      assert.equal(statSync(f.keystore).mode & 0o777, 0o600);
      assertKeystoreWarning(gw, '0646');
    },
  );

  await t.test(
    'SIGTERM stops the gateway with exit 0 and the auth failures are in the trace store',
    async () => {
      assert.equal(await gw.stop(), 0);
      const failed = readEvents(f.db, 'gateway.auth_failed');
      const reasons = failed.map((e) => e.payload.reason);
      assert.ok(
        reasons.includes('missing_token') &&
          reasons.includes('invalid_token') &&
          reasons.includes('key_revoked'),
      );
      const revoked = failed.find((e) => e.payload.reason === 'key_revoked');
      assert.equal(revoked?.payload.gateway_key_id, first.keyId);
      assert.match(String(revoked?.payload.token_hash_prefix), /^[0-9a-f]{8}$/);
      assert.ok(failed.every((e) => e.turn_id !== null));
      assert.equal(readEvents(f.db, 'bus.subscriber_registered').length >= 1, true);
    },
  );

  await t.test('a restarted gateway keeps the revocation', async () => {
    // a keystore group and others may write is set to 0600 at start, before a key is taken from it
    chmodSync(f.keystore, 0o666);
    const again = await start();
    assert.equal(statSync(f.keystore).mode & 0o777, 0o600);
    assertKeystoreWarning(again, '0666');
    assertRevoked(await callChat(again.url, first.token), first.keyId, 'after restart');
    assert.equal(await again.stop(), 0);
  });

  await t.test('no plaintext token is in the keystore, the trace store or the logs', () => {
    const haystacks = [readFileSync(f.keystore, 'utf8')];
    for (const name of readdirSync(tmp.dir).filter((n) => n.startsWith('svc.db'))) {
      haystacks.push(readFileSync(join(tmp.dir, name)).toString('latin1'));
    }
    for (const s of running) haystacks.push(s.output().stdout, s.output().stderr);
    for (const token of tokens) for (const h of haystacks) assert.ok(!h.includes(token), 'token leaked');
    const requestLines = running[0]
      .output()
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.ok(requestLines.some((l) => l.key_id === first.keyId && l.shape === 'anthropic'));
    // every line has the same fields, and a routed request adds where it went: never a token or a prompt
    const always = [
      'error_code',
      'key_id',
      'latency_ms',
      'method',
      'model',
      'msg',
      'path',
      'request_id',
      'shape',
      'status',
      'time',
    ];
    const routed = ['routed_by', 'routed_model'];
    for (const l of requestLines) {
      const keys = Object.keys(l).sort();
      const expected = keys.includes('routed_model') ? [...always, ...routed].sort() : always;
      assert.deepEqual(keys, expected);
    }
  });
});

test('a gateway token in Authorization is used when x-api-key holds a provider key (Claude Code with ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN both set)', async () => {
  const key = await issueKey(f.env);
  const gw = await start();
  const body = JSON.stringify({
    model: 'anthropic:claude-sonnet-4-5',
    max_tokens: 16,
    messages: [{ role: 'user', content: 'hi' }],
  });
  // what Claude Code 2.1.328 sends with both variables set: the user's own Anthropic key as x-api-key and
  // the gateway key as the Bearer token
  const claudeCode = await rawPost(
    gw.url,
    '/v1/messages',
    ['x-api-key', 'sk-ant-api03-the-users-own-key', 'authorization', `Bearer ${key.token}`],
    body,
  );
  assert.equal(claudeCode.status, 200, claudeCode.body);
  assert.equal(lastCallKeyId(), key.keyId);
  // two gateway tokens: x-api-key still wins (a wrong one is not rescued by the other header)
  const both = await rawPost(gw.url, '/v1/messages', [
    'x-api-key',
    'gw_01NOTAKEY0000000000000000',
    'authorization',
    `Bearer ${key.token}`,
  ]);
  assert.equal(both.status, 401);
  assert.equal(JSON.parse(both.body).error.code, 'invalid_token');
});

/**
 * `svc gateway` with SVC_DATABASE_URL: the store is the PostgreSQL database (no SQLite file, no
 * keys.json appears), a call through each SDK leaves its events there in order, the key commands write
 * the gateway_keys table and their audit events, and a revocation reaches the running gateway. `svc
 * serve` runs on the same database: a session, a turn through the fake provider, its history.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStore } from '#src/store/open.ts';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { gatewayFiles, parseLines } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { useTestPostgres } from '../helpers/postgres.ts';
import { makeTempDir, runSvc } from '../helpers/svc.ts';

const postgres = useTestPostgres();

test('a gateway on PostgreSQL writes every event of its calls to the database', {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const stack = await startGatewayStack({ env: { SVC_DATABASE_URL: url } });
  t.after(() => stack.stop());
  const a = await stack.anthropic.messages
    .create({
      model: 'anthropic:claude-haiku-4-5',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'hi' }],
    })
    .withResponse();
  const o = await stack.openai.chat.completions
    .create({ model: 'openai:gpt-5-mini', messages: [{ role: 'user', content: 'hi' }], stream: true })
    .withResponse();
  for await (const _ of o.data) {
    // drain the stream
  }
  const turns = [a.response.headers.get('svc-request-id'), o.response.headers.get('svc-request-id')];
  assert.equal(await stack.gw.stop(), 0);
  assert.equal(existsSync(stack.files.db), false, 'no SQLite store was created');
  assert.equal(existsSync(stack.files.keystore), false, 'no keystore file was created');

  const store = await openStore({ engine: 'postgres', url });
  t.after(() => store.close());
  for (const turn of turns) {
    const rows = await store.kysely
      .selectFrom('events')
      .select(['type', 'gateway_key_id', 'cost_usd'])
      .where('turn_id', '=', turn)
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.type),
      ['route.decided', 'llm.call_started', 'llm.call_completed', 'turn.completed'],
    );
    assert.equal(rows[2].gateway_key_id, stack.keyId);
    assert.match(rows[2].cost_usd ?? '', /^\d+\.\d+$/);
  }
  const issued = await store.kysely
    .selectFrom('events')
    .select('type')
    .where('type', '=', 'gateway.key_issued')
    .execute();
  assert.equal(issued.length, 1);
});

test('keys live in the database: a revocation reaches the running gateway, the start needs a key', {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const home = makeTempDir('svc-pg-keys-');
  t.after(home.cleanup);
  const { env } = gatewayFiles(home.dir, { SVC_DATABASE_URL: url });

  const empty = await runSvc(['gateway', '--port', '0'], { env });
  assert.equal(empty.code, 1);
  assert.match(
    empty.stderr,
    /gateway_keys table of postgres:\/\/svc_test@127\.0\.0\.1:\d+\/\w+ has no keys; issue one/,
  );
  const withFile = await runSvc(['gateway', 'list-keys', '--keystore', join(home.dir, 'k.json')], { env });
  assert.equal(withFile.code, 2);
  assert.match(withFile.stderr, /keys live in the database.*drop --keystore/);

  const stack = await startGatewayStack({ env: { SVC_DATABASE_URL: url } });
  t.after(() => stack.stop());
  const ask = () =>
    fetch(`${stack.gw.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': stack.token,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({
        model: 'anthropic:claude-haiku-4-5',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
  assert.equal((await ask()).status, 200);
  const revoked = await runSvc(['gateway', 'revoke-key', stack.keyId], { env: stack.files.env });
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal(parseLines(revoked.stdout).revoked, stack.keyId);
  let status = 200;
  for (let i = 0; i < 100 && status === 200; i++) {
    status = (await ask()).status;
    if (status === 200) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(status, 401, 'the running gateway refuses the revoked key without a restart');
  const listed = await runSvc(['gateway', 'list-keys', '--format', 'json'], { env: stack.files.env });
  const keys = (JSON.parse(listed.stdout) as { keys: Array<{ key_id: string; status: string }> }).keys;
  assert.deepEqual(
    keys.map((k) => [k.key_id, k.status]),
    [[stack.keyId, 'revoked']],
  );
});

test('svc serve on PostgreSQL: a session, a turn with a tool through the fake provider, its history', {
  timeout: 60_000,
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const fake = await startFakeProvider();
  t.after(() => fake.close());
  const server = await startAgentServer(t, {
    env: {
      SVC_DATABASE_URL: url,
      ...fakeProviderEnv(fake, ['anthropic']),
    },
  });
  const session = await server.api('POST', '/sessions', { workspace_path: server.workspace });
  assert.equal(session.status, 201, JSON.stringify(session.body));
  const sid = session.body.id as string;
  fake.script([
    { text: 'Looking.', toolUses: [{ name: 'list_files', input: {} }], usage: { input: 50, output: 5 } },
    { text: 'Nothing there.', usage: { input: 80, output: 6 } },
  ]);
  const turn = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'what is in here?' }],
  });
  assert.equal(turn.status, 202, JSON.stringify(turn.body));
  let types: string[] = [];
  for (let i = 0; i < 200 && !types.includes('turn.completed'); i++) {
    const events = await server.api('GET', `/sessions/${sid}/events?limit=1000`);
    types = (events.body.events as Array<{ type: string }>).map((e) => e.type);
    if (!types.includes('turn.completed')) await new Promise((r) => setTimeout(r, 25));
  }
  assert.deepEqual(
    types.filter((x) => x !== 'bus.subscriber_registered'),
    [
      'turn.started',
      'route.decided',
      'llm.call_started',
      'llm.call_completed',
      'tool.called',
      'tool.completed',
      'llm.call_started',
      'llm.call_completed',
      'turn.completed',
    ],
  );
  const messages = await server.api('GET', `/sessions/${sid}/messages`);
  assert.equal(messages.status, 200);
  assert.ok((messages.body.messages as unknown[]).length >= 3, JSON.stringify(messages.body));
  const store = await openStore({ engine: 'postgres', url });
  t.after(() => store.close());
  const row = await store.kysely
    .selectFrom('sessions')
    .select(['turn_count', 'cost_so_far_usd'])
    .where('id', '=', sid)
    .executeTakeFirstOrThrow();
  assert.equal(row.turn_count, 1);
  assert.match(row.cost_so_far_usd, /^0\.\d+$/);
});

/**
 * A rotation's keys share one budget (spec 1 §States: the successor inherits the caps, and an inherited cap
 * is the same cap, not a second one): a key spends most of its daily cap, is rotated with the real CLI
 * while the gateway runs, and the successor gets only what is left; the predecessor, still in its grace
 * period, is refused like the successor once the cap is reached; a restarted gateway seeds the shared
 * spend and still refuses both. Events keep the key that was actually used. Run with the keystore file and
 * a SQLite store, and with the keys and budgets in PostgreSQL.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { StoreTarget } from '#src/config/paths.ts';
import { formatDecimal, mul, parseDecimal } from '#src/lib/decimal.ts';
import { worstCaseCost } from '#src/models/pricing.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { boundCallTokens } from '#src/models/token-bound.ts';
import { openStore } from '#src/store/open.ts';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { decode } from '../helpers/budget-probes.ts';
import { gatewayFiles, issueKey, parseLines } from '../helpers/gateway-keys.ts';
import { useTestPostgres } from '../helpers/postgres.ts';
import { makeTempDir, type RunningSvc, runSvc, startSvc } from '../helpers/svc.ts';

const postgres = useTestPostgres();

// claude-haiku-4-5; each call really costs its worst case (every input token of the bound billed as a
// cache write, max_tokens of output), so the cap admits exactly CALLS calls whichever key makes them
const MODEL = 'anthropic:claude-haiku-4-5';
const MAX_TOKENS = 100;
const CALLS = 10;
const BODY = { model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user' as const, content: 'hi' }] };
const registry = loadModelRegistry(undefined);
const BOUND = boundCallTokens(decode('anthropic', BODY), registry.get(MODEL)!, JSON.stringify(BODY));
const WORST = worstCaseCost(registry, MODEL, BOUND).cost;
const CAP = formatDecimal(mul(WORST, parseDecimal(String(CALLS))));
const REPLY = `usage=in:0,cache_write:${BOUND.inputTokens},out:${MAX_TOKENS}`;

interface Outcome {
  status: number;
  shouldRetry: string | null;
  error?: { code?: string; type?: string; details?: Record<string, unknown> };
}

async function call(gw: RunningSvc, token: string): Promise<Outcome> {
  const client = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
  try {
    const { response } = await client.messages.create(BODY).withResponse();
    return { status: response.status, shouldRetry: response.headers.get('x-should-retry') };
  } catch (err) {
    if (!(err instanceof Anthropic.APIError)) throw err;
    return {
      status: err.status ?? 0,
      shouldRetry: err.headers?.get('x-should-retry') ?? null,
      error: (err.error as { error: Outcome['error'] }).error,
    };
  }
}

function assertRefusedAtCap(o: Outcome, who: string): void {
  assert.equal(o.status, 429, `${who}: ${JSON.stringify(o.error)}`);
  assert.equal(o.error?.code, 'quota_exceeded');
  assert.equal(o.error?.type, 'rate_limit_error');
  assert.equal(o.shouldRetry, 'false');
  assert.equal(o.error?.details?.cap_kind, 'daily');
  assert.equal(o.error?.details?.cap_usd, CAP);
  assert.equal(o.error?.details?.spent_usd, CAP, `${who}: the spend of both keys`);
}

for (const engine of ['sqlite', 'postgres'] as const) {
  test(`a rotated key and its successor share one daily cap, also after a restart [${engine}]`, {
    timeout: 120_000,
  }, async (t) => {
    if (engine === 'postgres' && postgres.reason) return t.skip(postgres.reason);
    const url = engine === 'postgres' ? await postgres.createDatabase() : undefined;
    await sharedBudget(t, url);
  });
}

// --- internal ---

async function sharedBudget(t: TestContext, databaseUrl: string | undefined): Promise<void> {
  const fake = await startFakeProvider();
  const tmp = makeTempDir('svc-rotate-budget-');
  const files = gatewayFiles(tmp.dir, {
    ...fakeProviderEnv(fake, ['anthropic']),
    SVC_DATABASE_URL: databaseUrl,
  });
  const target: StoreTarget = databaseUrl
    ? { engine: 'postgres', url: databaseUrl }
    : { engine: 'sqlite', path: files.db };
  const keysOf = (type: string) => eventKeys(target, type);
  let gw: RunningSvc | undefined;
  t.after(async () => {
    await gw?.stop();
    await fake.close();
    tmp.cleanup();
  });
  fake.setDefault(REPLY);
  const old = await issueKey(files.env, ['--daily-cap-usd', CAP]);
  gw = await startSvc(['gateway', '--port', '{port}'], { env: files.env });

  for (let i = 0; i < CALLS - 1; i++) assert.equal((await call(gw, old.token)).status, 200);

  const rotated = await runSvc(['gateway', 'rotate-key', old.keyId, '--grace-period', '24h'], {
    env: files.env,
  });
  assert.equal(rotated.code, 0, rotated.stderr);
  const lines = parseLines(rotated.stdout);
  const next = { keyId: lines.new_key_id, token: lines.new_token };

  await t.test('the successor is admitted only for what the predecessor left of the cap', async () => {
    assert.equal((await firstCall(gw!, next.token)).status, 200, 'one call was left');
    assertRefusedAtCap(await call(gw!, next.token), 'successor');
    assert.equal(fake.requests.length, CALLS, 'a refused request never reaches the provider');
  });

  await t.test('the predecessor, still in its grace period, is refused at the same cap', async () => {
    assertRefusedAtCap(await call(gw!, old.token), 'predecessor');
  });

  await t.test('events name the key that was used', async () => {
    assert.deepEqual(await keysOf('llm.call_completed'), [...Array(CALLS - 1).fill(old.keyId), next.keyId]);
    assert.deepEqual(await keysOf('gateway.quota_exceeded'), [next.keyId, old.keyId]);
  });

  await t.test('list-keys --format json names the budget the successor shares', async () => {
    const r = await runSvc(['gateway', 'list-keys', '--format', 'json'], { env: files.env });
    assert.equal(r.code, 0, r.stderr);
    const keys = JSON.parse(r.stdout).keys as Array<Record<string, unknown>>;
    assert.equal(keys.find((k) => k.key_id === next.keyId)?.budget_key_id, old.keyId);
    assert.equal(keys.find((k) => k.key_id === old.keyId)?.budget_key_id, null);
  });

  await t.test('a restarted gateway keeps the shared spend and refuses both keys', async () => {
    await gw!.stop(); // every settlement (and its quota.alert) is written by then, on PostgreSQL too
    assert.deepEqual(await keysOf('quota.alert'), [old.keyId], 'the 80 % alert went out once for both');
    gw = await startSvc(['gateway', '--port', '{port}'], { env: files.env });
    assertRefusedAtCap(await call(gw, next.token), 'successor after restart');
    assertRefusedAtCap(await call(gw, old.token), 'predecessor after restart');
    assert.equal(fake.requests.length, CALLS);
    assert.deepEqual(await keysOf('quota.alert'), [old.keyId], 'no second alert for the same window');
  });

  await t.test('a second rotation keeps the same budget', async () => {
    const again = await runSvc(['gateway', 'rotate-key', next.keyId, '--grace-period', '30m'], {
      env: files.env,
    });
    assert.equal(again.code, 0, again.stderr);
    assertRefusedAtCap(
      await firstCall(gw!, parseLines(again.stdout).new_token),
      'successor of the successor',
    );
    assert.equal(fake.requests.length, CALLS);
  });
}

/**
 * A new key's first call: on PostgreSQL a running gateway learns of it by NOTIFY (or its 1 s poll), so a
 * 401 before then is asked again; a 401 costs nothing.
 */
async function firstCall(gw: RunningSvc, token: string): Promise<Outcome> {
  for (let i = 0; ; i++) {
    const o = await call(gw, token);
    if (o.status !== 401 || i >= 100) return o;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** gateway_key_id of each event of `type`, in order. */
async function eventKeys(target: StoreTarget, type: string): Promise<unknown[]> {
  const store = await openStore(target);
  try {
    const rows = await store.kysely
      .selectFrom('events')
      .select('payload')
      .where('type', '=', type)
      .orderBy('id')
      .execute();
    return rows.map((r) => (JSON.parse(r.payload) as { gateway_key_id?: unknown }).gateway_key_id);
  } finally {
    await store.close();
  }
}

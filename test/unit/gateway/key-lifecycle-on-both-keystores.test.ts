/**
 * The operator's key lifecycle (issue, revoke, rotate, list with its sweep) against both places keys
 * live: keys.json on a SQLite deployment, the gateway_keys table on PostgreSQL. A running gateway's
 * cache sees every change without restart (the file on its next request, the table by NOTIFY, or by
 * its poll when no NOTIFY comes), and concurrent commands all keep their change.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { EventInput } from '#src/events/envelope.ts';
import {
  type KeyAdminDeps,
  runIssueKey,
  runListKeys,
  runRevokeKey,
  runRotateKey,
  type UpdateKeystore,
} from '#src/gateway/key-admin.ts';
import { createKeystoreCache, type KeystoreCache, updateKeystoreFile } from '#src/gateway/keystore/file.ts';
import { createKeyTableCache, updateKeyTable } from '#src/gateway/keystore/table.ts';
import { hashToken } from '#src/gateway/keystore/token.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import type { Clock } from '#src/lib/time.ts';
import { openStore, type PostgresStore } from '#src/store/open.ts';
import { describeEachEngine, type EngineUnderTest } from '../../helpers/engines.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();
const T0 = Date.parse('2026-11-22T06:00:00Z') * 1000;
const HOUR = 3_600_000_000;

interface Keystore {
  update: UpdateKeystore;
  /** A cache as a running gateway holds it. */
  cache: KeystoreCache;
  /** Runs a change and resolves once the cache reflects it (the file: at the next request's refresh). */
  apply<T>(change: () => Promise<T>): Promise<T>;
  /** Another process's way into the same keys. */
  other(): Promise<UpdateKeystore>;
}

describeEachEngine('key lifecycle', postgres, (engine) => {
  const { test } = engine;

  test('issue, revoke and rotate reach a running gateway cache without restart', async (t) => {
    const ks = await keystore(engine, t);
    const audit: EventInput[] = [];
    let now = T0;
    const deps = admin(ks.update, audit, { nowUs: () => now });
    const a = await ks.apply(() =>
      runIssueKey({ name: 'a', workspace_path: '/w', daily_cap_usd: '5', user_id: 'u1' }, deps),
    );
    assert.equal(ks.cache.lookup(hashToken(a.token))?.key_id, a.record.key_id);

    const rotated = await ks.apply(() => runRotateKey(a.record.key_id, HOUR, deps));
    assert.equal(
      ks.cache.lookup(hashToken(rotated.token))?.daily_cap_usd,
      '5',
      'the successor inherits caps',
    );
    assert.equal(
      ks.cache.lookup(hashToken(a.token))?.grace_period_until,
      rotated.predecessor.grace_period_until,
    );

    await ks.apply(() => runRevokeKey(rotated.successor.key_id, deps));
    assert.equal(ks.cache.lookup(hashToken(rotated.token))?.status, 'revoked');

    now = T0 + 2 * HOUR; // the predecessor's grace period has lapsed: list-keys persists it as revoked
    const listed = await ks.apply(() => runListKeys(deps));
    assert.deepEqual(
      listed.map((k) => [k.key_id, k.status, k.effective_status]),
      [
        [a.record.key_id, 'revoked', 'revoked'],
        [rotated.successor.key_id, 'revoked', 'revoked'],
      ],
    );
    assert.ok(listed.every((k) => !('secret_hash' in k)));
    assert.equal(ks.cache.lookup(hashToken(a.token))?.status, 'revoked');
    assert.deepEqual(
      audit.map((e) => e.type),
      ['gateway.key_issued', 'gateway.key_rotated', 'gateway.key_revoked', 'gateway.key_revoked'],
    );
  });

  test('concurrent commands from several processes all keep their change', async (t) => {
    const ks = await keystore(engine, t);
    const updates = await Promise.all([1, 2, 3, 4].map(() => ks.other()));
    const issued = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        runIssueKey({ name: `k${i}`, workspace_path: '/w' }, admin(updates[i % updates.length], [])),
      ),
    );
    const listed = await runListKeys(admin(ks.update, []));
    assert.deepEqual(listed.map((k) => k.key_id).sort(), issued.map((i) => i.record.key_id).sort());
  });
});

test('without NOTIFY, a replica finds a change by its poll', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const store = (await openStore({
    engine: 'postgres',
    url: await postgres.createDatabase(),
  })) as PostgresStore;
  t.after(() => store.close());
  const cache = await createKeyTableCache(store, { log: silentLogger, listen: false, pollMs: 50 });
  t.after(() => cache.close());
  const changed = cache._changed();
  const { token } = await runIssueKey(
    { name: 'p', workspace_path: '/w' },
    admin((c) => updateKeyTable(store, c), []),
  );
  await changed;
  assert.equal(cache.lookup(hashToken(token))?.name, 'p');
  assert.equal(cache.size, 1);
});

// --- internal ---

function admin(update: UpdateKeystore, audit: EventInput[], clock?: Clock): KeyAdminDeps {
  return {
    updateKeystore: update,
    newId: createIdFactory(),
    clock: clock ?? { nowUs: () => T0 },
    audit: async (events) => {
      audit.push(...events);
    },
  };
}

async function keystore(
  engine: EngineUnderTest,
  t: { after: (fn: () => unknown) => void },
): Promise<Keystore> {
  const target = await engine.target();
  if (target.engine === 'sqlite') {
    const path = join(target.path, '..', `keys-${Date.now()}-${Math.random()}.json`);
    const update: UpdateKeystore = (c) => updateKeystoreFile(path, c);
    await update(() => ({ next: { keys: [] }, result: undefined }));
    const cache = createKeystoreCache(path, { log: silentLogger });
    const apply = async <T>(change: () => Promise<T>) => {
      const out = await change();
      cache.refresh();
      return out;
    };
    return { update, cache, apply, other: async () => update };
  }
  const store = (await openStore(target)) as PostgresStore;
  t.after(() => store.close());
  const cache = await createKeyTableCache(store, { log: silentLogger });
  t.after(() => cache.close());
  let n = 0;
  return {
    update: (c) => updateKeyTable(store, c),
    cache,
    async apply(change) {
      const changed = cache._changed();
      const out = await change();
      await changed;
      return out;
    },
    async other() {
      // a distinct URL is a distinct pool, as another process would have
      const s = (await openStore({
        engine: 'postgres',
        url: `${target.url}?application_name=other${++n}`,
      })) as PostgresStore;
      t.after(() => s.close());
      return (c) => updateKeyTable(s, c);
    },
  };
}

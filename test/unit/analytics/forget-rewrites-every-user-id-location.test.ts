/**
 * runForgetUser: the id becomes its salted pseudonym in every place USER_ID_LOCATIONS names, for every
 * persisted event type; no row is deleted; neighbours (u10 for u1) are untouched; every call is audited
 * under the pseudonym; a repeat rewrites nothing; and afterwards the id is nowhere in the store's files.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import {
  PSEUDONYM_PREFIX,
  previewForgetUser,
  pseudonymFor,
  runForgetUser,
  USER_ID_LOCATIONS,
} from '#src/analytics/index.ts';
import { readForgetSalt } from '#src/analytics/user-data/pseudonym.ts';
import { createBus } from '#src/events/bus.ts';
import { EVENT_TYPES, isPersisted } from '#src/events/catalog.ts';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { sha256Hex } from '#src/lib/hash.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { backupStore } from '#src/store/backup.ts';
import { openStore, type Store } from '#src/store/open.ts';
import { BASE_US, callPayload, insertEvents, seqId } from '../../helpers/event-rows.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-forget-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;

async function setup(t: { after: (fn: () => unknown) => void }) {
  const path = join(tmp, `s${++n}`, 'svc.db');
  const store = await openStore(path);
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const writer = createTraceWriter({ store, log: silentLogger });
  bus.subscribe(writer.subscriber);
  t.after(async () => {
    await writer.stop();
    await store.close();
  });
  return { path, store, bus, deps: { store, bus, clock: systemClock } };
}

const payloads = async (store: Store) =>
  (await store.kysely.selectFrom('events').select(['id', 'payload', 'user_id']).orderBy('id').execute()).map(
    (r) => ({ ...r, json: JSON.parse(r.payload) as Record<string, unknown> }),
  );

const audits = async (store: Store) =>
  (
    await store.kysely
      .selectFrom('events')
      .select('payload')
      .where('type', '=', 'analytics.user_forgotten')
      .orderBy('id')
      .execute()
  ).map((r) => JSON.parse(r.payload) as Record<string, unknown>);

/** Occurrences of `needle` in the raw bytes of the store file and its WAL. */
function rawHits(path: string, needle: string): Record<string, number> {
  const hits: Record<string, number> = {};
  for (const f of [path, `${path}-wal`]) {
    if (!existsSync(f)) continue;
    hits[f.slice(path.length) || 'db'] = readFileSync(f).toString('latin1').split(needle).length - 1;
  }
  return hits;
}

test('the pseudonym is redacted_ + 12 hex of a salted SHA-256: stable per store, different across stores', async (t) => {
  const a = await setup(t);
  const b = await setup(t);
  const saltA = await readForgetSalt(a.store.kysely);
  const saltB = await readForgetSalt(b.store.kysely);
  assert.match(saltA ?? '', /^[0-9a-f]{64}$/, 'every new store has a 256-bit salt (migration 0002)');
  assert.notEqual(saltA, saltB);
  const pa = await runForgetUser({ ...a.deps, scrub: false }, 'usr_alice');
  const pb = await runForgetUser({ ...b.deps, scrub: false }, 'usr_alice');
  assert.match(pa.pseudonym, new RegExp(`^${PSEUDONYM_PREFIX}[0-9a-f]{12}$`));
  assert.equal(pa.pseudonym, pseudonymFor(saltA as string, 'usr_alice'));
  assert.notEqual(pa.pseudonym, pb.pseudonym);
  // hashing a guessed id without the salt does not give the pseudonym
  assert.notEqual(pa.pseudonym, `${PSEUDONYM_PREFIX}${sha256Hex('usr_alice').slice(0, 12)}`);
  assert.equal((await runForgetUser({ ...a.deps, scrub: false }, 'usr_alice')).pseudonym, pa.pseudonym);
});

test('forgetting u1 rewrites payload user_id in place, keeps every row and field, and leaves u10 alone', async (t) => {
  const { store, deps } = await setup(t);
  const users = ['u1', 'u10', 'xu1', 'u1', null];
  insertEvents(store.db, 50, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i,
    type: i % 2 ? 'llm.call_completed' : 'tool.failed',
    payload: callPayload(users[i % users.length], { seq: i, cost_usd: '0.000001230', ratio: 1.5 }),
  }));
  const before = (await payloads(store)).filter((row) => row.id.startsWith('01TEST'));
  const r = await runForgetUser(deps, 'u1');
  assert.equal(r.user_id, 'u1');
  assert.equal(r.pseudonymized_rows, 20);
  assert.match(r.completed_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  assert.equal(r.walTruncated, true);
  const after = (await payloads(store)).filter((row) => row.id.startsWith('01TEST'));
  assert.equal(after.length, 50, 'no row deleted');
  for (const [i, row] of after.entries()) {
    const old = before[i];
    if (old.json.user_id === 'u1') {
      assert.equal(row.user_id, r.pseudonym, 'the generated column follows the payload');
      assert.equal(row.payload, old.payload.replace('"user_id":"u1"', `"user_id":"${r.pseudonym}"`));
    } else {
      assert.equal(row.payload, old.payload, 'other users untouched');
    }
  }
  // the user_id index serves the pseudonym and no longer knows u1
  const count = async (id: string) =>
    Number(
      (
        await sql<{
          c: number;
        }>`SELECT count(*) AS c FROM events INDEXED BY events_user WHERE user_id = ${id}`.execute(
          store.kysely,
        )
      ).rows[0].c,
    );
  assert.equal(await count('u1'), 0);
  assert.equal(await count('u10'), 10);
  assert.equal(await count(r.pseudonym), 21, '20 rewritten rows plus the audit event');
});

test('quota events: identity_id is rewritten where identity_kind is user, and kept for keys', async (t) => {
  const { store, deps } = await setup(t);
  const quota = (i: number, kind: string, identity: string, user: string | null) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i,
    type: i % 2 ? 'quota.alert' : 'gateway.quota_exceeded',
    payload: {
      identity_kind: kind,
      identity_id: identity,
      gateway_key_id: 'gk_1',
      user_id: user,
      team_id: null,
    },
  });
  insertEvents(store.db, 1, () => quota(1, 'user', 'usr_bob', 'usr_bob'));
  insertEvents(store.db, 1, () => quota(2, 'user', 'usr_bob', null));
  insertEvents(store.db, 1, () => quota(3, 'key', 'gk_1', 'usr_bob'));
  insertEvents(store.db, 1, () => quota(4, 'user', 'usr_bob0', 'usr_bob0'));
  const preview = await previewForgetUser(store, 'usr_bob');
  assert.equal(preview.rows, 3);
  const r = await runForgetUser(deps, 'usr_bob');
  assert.equal(preview.pseudonym, r.pseudonym);
  assert.equal(r.pseudonymized_rows, 3, 'distinct rows, though one holds the id twice');
  const rows = (await payloads(store)).filter((row) => row.id.startsWith('01TEST')).map((row) => row.json);
  assert.deepEqual(
    rows.map((p) => [p.identity_id, p.user_id]),
    [
      [r.pseudonym, r.pseudonym],
      [r.pseudonym, null],
      ['gk_1', r.pseudonym],
      ['usr_bob0', 'usr_bob0'],
    ],
  );
});

test('every call is audited under the pseudonym only; a repeat rewrites 0 rows', async (t) => {
  const { store, deps } = await setup(t);
  insertEvents(store.db, 4, (i) => ({
    id: seqId(i),
    timestamp_us: BASE_US + i,
    payload: callPayload('usr_carol'),
  }));
  const first = await runForgetUser(deps, 'usr_carol');
  const second = await runForgetUser(deps, 'usr_carol');
  assert.equal(first.pseudonymized_rows, 4);
  assert.equal(second.pseudonymized_rows, 0);
  assert.equal(second.pseudonym, first.pseudonym);
  assert.deepEqual(await audits(store), [
    {
      user_id: first.pseudonym,
      pseudonym: first.pseudonym,
      pseudonymized_rows: 4,
      completed_at: first.completed_at,
    },
    {
      user_id: first.pseudonym,
      pseudonym: first.pseudonym,
      pseudonymized_rows: 0,
      completed_at: second.completed_at,
    },
  ]);
  // forgetting someone with no rows at all is audited too
  assert.equal((await runForgetUser(deps, 'usr_nobody')).pseudonymized_rows, 0);
  assert.equal((await audits(store)).length, 3);
  assert.equal((await previewForgetUser(store, 'usr_carol')).rows, 0);
});

test('coverage: for every persisted event type, the id is gone from every table, column, index, free page and the WAL', async (t) => {
  const { path, store, deps } = await setup(t);
  const victim = 'forgetme_7Qx';
  const types = EVENT_TYPES.filter(isPersisted);
  // many rows and payload sizes so pages split and rows overflow: stale copies would hide there
  let i = 0;
  for (let round = 0; round < 30; round++) {
    insertEvents(store.db, types.length * 4, (k) => {
      i++;
      const mine = k % 4 === 0;
      const type = types[Math.floor(k / 4)];
      const quota = type === 'quota.alert' || type === 'gateway.quota_exceeded';
      return {
        id: seqId(i),
        timestamp_us: BASE_US + i,
        type,
        payload: {
          ...callPayload(mine ? victim : `other_${k % 7}`),
          ...(quota ? { identity_kind: 'user', identity_id: mine ? victim : 'other_1' } : {}),
          pad: 'x'.repeat((i * 37) % (round === 29 ? 9000 : 700)),
        },
      };
    });
  }
  const mine = (types.length * 30) as number;
  assert.ok(
    Object.values(rawHits(path, victim)).some((h) => h > 0),
    'the id is in the file before',
  );
  const r = await runForgetUser(deps, victim);
  assert.equal(r.pseudonymized_rows, mine);
  assert.equal(r.walTruncated, true);

  // every column of every table, generated ones included
  const tables = await sql<{ name: string }>`SELECT name FROM sqlite_schema WHERE type = 'table'`.execute(
    store.kysely,
  );
  for (const { name } of tables.rows) {
    const cols = await sql<{ name: string }>`SELECT name FROM pragma_table_xinfo(${name})`.execute(
      store.kysely,
    );
    for (const c of cols.rows) {
      const q = await sql<{
        c: number;
      }>`SELECT count(*) AS c FROM ${sql.table(name)} WHERE CAST(${sql.ref(c.name)} AS TEXT) LIKE ${`%${victim}%`}`.execute(
        store.kysely,
      );
      assert.equal(Number(q.rows[0].c), 0, `${name}.${c.name}`);
    }
  }
  assert.deepEqual(
    Object.values(rawHits(path, victim)).filter((h) => h > 0),
    [],
    'no stale copy in the file or the WAL',
  );
  assert.ok(USER_ID_LOCATIONS.length >= 2);
});

test('the salt travels with a backup: the restored store gives the same pseudonym', async (t) => {
  const { path, store, deps } = await setup(t);
  const backup = join(tmp, `backup-${n}.db`);
  await backupStore(path, backup);
  const copy = await openStore(backup);
  t.after(() => copy.close());
  assert.equal(await readForgetSalt(copy.kysely), await readForgetSalt(store.kysely));
  const live = await runForgetUser({ ...deps, scrub: false }, 'usr_dave');
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const restored = await runForgetUser({ store: copy, bus, clock: systemClock, scrub: false }, 'usr_dave');
  assert.equal(restored.pseudonym, live.pseudonym);
});

test('an id that fails the shape guard is refused (invalid_user_id, exit 2) and nothing is written', async (t) => {
  const { store, deps } = await setup(t);
  const before = await payloads(store);
  for (const bad of ["u1' OR 1=1 --", '%', '$.user_id', 'u1"}', '', 'a'.repeat(201)]) {
    await assert.rejects(
      runForgetUser(deps, bad),
      (err) => isSvcError(err) && err.code === 'invalid_user_id' && err.exitCode === 2,
    );
    await assert.rejects(
      previewForgetUser(store, bad),
      (err) => isSvcError(err) && err.code === 'invalid_user_id',
    );
  }
  assert.deepEqual(await payloads(store), before);
});

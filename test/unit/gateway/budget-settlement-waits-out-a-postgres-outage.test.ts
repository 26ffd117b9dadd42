/**
 * A call that ends while PostgreSQL is away (a restart, a failover) still has its cost settled into the
 * shared budget once the server is back. A settlement given up after a few quick tries left the cost
 * out of budget_windows for good once its hold expired: the cap became looser by what the call cost.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBus } from '#src/events/bus.ts';
import { createTableQuotaManager } from '#src/gateway/quota-table.ts';
import { formatDecimal, parseDecimal } from '#src/lib/decimal.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { type Logger, silentLogger } from '#src/lib/log.ts';
import { openStore, type PostgresStore } from '#src/store/open.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';
import { databaseBehindRelay } from '../../helpers/tcp-relay.ts';

const postgres = useTestPostgres();
const key = { key_id: 'gk_1', daily_cap_usd: '1.00', monthly_cap_usd: null, user_id: null, team_id: null };

test('a settlement during a PostgreSQL outage is written when the server is back', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const { direct, relay, viaRelay } = await databaseBehindRelay(t, postgres);
  const errors: string[] = [];
  const log: Logger = { ...silentLogger, error: (msg: string) => void errors.push(msg) };
  const store = (await openStore({ engine: 'postgres', url: viaRelay.toString() })) as PostgresStore;
  const clock = { nowUs: () => Date.now() * 1000 };
  const bus = createBus({ newId: createIdFactory(), clock, log: silentLogger });
  const manager = createTableQuotaManager({ store, bus, clock, newId: createIdFactory(), log });
  t.after(async () => {
    await manager.close();
    await store.close();
  });

  const hold = await manager.admit(key, parseDecimal('0.5'));
  relay.reset();
  hold.settle(parseDecimal('0.25'));
  // more tries than a lock conflict gets, or the settlement was given up
  while (relay.resets < 8 && errors.length === 0) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(errors, [], 'the settlement was given up while the server was away');
  await relay.up();
  await manager.flush();

  const reader = await openStore({ engine: 'postgres', url: direct.toString() }, { readOnly: true });
  t.after(() => reader.close());
  const w = await reader.kysely.selectFrom('budget_windows').select('spent_usd').executeTakeFirstOrThrow();
  assert.equal(formatDecimal(parseDecimal(w.spent_usd)), '0.250000');
  const holds = await reader.kysely.selectFrom('budget_holds').select('id').execute();
  assert.equal(holds.length, 0);
});

test('closing during the outage gives the settlement up after the quick tries', {
  timeout: 30_000, // the outage window is 60 s: a close that waited it out fails here
}, async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const { relay, viaRelay } = await databaseBehindRelay(t, postgres);
  const errors: string[] = [];
  const log: Logger = { ...silentLogger, error: (msg: string) => void errors.push(msg) };
  const store = (await openStore({ engine: 'postgres', url: viaRelay.toString() })) as PostgresStore;
  t.after(() => store.close());
  const clock = { nowUs: () => Date.now() * 1000 };
  const bus = createBus({ newId: createIdFactory(), clock, log: silentLogger });
  const manager = createTableQuotaManager({ store, bus, clock, newId: createIdFactory(), log });
  const hold = await manager.admit(key, parseDecimal('0.5'));
  relay.down();
  hold.settle(parseDecimal('0.25'));
  await manager.close();
  assert.deepEqual(errors, ['budget settlement failed; the hold stops counting within an hour']);
});

test('an admission PostgreSQL does not answer (a hung server, a black hole) is refused with 503 in time', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const { direct, relay, viaRelay } = await databaseBehindRelay(t, postgres);
  // a statement unanswered this long ends its connection (SVC_DATABASE_TIMEOUT_MS; 10 s by default)
  const store = (await openStore({
    engine: 'postgres',
    url: viaRelay.toString(),
    timeoutMs: 2_000,
  })) as PostgresStore;
  t.after(() => store.close());
  const clock = { nowUs: () => Date.now() * 1000 };
  const bus = createBus({ newId: createIdFactory(), clock, log: silentLogger });
  const manager = createTableQuotaManager({
    store,
    bus,
    clock,
    newId: createIdFactory(),
    log: silentLogger,
    admitTimeoutMs: 500,
  });
  t.after(() => manager.close());
  (await manager.admit(key, parseDecimal('0.1'))).release();
  await manager.flush();

  relay.freeze();
  await assert.rejects(
    async () => manager.admit(key, parseDecimal('0.5')),
    (err: unknown) => isSvcError(err) && err.code === 'budget_store_unavailable',
  );
  relay.thaw();
  // the refused admission's transaction may still commit its hold once the server answers: it is
  // released, and the whole cap is there again (a left-over 0.5 hold would refuse this 0.9)
  const reader = await openStore({ engine: 'postgres', url: direct.toString() }, { readOnly: true });
  t.after(() => reader.close());
  // this one queues on the key's rows behind the late transaction: once admitted, that one is done
  const small = await manager.admit(key, parseDecimal('0.4'));
  while ((await reader.kysely.selectFrom('budget_holds').select('id').execute()).length > 1)
    await new Promise((r) => setTimeout(r, 50));
  small.release();
  await manager.flush();
  (await manager.admit(key, parseDecimal('0.9'))).release();
});

test('an admission or a settlement whose COMMIT went through but whose answer was lost counts once', async (t) => {
  if (postgres.reason) return t.skip(postgres.reason);
  const url = await postgres.createDatabase();
  const store = (await openStore({ engine: 'postgres', url })) as PostgresStore;
  t.after(() => store.close());
  // the first admission transaction commits, then its answer is lost as node-postgres reports a statement
  // not answered within its bound
  let loseNextAnswer = false;
  const kysely = new Proxy(store.kysely, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
      return () => {
        const trx = target.transaction();
        return {
          async execute<T>(fn: Parameters<typeof trx.execute<T>>[0]): Promise<T> {
            const result = await trx.execute(fn);
            if (loseNextAnswer) {
              loseNextAnswer = false;
              throw new Error('Query read timeout');
            }
            return result;
          },
        };
      };
    },
  });
  const lossy = Object.assign(Object.create(store), { kysely }) as PostgresStore;
  const clock = { nowUs: () => Date.now() * 1000 };
  const bus = createBus({ newId: createIdFactory(), clock, log: silentLogger });
  const alerts: unknown[] = [];
  bus.subscribe({ name: 'recorder', handle: (e) => void (e.type === 'quota.alert' && alerts.push(e)) });
  const manager = createTableQuotaManager({
    store: lossy,
    bus,
    clock,
    newId: createIdFactory(),
    log: silentLogger,
  });
  t.after(() => manager.close());

  loseNextAnswer = true;
  const hold = await manager.admit(key, parseDecimal('0.5'), { turn_id: 'turn_lost_answer' });
  assert.equal(loseNextAnswer, false, 'the answer of the first try was lost');
  const holds = await store.kysely.selectFrom('budget_holds').select('id').execute();
  assert.deepEqual(
    holds.map((h) => h.id),
    ['turn_lost_answer'],
  );
  // the settlement's retry must not add the cost a second time, nor lose the 80 % alert it crossed
  loseNextAnswer = true;
  hold.settle(parseDecimal('0.85'));
  await manager.flush();
  assert.equal(loseNextAnswer, false, 'the answer of the settlement was lost');
  const w = await store.kysely.selectFrom('budget_windows').select('spent_usd').executeTakeFirstOrThrow();
  assert.equal(formatDecimal(parseDecimal(w.spent_usd)), '0.850000');
  assert.equal((await store.kysely.selectFrom('budget_holds').select('id').execute()).length, 0);
  assert.equal(alerts.length, 1, 'the alert the settlement crossed is published once');
});

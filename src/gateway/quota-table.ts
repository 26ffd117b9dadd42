/**
 * @module Spend caps shared by every replica on PostgreSQL (the in-memory quota.ts is one process's).
 * Admission is one transaction: lock the key's window rows (FOR UPDATE, daily before monthly), sum its
 * live holds, and insert a hold of the worst case only if settled spend + holds + worst case stays within
 * every cap. Concurrent admissions of one key, whichever replica takes them, queue on the window rows, so
 * N requests over any number of replicas never spend past a cap. Settling deletes the hold and adds the
 * real cost to the windows; the replica whose update crosses 80 % first flips `alerted` and is the only
 * one to publish quota.alert. Holds of a replica that died (its presence lock free at two sweeps in a
 * row) are dropped by the others' sweep; a hold older than HOLD_TTL_US stops counting. Rows are kept per budget
 * (budgetKeyIdOf: a rotation's keys share their first key's rows), seeded from the spend of every key
 * that shares it, as gateway_keys tells.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Bus } from '../events/bus.ts';
import { add, compare, type Decimal, formatDecimal, parseDecimal, ZERO } from '../lib/decimal.ts';
import { errorMessage, SvcError } from '../lib/errors.ts';
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import { POSTGRES_OUTAGE_MS } from '../store/dialect.ts';
import type { PostgresStore } from '../store/open.ts';
import type { Database } from '../store/schema.ts';
import { budgetKeyIdOf } from './keystore/keystore.ts';
import {
  type CapKind,
  type CappedKey,
  capsOf,
  NO_RESERVATION,
  publishQuotaAlert,
  type QuotaManager,
  type Reservation,
  reachesAlert,
  refuseOverCap,
  SPEND_EVENT_TYPES,
  windowStartUs,
} from './quota.ts';

/** How often an outage of the budget store is logged while capped keys are refused. */
const UNREACHABLE_LOG_MS = 30_000;

/** A hold no settlement removed (a settle that kept failing) stops counting after an hour. */
export const HOLD_TTL_US = 3_600_000_000;
/** How often a replica drops the holds of replicas that died. */
export const SWEEP_MS = 30_000;
const SETTLE_ATTEMPTS = 5;

export interface TableQuotaDeps {
  store: PostgresStore;
  bus: Bus;
  clock: Clock;
  newId: NewId;
  log: Logger;
  /** Longest wait for an admission's answer (default ADMIT_TIMEOUT_MS). */
  admitTimeoutMs?: number;
}

/**
 * A server that hangs or a network that drops packets answers nothing and ends nothing: an admission
 * not decided within this time is refused with 503 budget_store_unavailable rather than holding the
 * request indefinitely. Queued admissions of one key take milliseconds each, so this is far above them.
 */
export const ADMIT_TIMEOUT_MS = 10_000;

export function createTableQuotaManager(deps: TableQuotaDeps): QuotaManager & {
  /** Drops the holds of dead replicas and expired ones now; resolves with how many. */
  sweep(): Promise<number>;
  /** Resolves once every settlement and release so far is written. */
  flush(): Promise<void>;
  close(): Promise<void>;
} {
  const { store, log } = deps;
  let lastUnreachableLog = Number.NEGATIVE_INFINITY;
  const pending = new Set<Promise<void>>();
  let closing = false;
  /** Runs a settlement or release; the promise settles once it is written or given up (never rejects). */
  const track = (what: string, work: () => Promise<void>): Promise<void> => {
    // an outage is waited out, but not by a closing gateway: its stop must end
    const p = retry(work, store, SETTLE_ATTEMPTS, () => (closing ? 0 : POSTGRES_OUTAGE_MS))
      .catch((err) =>
        log.error(`budget ${what} failed; the hold stops counting within an hour`, {
          message: errorMessage(err),
        }),
      )
      .finally(() => pending.delete(p));
    pending.add(p);
    return p;
  };
  const suspects = new Set<string>();
  const sweep = () => sweepHolds(store, deps.clock.nowUs(), suspects);
  const flush = async () => {
    while (pending.size > 0) await Promise.all([...pending]);
  };
  const timer = setInterval(() => {
    sweep().catch((err) =>
      log.warn('budget hold sweep failed; will try again', { message: errorMessage(err) }),
    );
  }, SWEEP_MS);
  timer.unref();

  return {
    async admit(key, worstCase, context = {}) {
      const caps = capsOf(key);
      if (caps.length === 0) return NO_RESERVATION;
      const nowUs = deps.clock.nowUs();
      // named by the request's turn id (one hold per request), so a window first seeded while the call is
      // in flight leaves its events out of the seed: its settlement adds its cost (seedFromTrace)
      const holdId = typeof context.turn_id === 'string' ? context.turn_id : deps.newId();
      const budget = budgetKeyIdOf(key);
      let tries = 0;
      const deciding = retry(
        () =>
          store.kysely.transaction().execute(async (trx) => {
            // a try whose COMMIT went through but whose answer was lost (a read timeout, a reset) left its
            // hold: that request is admitted, and a second insert of its id would fail it for nothing
            if (tries++ > 0) {
              const mine = await trx
                .selectFrom('budget_holds')
                .select('id')
                .where('id', '=', holdId)
                .executeTakeFirst();
              if (mine) return undefined;
            }
            const windows = [];
            for (const c of caps)
              windows.push({ ...c, ...(await lockWindow(trx, store, budget, c.kind, nowUs)) });
            const held = await liveHolds(trx, budget, nowUs);
            const over = windows.find((w) => compare(add(add(w.spent, held), worstCase), w.cap) > 0);
            if (over) return { ...over, held };
            await trx
              .insertInto('budget_holds')
              .values({
                id: holdId,
                key_id: budget,
                amount_usd: formatDecimal(worstCase),
                expires_us: nowUs + HOLD_TTL_US,
              })
              .execute();
            return undefined;
          }),
        store,
        3,
      );
      const refusal = await withinTime(deciding, deps.admitTimeoutMs ?? ADMIT_TIMEOUT_MS, () => {
        // refused for want of an answer: a hold its transaction still commits later counts for nobody.
        // Not tracked: a stop does not wait for a server that may never answer (the hold would expire,
        // or go with this replica's presence)
        void deciding
          .then(() =>
            retry(
              () => store.kysely.deleteFrom('budget_holds').where('id', '=', holdId).execute(),
              store,
              SETTLE_ATTEMPTS,
            ),
          )
          .catch(() => undefined);
      }).catch((err: unknown) => {
        // a capped key is never answered unchecked: the client is told to retry, the operator what is down
        // (once per UNREACHABLE_LOG_MS, not once per request of an outage)
        const now = Date.now();
        if (now - lastUnreachableLog >= UNREACHABLE_LOG_MS) {
          lastUnreachableLog = now;
          log.warn('the budget store is unreachable; capped keys are refused', {
            message: errorMessage(err),
          });
        }
        throw new SvcError('budget_store_unavailable', {
          message: "The gateway cannot reach its budget store to check this key's spend cap; retry shortly.",
          details: { retry_after_ms: 1000 },
          cause: err,
        });
      });
      if (refusal) throw refuseOverCap(deps.bus, key, { ...refusal, worstCase, context });
      let open = true;
      return {
        settle(cost) {
          if (!open) return;
          open = false;
          const tries: SettleTries = { deletedHold: false, alerts: [] };
          return track('settlement', async () => {
            const alerts = await settle(store, key, holdId, cost, deps.clock.nowUs(), tries);
            for (const a of alerts) publishQuotaAlert(deps.bus, key, a);
          });
        },
        release() {
          if (!open) return;
          open = false;
          return track('release', async () => {
            await store.kysely.deleteFrom('budget_holds').where('id', '=', holdId).execute();
          });
        },
      } satisfies Reservation;
    },
    sweep,
    flush,
    async close() {
      closing = true;
      clearInterval(timer);
      await flush();
    },
  };
}

// --- internal ---

interface WindowRow {
  startUs: number;
  spent: Decimal;
  alerted: boolean;
}

interface Alert extends WindowRow {
  kind: CapKind;
  cap: Decimal;
}

/** The budget's row of the window containing `nowUs`, locked; created from the trace when first needed. */
async function lockWindow(
  trx: Transaction<Database>,
  store: PostgresStore,
  budgetKeyId: string,
  kind: CapKind,
  nowUs: number,
): Promise<WindowRow> {
  const startUs = windowStartUs(kind, nowUs);
  const read = () =>
    trx
      .selectFrom('budget_windows')
      .select(['spent_usd', 'alerted'])
      .where('key_id', '=', budgetKeyId)
      .where('cap_kind', '=', kind)
      .where('window_start_us', '=', startUs)
      .forUpdate()
      .executeTakeFirst();
  let row = await read();
  if (!row) {
    const seed = await seedFromTrace(trx, store, budgetKeyId, kind, startUs, nowUs);
    await trx
      .insertInto('budget_windows')
      .values({ key_id: budgetKeyId, cap_kind: kind, window_start_us: startUs, ...seed })
      .onConflict((oc) => oc.columns(['key_id', 'cap_kind', 'window_start_us']).doNothing())
      .execute();
    row = await read();
    if (!row) throw new Error('the budget window row could not be created');
  }
  return { startUs, spent: parseDecimal(row.spent_usd), alerted: row.alerted === 1 };
}

/**
 * Settled spend of every key sharing the budget and whether its alert went out, as the trace tells it
 * (a window's first use). The events of a call whose hold is still live are left out: the trace may
 * already hold its llm.call_completed (a call admitted before midnight that ends after it), and its
 * settlement adds its cost to this window, so counting it here too would count it twice.
 */
async function seedFromTrace(
  db: Kysely<Database>,
  store: PostgresStore,
  budgetKeyId: string,
  kind: CapKind,
  startUs: number,
  nowUs: number,
): Promise<{ spent_usd: string; alerted: number }> {
  const keyIds = await budgetMembers(db, store, budgetKeyId);
  const spent = await db
    .selectFrom('events')
    .select(store.dialect.decimalSum(sql.ref('cost_usd')).as('total'))
    .where('type', 'in', SPEND_EVENT_TYPES)
    .where('gateway_key_id', 'in', keyIds)
    .where('timestamp_us', '>=', startUs)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('budget_holds')
            .select('budget_holds.id')
            .whereRef('budget_holds.id', '=', 'events.turn_id')
            .where('budget_holds.key_id', '=', budgetKeyId)
            .where('budget_holds.expires_us', '>', nowUs),
        ),
      ),
    )
    .executeTakeFirstOrThrow();
  const alert = await db
    .selectFrom('events')
    .select('id')
    .where('type', '=', 'quota.alert')
    .where('gateway_key_id', 'in', keyIds)
    .where('timestamp_us', '>=', startUs)
    .where(store.dialect.jsonText(sql.ref('payload'), '$.cap_kind'), '=', kind)
    .limit(1)
    .executeTakeFirst();
  return { spent_usd: spent.total, alerted: alert ? 1 : 0 };
}

/** The budget's first key and every key that names it as its budget_key_id (kept in `extra`). */
async function budgetMembers(
  db: Kysely<Database>,
  store: PostgresStore,
  budgetKeyId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('gateway_keys')
    .select('key_id')
    .where(store.dialect.jsonText(sql.ref('extra'), '$.budget_key_id'), '=', budgetKeyId)
    .execute();
  return [budgetKeyId, ...rows.map((r) => r.key_id).filter((id) => id !== budgetKeyId)];
}

async function liveHolds(db: Kysely<Database>, budgetKeyId: string, nowUs: number): Promise<Decimal> {
  const r = await db
    .selectFrom('budget_holds')
    .select(sql<string>`coalesce(sum(amount_usd), 0)::text`.as('total'))
    .where('key_id', '=', budgetKeyId)
    .where('expires_us', '>', nowUs)
    .executeTakeFirstOrThrow();
  return parseDecimal(r.total);
}

/** What the tries of one settlement saw, so a retry knows whether an earlier one committed. */
interface SettleTries {
  /** A try's transaction deleted the hold (whether that try committed is unknown). */
  deletedHold: boolean;
  /** The alerts that try's crossing owns. */
  alerts: Alert[];
}

/**
 * Deletes the hold and adds the cost to the key's current windows; returns the alerts this crossing owns.
 * A retry that finds its hold gone after an earlier try deleted it knows that try committed (its answer
 * was lost: a read timeout, a reset after COMMIT): it adds nothing, and returns that try's alerts.
 */
async function settle(
  store: PostgresStore,
  key: CappedKey,
  holdId: string,
  cost: Decimal,
  nowUs: number,
  tries: SettleTries,
): Promise<Alert[]> {
  const budget = budgetKeyIdOf(key);
  return store.kysely.transaction().execute(async (trx) => {
    // the windows first, while this call's hold still keeps its events out of a window seeded now
    const windows = [];
    for (const c of capsOf(key))
      windows.push({ ...c, w: await lockWindow(trx, store, budget, c.kind, nowUs) });
    const deleted = await trx.deleteFrom('budget_holds').where('id', '=', holdId).executeTakeFirst();
    if (deleted.numDeletedRows === 0n && tries.deletedHold) return tries.alerts;
    tries.deletedHold = deleted.numDeletedRows > 0n;
    const alerts: Alert[] = [];
    tries.alerts = alerts;
    for (const { kind, cap, w } of windows) {
      const spent = add(w.spent, cost);
      const crossed = !w.alerted && reachesAlert(spent, cap);
      if (compare(cost, ZERO) === 0 && !crossed) continue;
      await trx
        .updateTable('budget_windows')
        .set({
          spent_usd: sql<string>`spent_usd + ${formatDecimal(cost)}::numeric`,
          ...(crossed ? { alerted: 1 } : {}),
        })
        .where('key_id', '=', budget)
        .where('cap_kind', '=', kind)
        .where('window_start_us', '=', w.startUs)
        .execute();
      if (crossed) alerts.push({ kind, cap, startUs: w.startUs, spent, alerted: true });
    }
    return alerts;
  });
}

/**
 * Drops expired holds, and those of replicas found without their presence lock at this sweep and the
 * one before (`suspects`, updated in place): a live replica's session connection re-takes its lock only
 * once it has reconnected after a PostgreSQL restart, and dropping its holds meanwhile would let
 * concurrent admissions pass the cap.
 */
async function sweepHolds(store: PostgresStore, nowUs: number, suspects: Set<string>): Promise<number> {
  const origins = await store.kysely
    .selectFrom('budget_holds')
    .select(sql<string | null>`origin`.as('origin'))
    .distinct()
    .execute();
  const others = origins.map((o) => o.origin).filter((o): o is string => o !== null && o !== store.origin);
  const alive = others.length ? await store.liveOrigins(others) : new Set<string>();
  const absent = others.filter((o) => !alive.has(o));
  const dead = absent.filter((o) => suspects.has(o));
  suspects.clear();
  for (const o of absent) if (!dead.includes(o)) suspects.add(o);
  const r = await store.kysely
    .deleteFrom('budget_holds')
    .where((eb) =>
      eb.or([eb('expires_us', '<=', nowUs), ...(dead.length ? [eb(sql.ref('origin'), 'in', dead)] : [])]),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** `work`, or a rejection once `ms` have passed without its answer (`onTimeout` is told). */
function withinTime<T>(work: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`the budget store did not answer within ${ms} ms`));
    }, ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Runs `work` again on a lost connection or lock trouble, with backoff: `attempts` times, and beyond
 * them until `windowMs()` has passed since the first failure (a settlement waits out a restart).
 */
async function retry<T>(
  work: () => Promise<T>,
  store: PostgresStore,
  attempts: number,
  windowMs: () => number = () => 0,
): Promise<T> {
  let firstFailureMs: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      firstFailureMs ??= Date.now();
      const waiting = Date.now() - firstFailureMs < windowMs();
      if ((attempt >= attempts && !waiting) || !store.dialect.isRetryable(err)) throw err;
      await new Promise((r) => setTimeout(r, Math.min(1000, 20 * 2 ** attempt)));
    }
  }
}

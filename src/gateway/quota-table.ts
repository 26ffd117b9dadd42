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
import type { Bus } from '../events/bus.ts';
import { add, compare, formatDecimal } from '../lib/decimal.ts';
import { errorMessage, SvcError } from '../lib/errors.ts';
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import { POSTGRES_OUTAGE_MS } from '../store/dialect.ts';
import type { PostgresStore } from '../store/open.ts';
import { budgetKeyIdOf } from './keystore/keystore.ts';
import {
  capsOf,
  NO_RESERVATION,
  publishQuotaAlert,
  type QuotaManager,
  type Reservation,
  refuseOverCap,
} from './quota.ts';
import { liveHolds, lockWindow, type SettleTries, settle, sweepHolds } from './quota-table-rows.ts';

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

/**
 * @module The rows of the PostgreSQL spend caps (quota-table.ts decides with them): a budget's window row
 * locked, created from the trace at its first use; the live holds summed; a settlement (hold deleted, cost
 * added, the 80 % alert claimed once); the sweep of dead replicas' and expired holds.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import { add, compare, type Decimal, formatDecimal, parseDecimal, ZERO } from '../lib/decimal.ts';
import type { PostgresStore } from '../store/open.ts';
import type { Database } from '../store/schema.ts';
import { budgetKeyIdOf } from './keystore/keystore.ts';
import {
  type CapKind,
  type CappedKey,
  capsOf,
  reachesAlert,
  SPEND_EVENT_TYPES,
  windowStartUs,
} from './quota.ts';

interface WindowRow {
  startUs: number;
  spent: Decimal;
  alerted: boolean;
}

export interface Alert extends WindowRow {
  kind: CapKind;
  cap: Decimal;
}

/** The budget's row of the window containing `nowUs`, locked; created from the trace when first needed. */
export async function lockWindow(
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

export async function liveHolds(db: Kysely<Database>, budgetKeyId: string, nowUs: number): Promise<Decimal> {
  const r = await db
    .selectFrom('budget_holds')
    .select(sql<string>`coalesce(sum(amount_usd), 0)::text`.as('total'))
    .where('key_id', '=', budgetKeyId)
    .where('expires_us', '>', nowUs)
    .executeTakeFirstOrThrow();
  return parseDecimal(r.total);
}

/** What the tries of one settlement saw, so a retry knows whether an earlier one committed. */
export interface SettleTries {
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
export async function settle(
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
export async function sweepHolds(
  store: PostgresStore,
  nowUs: number,
  suspects: Set<string>,
): Promise<number> {
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

/**
 * @module Per-key daily and monthly spend caps (UTC windows, DECISIONS §4). Admission reserves the
 * request's worst-case cost, completion settles it to the real cost and failure releases it, so N
 * concurrent requests can never spend past a cap. Spend is seeded from the trace store at start. A
 * rotation's keys share one budget (budgetKeyIdOf): their spend, holds and alerts are counted together.
 */
import type { Bus } from '../events/bus.ts';
import type { QuotaPayloadBase } from '../events/catalog.ts';
import {
  add,
  compare,
  type Decimal,
  div,
  formatDecimal,
  mul,
  parseDecimal,
  sub,
  ZERO,
} from '../lib/decimal.ts';
import { SvcError } from '../lib/errors.ts';
import { type Clock, formatUs } from '../lib/time.ts';
import { budgetKeyIdOf } from './keystore/keystore.ts';

export type CapKind = 'daily' | 'monthly';

export interface CappedKey {
  key_id: string;
  /** The rotation chain's first key, whose budget this key shares (absent: its own). */
  budget_key_id?: string | null;
  daily_cap_usd?: string | null;
  monthly_cap_usd?: string | null;
  user_id?: string | null;
  team_id?: string | null;
}

/**
 * A call's hold. The in-memory manager settles and releases at once; the PostgreSQL one returns a promise
 * that settles (never rejects) once the change is written or given up: the call's answer waits for it, so
 * a client's next request is checked against a spend that counts the call it was just answered.
 */
export interface Reservation {
  /** Replaces the reservation by the real cost of the call. */
  settle(cost: Decimal): void | Promise<void>;
  /** Drops the reservation (the call failed before costing anything we know of). */
  release(): void | Promise<void>;
}

/**
 * Reads the settled spend of one budget (every key that shares it, budgetKeyIdOf) since a UTC boundary,
 * and whether its alert was already sent.
 */
export interface QuotaSeed {
  spentSince(budgetKeyId: string, sinceUs: number): Decimal;
  alertedSince(budgetKeyId: string, capKind: CapKind, sinceUs: number): boolean;
}

export interface QuotaManager {
  /**
   * Throws (or rejects with) SvcError quota_exceeded, and publishes gateway.quota_exceeded, when a cap
   * would be passed. The in-memory manager answers at once; the PostgreSQL one (quota-table.ts) asks
   * the database, which every replica shares.
   */
  admit(
    key: CappedKey,
    worstCase: Decimal,
    context?: Record<string, unknown>,
  ): Reservation | Promise<Reservation>;
  /** Waits for settlements still being written (PostgreSQL). */
  close?(): Promise<void>;
}

/** The in-memory manager of one process (a SQLite deployment's single gateway). */
export interface LocalQuotaManager extends QuotaManager {
  admit(key: CappedKey, worstCase: Decimal, context?: Record<string, unknown>): Reservation;
}

/**
 * The events whose cost_usd a key's budget settled: a call that failed after its provider reported usage
 * settles its hold to that cost (llm/runner.ts), so a restart must count it as the running gateway did.
 */
export const SPEND_EVENT_TYPES = ['llm.call_completed', 'llm.call_failed'] as const;

/** quota.alert goes out once per window, when settled spend reaches this share of the cap. */
export const ALERT_THRESHOLD = 0.8;
const ALERT_RATIO = parseDecimal(String(ALERT_THRESHOLD));
export const NO_RESERVATION: Reservation = { settle() {}, release() {} };

export function createQuotaManager(deps: { bus: Bus; clock: Clock; seed: QuotaSeed }): LocalQuotaManager {
  const windows = new Map<string, WindowState>();

  const stateOf = (key: CappedKey, kind: CapKind, nowUs: number): WindowState => {
    const start = windowStartUs(kind, nowUs);
    const budget = budgetKeyIdOf(key);
    const id = `${budget}\u0000${kind}`;
    let w = windows.get(id);
    if (!w || w.startUs !== start) {
      w = {
        startUs: start,
        spent: deps.seed.spentSince(budget, start),
        reserved: ZERO,
        alerted: deps.seed.alertedSince(budget, kind, start),
      };
      windows.set(id, w);
    }
    return w;
  };

  const maybeAlert = (key: CappedKey, kind: CapKind, cap: Decimal, w: WindowState) => {
    if (w.alerted || !reachesAlert(w.spent, cap)) return;
    w.alerted = true;
    publishQuotaAlert(deps.bus, key, { kind, cap, spent: w.spent, startUs: w.startUs });
  };

  return {
    admit(key, worstCase, context = {}) {
      const caps = capsOf(key);
      if (caps.length === 0) return NO_RESERVATION;
      const nowUs = deps.clock.nowUs();
      const held: Array<{ kind: CapKind; cap: Decimal; w: WindowState }> = [];
      for (const { kind, cap } of caps) {
        const w = stateOf(key, kind, nowUs);
        const committed = add(w.spent, w.reserved);
        if (compare(add(committed, worstCase), cap) > 0)
          throw refuseOverCap(deps.bus, key, {
            kind,
            cap,
            spent: w.spent,
            held: w.reserved,
            worstCase,
            startUs: w.startUs,
            context,
          });
        held.push({ kind, cap, w });
      }
      for (const h of held) h.w.reserved = add(h.w.reserved, worstCase);
      let open = true;
      const releaseAll = () => {
        for (const h of held) h.w.reserved = sub(h.w.reserved, worstCase);
      };
      return {
        settle(cost) {
          if (!open) return;
          open = false;
          releaseAll();
          for (const h of held) {
            // a window that rolled over meanwhile keeps only the new spend
            const current = stateOf(key, h.kind, deps.clock.nowUs());
            current.spent = add(current.spent, cost);
            maybeAlert(key, h.kind, h.cap, current);
          }
        },
        release() {
          if (!open) return;
          open = false;
          releaseAll();
        },
      };
    },
  };
}

/** Start of the UTC day or month containing `us`. */
export function windowStartUs(kind: CapKind, us: number): number {
  const d = new Date(Math.floor(us / 1000));
  const ms =
    kind === 'daily'
      ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
      : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return ms * 1000;
}

/** First microsecond after the window that starts at `startUs`. */
export function windowEndUs(kind: CapKind, startUs: number): number {
  const d = new Date(startUs / 1000);
  const ms =
    kind === 'daily'
      ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)
      : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return ms * 1000;
}

/** The caps a key has, daily first (the order both managers lock and report them in). */
export function capsOf(key: CappedKey): Array<{ kind: CapKind; cap: Decimal }> {
  const caps: Array<{ kind: CapKind; cap: Decimal }> = [];
  if (key.daily_cap_usd != null) caps.push({ kind: 'daily', cap: parseDecimal(key.daily_cap_usd) });
  if (key.monthly_cap_usd != null) caps.push({ kind: 'monthly', cap: parseDecimal(key.monthly_cap_usd) });
  return caps;
}

/** Whether settled spend `spent` has reached the alert threshold of `cap`. */
export function reachesAlert(spent: Decimal, cap: Decimal): boolean {
  return compare(spent, mul(cap, ALERT_RATIO)) >= 0;
}

/** Publishes quota.alert for one of the key's cap windows (local and shared quota alike). */
export function publishQuotaAlert(
  bus: Bus,
  key: CappedKey,
  a: { kind: CapKind; cap: Decimal; spent: Decimal; startUs: number },
): void {
  bus.publish({
    type: 'quota.alert',
    actor: 'gateway',
    payload: {
      ...keyIdentity(key),
      cap_kind: a.kind,
      cap_usd: formatDecimal(a.cap),
      spent_usd: formatDecimal(a.spent),
      ratio: ratioOf(a.spent, a.cap),
      threshold: ALERT_THRESHOLD,
      window_start: formatUs(a.startUs),
      resets_at: formatUs(windowEndUs(a.kind, a.startUs)),
    },
  });
}

/**
 * A request refused by a cap: `gateway.quota_exceeded` (under the request's turn id) and the 429 saying
 * why — the cap reached, or, before that, the spend, what calls in flight hold and what this request can
 * cost at most (its worst case is held so concurrent calls never pass the cap), with what to do.
 */
export function refuseOverCap(
  bus: Bus,
  key: CappedKey,
  r: {
    kind: CapKind;
    cap: Decimal;
    spent: Decimal;
    held: Decimal;
    worstCase: Decimal;
    startUs: number;
    context: Record<string, unknown>;
  },
): SvcError {
  const details = {
    cap_kind: r.kind,
    cap_usd: formatDecimal(r.cap),
    spent_usd: formatDecimal(r.spent),
    reserved_usd: formatDecimal(r.held),
    requested_usd: formatDecimal(r.worstCase),
    resets_at: formatUs(windowEndUs(r.kind, r.startUs)),
  };
  const turnId = typeof r.context.turn_id === 'string' ? r.context.turn_id : null;
  bus.publish({
    type: 'gateway.quota_exceeded',
    actor: 'gateway',
    turn_id: turnId,
    payload: { ...keyIdentity(key), ...details, ...r.context },
  });
  const cap = `The ${r.kind} spend cap of ${details.cap_usd} USD for this key`;
  const message =
    compare(r.spent, r.cap) >= 0
      ? `${cap} is reached (spent ${details.spent_usd} USD); it resets at ${details.resets_at}.`
      : `${cap} could be passed by this request: spent ${details.spent_usd} USD, ${details.reserved_usd} USD held for calls in flight, and this request can cost up to ${details.requested_usd} USD; ask for fewer output tokens (max_tokens) or wait until ${details.resets_at}.`;
  return new SvcError('quota_exceeded', { message, details });
}

/** Who a quota event is about: the key, with the user and team it is tagged with. */
export function keyIdentity(
  key: CappedKey,
): Pick<QuotaPayloadBase, 'identity_kind' | 'identity_id' | 'gateway_key_id' | 'user_id' | 'team_id'> {
  return {
    identity_kind: 'key',
    identity_id: key.key_id,
    gateway_key_id: key.key_id,
    user_id: key.user_id ?? null,
    team_id: key.team_id ?? null,
  };
}

/** quota.alert's ratio: spend over cap, six decimals. */
export function ratioOf(spent: Decimal, cap: Decimal): number {
  if (cap.units === 0n) return 1;
  return Number(formatDecimal(div(spent, cap, 6), 0));
}

// --- internal ---

interface WindowState {
  startUs: number;
  spent: Decimal;
  reserved: Decimal;
  alerted: boolean;
}

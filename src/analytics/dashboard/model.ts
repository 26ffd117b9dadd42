/**
 * @module What the dashboard shows, computed from the API's answers without a DOM (so node tests check
 * it): window presets in the browser's time zone sent as UTC, the >50 % concentration callout, signed
 * money and shares. Every figure is the API's number, only formatted.
 */

export const WINDOW_PRESETS = ['today', '7d', '30d', 'custom'] as const;
export type WindowPreset = (typeof WINDOW_PRESETS)[number];

/** ISO 8601 UTC bounds, as the API takes `from` / `to` (a type alias: it is also a query-string record). */
export type UtcWindow = { from: string; to: string };

/**
 * A preset's bounds: `today` from local midnight, `7d` / `30d` from local midnight 6 / 29 days before
 * today (so "7 days" is this day and the six before it), all ending now; `custom` takes two local
 * `YYYY-MM-DDTHH:MM` values (datetime-local inputs). Date arithmetic runs in the runtime's local zone.
 */
export function resolvePreset(
  preset: WindowPreset,
  now: Date,
  custom?: { from: string; to: string },
): UtcWindow {
  if (preset === 'custom') {
    if (!custom) throw new Error('a custom window needs from and to');
    const w = { from: localInputToUtc(custom.from), to: localInputToUtc(custom.to) };
    if (Date.parse(w.to) <= Date.parse(w.from))
      throw new Error('The custom window must end after it starts.');
    return w;
  }
  const days = preset === 'today' ? 0 : preset === '7d' ? 6 : 29;
  const start = new Date(now.getFullYear(), now.getMonth(), now.getDate() - days, 0, 0, 0, 0);
  return { from: start.toISOString(), to: now.toISOString() };
}

/** `2026-03-01T09:30` in the local zone → its UTC ISO form. */
export function localInputToUtc(value: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(value);
  if (!m) throw new Error(`not a local date and time: ${value}`);
  // setFullYear, not the constructor, which reads a year below 100 as 19xx (0050 would be sent as 1950)
  const d = new Date(0);
  d.setFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setHours(Number(m[4]), Number(m[5]), 0, 0);
  return d.toISOString();
}

/** Hourly buckets for a window of up to two days, daily ones beyond (the cost chart's group_by). */
export function bucketFor(window: UtcWindow): 'hour' | 'day' {
  return Date.parse(window.to) - Date.parse(window.from) <= 2 * 86_400_000 ? 'hour' : 'day';
}

/**
 * Dollars with the sign kept: `$1,234.56`, `-$0.0042`, `$0.0000005`. Two decimals from a cent up; below
 * it the amount's own digits (up to 6 significant ones), so a call of a cheap model that cost less than
 * $0.000001 never reads as $0.00 nor is rounded up to a multiple of itself.
 */
export function formatUsd(value: number): string {
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  const text =
    abs !== 0 && abs < 0.01
      ? abs.toLocaleString('en-US', { maximumSignificantDigits: 6 })
      : abs.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return `${sign}$${text}`;
}

/**
 * A money axis tick: the tick's own digits (up to 6 significant ones), at least two decimals from a cent
 * up, so neighbouring ticks never share a label as formatUsd's cents would make them ($0.015 and $0.02
 * both read $0.02 there): `$0.015`, `$0.02`, `$1.50`, `$0.0005`.
 */
export function formatUsdTick(value: number): string {
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  let text = abs.toLocaleString('en-US', { maximumSignificantDigits: 6 });
  if (abs >= 0.01 || abs === 0) {
    const [whole, fraction = ''] = text.split('.');
    if (fraction.length < 2) text = `${whole}.${fraction.padEnd(2, '0')}`;
  }
  return `${sign}$${text}`;
}

/** A fraction as a percentage with its sign: 0.6612 → `66.1%`, -0.05 → `-5.0%`. */
export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

/**
 * A share of the window's spend: one decimal, as formatPercent, except near half, where the callout's
 * line lies (strictly above 50 %): a share that is not exactly half gets the decimals that tell which side
 * it is on (0.500133 → `50.01%`, 0.49996 → `49.996%`), so a called-out share never reads as 50.0%.
 */
export function formatShare(fraction: number): string {
  const text = formatPercent(fraction);
  if (text !== '50.0%' || fraction === 0.5) return text;
  for (let digits = 2; digits <= 12; digits++) {
    const more = (fraction * 100).toFixed(digits);
    if (Number(more) !== 50) return `${more}%`;
  }
  return `${(fraction * 100).toPrecision(17)}%`;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** `1 call`, `2 calls`. */
export function formatCalls(n: number): string {
  return `${formatCount(n)} ${n === 1 ? 'call' : 'calls'}`;
}

export type IdentityKind = 'team' | 'user' | 'key';

export interface IdentityShare {
  kind: IdentityKind;
  /** The id; null for untagged traffic (or the agent's own calls, for keys). */
  id: string | null;
  cost_usd: number;
  call_count: number;
}

export interface Callout {
  kind: IdentityKind;
  id: string;
  share: number;
}

/** Spec 3: a callout only when one identity takes strictly more than half the window's spend. */
export const CALLOUT_SHARE = 0.5;

/**
 * The callouts of the identity tab: for each kind (team, developer, key), its top identity when that one
 * takes more than 50 % of `total` (spec 3: a top-team, top-developer or top-key callout), in that order;
 * untagged buckets never count as an identity. Empty when nobody is above half, or nothing was spent.
 */
export function concentrationCallouts(total: number, identities: readonly IdentityShare[]): Callout[] {
  if (!(total > 0)) return [];
  const out: Callout[] = [];
  for (const kind of ['team', 'user', 'key'] as const) {
    const top = identities
      .filter((i) => i.kind === kind && i.id !== null)
      .reduce<IdentityShare | null>(
        (best, i) => (best === null || i.cost_usd > best.cost_usd ? i : best),
        null,
      );
    if (top && top.id !== null && top.cost_usd / total > CALLOUT_SHARE)
      out.push({ kind, id: top.id, share: top.cost_usd / total });
  }
  return out;
}

export const KIND_LABEL: Record<IdentityKind, string> = { team: 'team', user: 'developer', key: 'key' };

/** The savings tile: signed money, the percentage (or none), and the warning when rows lack prices. */
export function savingsView(s: {
  savings_usd: number;
  savings_pct: number | null;
  baseline_model: string;
  rows_missing_from_price_table: number;
}) {
  return {
    amount: formatUsd(s.savings_usd),
    percent: s.savings_pct === null ? null : formatPercent(s.savings_pct),
    negative: s.savings_usd < 0,
    baseline: s.baseline_model,
    warning:
      s.rows_missing_from_price_table > 0
        ? `${formatCalls(s.rows_missing_from_price_table)} used models missing from the price table: the percentage is overstated.`
        : null,
  };
}

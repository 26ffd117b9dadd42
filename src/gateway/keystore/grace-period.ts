import { SvcError } from '../../lib/errors.ts';

/** Spec 1 §States: forms like `30m`, `24h`, `7d`, `2w`; the default is 24h. */
export const DEFAULT_GRACE_PERIOD = '24h';

const UNIT_US = { m: 60_000_000, h: 3_600_000_000, d: 86_400_000_000, w: 604_800_000_000 } as const;
const GRACE_RE = /^([1-9]\d{0,5})([mhdw])$/;
/** Upper bound so that a typo cannot keep an old key alive for ever. */
const MAX_GRACE_US = 52 * UNIT_US.w;

/** Microseconds of a grace period; anything but `<n>m|h|d|w` (n ≥ 1, at most 52 weeks) is a usage error. */
export function parseGracePeriod(text: string): number {
  const m = GRACE_RE.exec(text.trim());
  const us = m ? Number(m[1]) * UNIT_US[m[2] as keyof typeof UNIT_US] : Number.NaN;
  if (!m || us > MAX_GRACE_US) {
    throw new SvcError('usage_error', {
      message: `Invalid --grace-period "${text}": use a whole number of minutes, hours, days or weeks such as 30m, 24h, 7d or 2w (at most 52w).`,
    });
  }
  return us;
}

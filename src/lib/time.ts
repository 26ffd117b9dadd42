/**
 * @module Microsecond UTC time: the only place timestamps are formatted (DECISIONS §2).
 */

export interface Clock {
  /** Microseconds since the Unix epoch; never goes backwards within a process. */
  nowUs(): number;
}

let lastUs = 0;

/** Wall-clock microseconds, made non-decreasing so event order and time order agree. */
export function nowUs(): number {
  const us = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  lastUs = Math.max(us, lastUs);
  return lastUs;
}

export const systemClock: Clock = { nowUs };

let cachedSecond = Number.NaN;
let cachedPrefix = '';

/** `2026-11-22T06:01:02.123456Z` from epoch microseconds (the date part is built once per second). */
export function formatUs(us: number): string {
  const second = Math.floor(us / 1_000_000);
  if (second !== cachedSecond) {
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19); // 2026-11-22T06:01:02
    cachedSecond = second;
  }
  return `${cachedPrefix}.${String(us - second * 1_000_000).padStart(6, '0')}Z`;
}

export function nowIso(clock: Clock = systemClock): string {
  return formatUs(clock.nowUs());
}

const ISO_RE =
  /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Epoch microseconds of an ISO 8601 timestamp; undefined when malformed. The zone is `Z` or an offset
 * (`+02:00`, `+0200`, `+02`); a timestamp without one is UTC, a date alone is its midnight UTC, and the
 * seconds may be left out. An offset whose `+` arrived as a space (unencoded in a URL) is read as `+`.
 */
export function parseIsoUs(text: string): number | undefined {
  const us = parseIsoExactUs(text);
  return us === undefined ? undefined : Number(us);
}

/**
 * parseIsoUs to the microsecond: a double holds every microsecond only between the years 1685 and 2255,
 * so a bound such as 9999-12-31T23:59:59.999999Z is read as a bigint.
 */
export function parseIsoExactUs(text: string): bigint | undefined {
  const m = ISO_RE.exec(
    text.replace(/^(.*[Tt ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?) (\d{2}(?::?\d{2})?)$/, '$1+$2'),
  );
  if (!m) return undefined;
  const [, date, hh = '00', mm = '00', ss = '00', fraction, zone = 'Z'] = m;
  const wall = `${date}T${hh}:${mm}:${ss}`;
  const offset = zone === 'Z' || zone === 'z' ? 'Z' : normalizeOffset(zone);
  const ms = Date.parse(`${wall}${offset}`);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls impossible dates over (Feb 30 → Mar 2); the wall-clock fields must survive a round trip
  const offsetMin =
    offset === 'Z'
      ? 0
      : (offset[0] === '-' ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4)));
  if (new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19) !== wall) return undefined;
  const frac = (fraction ?? '').padEnd(6, '0').slice(0, 6);
  return BigInt(ms) * 1000n + BigInt(frac);
}

/** formatUs of exact microseconds (parseIsoExactUs), for instants a double cannot hold to the microsecond. */
export function formatExactUs(us: bigint): string {
  let second = us / 1_000_000n;
  if (second * 1_000_000n > us) second -= 1n; // floor, before the epoch too
  const prefix = new Date(Number(second) * 1000).toISOString().slice(0, 19);
  return `${prefix}.${String(us - second * 1_000_000n).padStart(6, '0')}Z`;
}

/** `+02`, `+0200` or `+02:00` → `+02:00`. */
function normalizeOffset(zone: string): string {
  const digits = zone.slice(1).replace(':', '');
  return `${zone[0]}${digits.slice(0, 2)}:${digits.slice(2, 4).padEnd(2, '0')}`;
}

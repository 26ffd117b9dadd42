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

const ISO_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Epoch microseconds of an ISO 8601 timestamp with an explicit zone; undefined when malformed. */
export function parseIsoUs(text: string): number | undefined {
  const m = ISO_RE.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls impossible dates over (Feb 30 → Mar 2); the wall-clock fields must survive a round trip
  const offsetMin =
    m[3] === 'Z' ? 0 : (m[3][0] === '-' ? -1 : 1) * (Number(m[3].slice(1, 3)) * 60 + Number(m[3].slice(4)));
  if (new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19) !== m[1]) return undefined;
  const frac = (m[2] ?? '').padEnd(6, '0').slice(0, 6);
  return ms * 1000 + Number(frac);
}

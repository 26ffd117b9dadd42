/**
 * @module Time windows of the analytics namespace: `from` includes, `to` excludes (spec 3 §Resources).
 * Bounds are epoch microseconds; null is an open end (the export defaults to all time).
 */
import type { WindowBounds } from '../events/catalog.ts';
import { SvcError } from '../lib/errors.ts';
import { formatExactUs, parseIsoExactUs } from '../lib/time.ts';

/**
 * Window bounds lie in the years 0000 to 9999 (UTC): from 0000-01-01T00:00:00Z, and before
 * 10000-01-01T00:00:00Z (exclusive).
 */
export const MIN_WINDOW_US = -62_167_219_200_000_000n; // Date.UTC would read year 0 as 1900
export const END_WINDOW_US = 253_402_300_800_000_000n;

export interface TimeWindow {
  /** Inclusive start, epoch microseconds (the nearest double: what queries compare); null = no lower bound. */
  readonly startUs: number | null;
  /** Exclusive end, epoch microseconds (the nearest double); null = no upper bound. */
  readonly endUs: number | null;
  /**
   * Both bounds to the microsecond, present when a double cannot hold one (before 1685 or after 2255, e.g.
   * to=9999-12-31T23:59:59.999999Z): what the window echoes. No stored event is that far from now.
   */
  readonly exactUs?: { readonly start: bigint | null; readonly end: bigint | null };
}

export interface WindowInput {
  from?: string | undefined;
  to?: string | undefined;
}

export interface WindowOptions {
  /** Bounds used when `from` / `to` are absent; null (open) unless given. */
  defaults?: TimeWindow;
  /** How the parameters are called where they came from (`from` on HTTP, `--from` on the CLI). */
  names?: { from: string; to: string };
}

/**
 * Parses `from` / `to` (ISO 8601 with a zone). A malformed bound, or `from` after `to`, throws
 * `invalid_window` (HTTP 400, exit 2; DECISIONS §5) with one sentence naming the parameter.
 */
export function resolveWindow(input: WindowInput, options: WindowOptions = {}): TimeWindow {
  const names = options.names ?? { from: 'from', to: 'to' };
  const defaults = options.defaults ? exactBounds(options.defaults) : { start: null, end: null };
  const start = parseBound(input.from, names.from) ?? defaults.start;
  const end = parseBound(input.to, names.to) ?? defaults.end;
  if (start !== null && end !== null && start > end) {
    throw new SvcError('invalid_window', {
      message: `The window start ${names.from} ${formatExactUs(start)} is after its end ${names.to} ${formatExactUs(end)}; pass ${names.from} before ${names.to}.`,
    });
  }
  return windowOf(start, end);
}

/** A window of exact bounds (exactUs kept only where a double would lose a microsecond). */
export function windowOf(start: bigint | null, end: bigint | null): TimeWindow {
  const window = { startUs: start === null ? null : Number(start), endUs: end === null ? null : Number(end) };
  const lossy = (b: bigint | null) => b !== null && BigInt(Number(b)) !== b;
  return lossy(start) || lossy(end) ? { ...window, exactUs: { start, end } } : window;
}

/** The window's bounds to the microsecond. */
export function exactBounds(window: TimeWindow): { start: bigint | null; end: bigint | null } {
  if (window.exactUs) return window.exactUs;
  const exact = (us: number | null) => (us === null ? null : BigInt(us));
  return { start: exact(window.startUs), end: exact(window.endUs) };
}

/** The window as ISO bounds for envelopes and audit events. */
export function formatWindow(window: TimeWindow): WindowBounds {
  const { start, end } = exactBounds(window);
  return {
    start: start === null ? null : formatExactUs(start),
    end: end === null ? null : formatExactUs(end),
  };
}

// --- internal ---

function parseBound(text: string | undefined, name: string): bigint | undefined {
  if (text === undefined) return undefined;
  const parsed = parseIsoExactUs(text);
  if (parsed === undefined) {
    throw new SvcError('invalid_window', {
      message: `${name} ${JSON.stringify(text.slice(0, 60))} is not an ISO 8601 timestamp; use a form such as 2026-11-22T06:01:02Z (without a zone it is read as UTC).`,
    });
  }
  // the store keeps microseconds: a bound between two of them moves up to the next one, so an event
  // before `from` never counts and one before `to` always does
  const us = SUB_MICROSECOND.test(text) ? parsed + 1n : parsed;
  // the window is echoed as YYYY-MM-DDTHH:MM:SS.ffffffZ, which has four digits for the year
  if (us < MIN_WINDOW_US || us >= END_WINDOW_US) {
    throw new SvcError('invalid_window', {
      message: `${name} ${JSON.stringify(text.slice(0, 60))} falls outside the years 0000 to 9999 in UTC; pass a bound within them.`,
    });
  }
  return us;
}

/** A seventh or later fraction digit that is not zero (`…02.1234561Z`). */
const SUB_MICROSECOND = /[.,]\d{6}\d*[1-9]/;

/**
 * @module Time windows of the analytics namespace: `from` includes, `to` excludes (spec 3 §Resources).
 * Bounds are epoch microseconds; null is an open end (the export defaults to all time).
 */
import type { WindowBounds } from '../events/catalog.ts';
import { SvcError } from '../lib/errors.ts';
import { formatUs, parseIsoUs } from '../lib/time.ts';

/**
 * Window bounds lie in the years 0000 to 9999 (UTC): from 0000-01-01T00:00:00Z, and before
 * 10000-01-01T00:00:00Z (exclusive; a double holds both exactly, though not every microsecond between
 * them beyond 2255).
 */
export const MIN_WINDOW_US = -62_167_219_200_000_000; // Date.UTC would read year 0 as 1900
export const END_WINDOW_US = 253_402_300_800_000_000;

export interface TimeWindow {
  /** Inclusive start, epoch microseconds; null = no lower bound. */
  readonly startUs: number | null;
  /** Exclusive end, epoch microseconds; null = no upper bound. */
  readonly endUs: number | null;
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
  const startUs = parseBound(input.from, names.from) ?? options.defaults?.startUs ?? null;
  const endUs = parseBound(input.to, names.to) ?? options.defaults?.endUs ?? null;
  if (startUs !== null && endUs !== null && startUs > endUs) {
    throw new SvcError('invalid_window', {
      message: `The window start ${names.from} ${formatUs(startUs)} is after its end ${names.to} ${formatUs(endUs)}; pass ${names.from} before ${names.to}.`,
    });
  }
  return { startUs, endUs };
}

/** The window as ISO bounds for envelopes and audit events. */
export function formatWindow(window: TimeWindow): WindowBounds {
  return {
    start: window.startUs === null ? null : formatUs(window.startUs),
    end: window.endUs === null ? null : formatUs(window.endUs),
  };
}

// --- internal ---

function parseBound(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const us = parseIsoUs(text);
  if (us === undefined) {
    throw new SvcError('invalid_window', {
      message: `${name} ${JSON.stringify(text.slice(0, 60))} is not an ISO 8601 timestamp; use a form such as 2026-11-22T06:01:02Z (without a zone it is read as UTC).`,
    });
  }
  // the window is echoed as YYYY-MM-DDTHH:MM:SS.ffffffZ, which has four digits for the year
  if (us < MIN_WINDOW_US || us >= END_WINDOW_US) {
    throw new SvcError('invalid_window', {
      message: `${name} ${JSON.stringify(text.slice(0, 60))} falls outside the years 0000 to 9999 in UTC; pass a bound within them.`,
    });
  }
  // the store keeps microseconds: a bound between two of them moves up to the next one, so an event
  // before `from` never counts and one before `to` always does
  return SUB_MICROSECOND.test(text) ? us + 1 : us;
}

/** A seventh or later fraction digit that is not zero (`…02.1234561Z`). */
const SUB_MICROSECOND = /[.,]\d{6}\d*[1-9]/;

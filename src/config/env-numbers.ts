/**
 * @module Whole-number settings from the environment (SVC_GATEWAY_*, SVC_AGENT_*): a value that is not a whole number refuses the start
 * (spec 1 §Deployment contract: say what to fix), an unset one is undefined so the caller's default applies.
 */
import { SvcError } from '../lib/errors.ts';

/**
 * The longest delay a Node timer holds (2^31 - 1 ms, about 24.8 days). A setting named `*_MS` is a timer
 * delay, and Node runs a longer one after 1 ms with only a warning: SVC_PATTERN_REFRESH_MS=3000000000
 * rebuilt the pattern table without pause. Such a value refuses the start instead.
 */
const MAX_TIMER_MS = 2_147_483_647;

/** A whole number above 0, or undefined when unset. */
export function positiveInt(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim()) || Number(text) === 0) throw badNumber(name, text, 'a whole number above 0');
  return withinRange(Number(text), name, text);
}

/** A whole number, 0 included, or undefined when unset. */
export function nonNegativeInt(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim())) throw badNumber(name, text, 'a whole number');
  return withinRange(Number(text), name, text);
}

// --- internal ---

function withinRange(value: number, name: string, text: string): number {
  if (name.endsWith('_MS') && value > MAX_TIMER_MS) {
    throw badNumber(name, text, `at most ${MAX_TIMER_MS} (about 24.8 days, the longest timer Node holds)`);
  }
  if (!Number.isSafeInteger(value)) throw badNumber(name, text, `at most ${Number.MAX_SAFE_INTEGER}`);
  return value;
}

function badNumber(name: string, text: string, wanted: string): SvcError {
  return new SvcError('startup_refused', {
    message: `${name} must be ${wanted}, not "${text}"; fix or unset it and start svc again.`,
  });
}

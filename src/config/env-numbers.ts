/**
 * @module Whole-number settings from the environment (SVC_GATEWAY_*, SVC_AGENT_*): a value that is not a whole number refuses the start
 * (spec 1 §Deployment contract: say what to fix), an unset one is undefined so the caller's default applies.
 */
import { SvcError } from '../lib/errors.ts';

/** A whole number above 0, or undefined when unset. */
export function positiveInt(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim()) || Number(text) === 0) throw badNumber(name, text, 'a whole number above 0');
  return Number(text);
}

/** A whole number, 0 included, or undefined when unset. */
export function nonNegativeInt(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim())) throw badNumber(name, text, 'a whole number');
  return Number(text);
}

// --- internal ---

function badNumber(name: string, text: string, wanted: string): SvcError {
  return new SvcError('startup_refused', {
    message: `${name} must be ${wanted}, not "${text}"; fix or unset it and start svc again.`,
  });
}

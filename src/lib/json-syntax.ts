/**
 * @module JSON.parse's reason without the text it failed on. V8 quotes an excerpt of the source
 * (`Unexpected token 'x', ..."keys": [ x ..." is not valid JSON`, or the whole of a short one): it spans
 * lines, and it copied what was parsed (a keystore, a provider's answer with the conversation's text) into
 * messages, events and logs.
 */
import { errorMessage } from './errors.ts';

/** `Unexpected token 'x'`, `Unterminated string in JSON at position 12`, …; 'a syntax error' when nothing is left. */
export function jsonSyntaxReason(err: unknown): string {
  const reason = errorMessage(err)
    .replace(/,?\s*(?:\.\.\.)?"[\s\S]*"? is not valid JSON$/, '')
    .replace(/\s+/g, ' ')
    .trim();
  return reason || 'a syntax error';
}

/**
 * @module A valibot issue in the product's words, for every validated input (service endpoints, the provider
 * shapes' bodies): valibot's defaults ("Invalid key: Expected \"model\" but received undefined") name its own
 * internals rather than what to send.
 */
import type * as v from 'valibot';

/**
 * The issue's message in the product's words where valibot's default would show: a missing key ("Invalid
 * key: …") is "is required", a wrong type ("Invalid type: Expected Object but received null") says what
 * it must be; a schema's own message is kept.
 */
export function issueMessage(issue: v.BaseIssue<unknown>): string {
  const missing = issue.kind === 'schema' && OBJECT_TYPES.has(issue.type) && issue.received === 'undefined';
  if (missing && issue.path?.length) return 'is required';
  if (issue.kind === 'schema' && issue.message.startsWith('Invalid type:') && issue.expected)
    return `must be ${expectedWords(issue.expected)}, not ${receivedWords(issue.received)}`;
  return issue.message;
}

/** valibot's object schemas (the provider shapes' bodies are loose: unknown fields pass through). */
const OBJECT_TYPES: ReadonlySet<string> = new Set([
  'object',
  'loose_object',
  'strict_object',
  'object_with_rest',
]);

/** What was expected, in JSON's words: `(string | Array)` is "a string or an array". */
function expectedWords(expected: string): string {
  return expected
    .replace(/^\((.*)\)$/, '$1')
    .split(' | ')
    .map((t) => TYPE_WORDS[t] ?? t)
    .join(' or ');
}

/**
 * What arrived, in JSON's words: valibot names an object or array by its constructor (`Object`, `Array`),
 * and quotes a string whole, which could be a whole prompt echoed back; a long one is cut.
 */
function receivedWords(received: string): string {
  if (received === 'Object') return 'a JSON object';
  if (received === 'Array') return 'an array';
  return received.length > RECEIVED_MAX ? `${received.slice(0, RECEIVED_MAX - 2)}…"` : received;
}

const RECEIVED_MAX = 40;

const TYPE_WORDS: Record<string, string> = {
  Object: 'a JSON object',
  Array: 'an array',
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
};

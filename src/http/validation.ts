/**
 * @module Input validation at the edge of service endpoints (STYLE rule 4): a valibot schema over a JSON
 * body or a query string; the first failure is 400 `validation_error` naming the field.
 */
import * as v from 'valibot';
import { SvcError } from '../lib/errors.ts';
import { formatPath } from '../models/config-yaml.ts';

/** The schema's output, or SvcError validation_error with `details.field` and every issue. */
export function validateInput<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  where: 'body' | 'query' = 'body',
): v.InferOutput<S> {
  // valibot's object schemas take an array for an object without keys: `[]` would cancel a turn or pass a
  // check as `{}` does, and `[{…}]` be refused for a missing field. Every body these endpoints read is an object.
  if (where === 'body' && Array.isArray(input))
    throw new SvcError('validation_error', {
      message: 'body: must be a JSON object, not an array',
      details: { field: 'body', issues: [{ field: null, message: 'must be a JSON object, not an array' }] },
    });
  const parsed = v.safeParse(schema, input);
  if (parsed.success) return parsed.output;
  const issues = parsed.issues.map((issue) => ({
    field: formatPath(issue.path) || null,
    message: issueMessage(issue),
  }));
  const first = issues[0];
  const field = first.field ?? where;
  throw new SvcError('validation_error', {
    message: `${field}: ${first.message}`,
    details: { field, issues },
  });
}

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

/** A query-string integer in [min, max] with a default (DECISIONS §5 page sizes). */
export function limitSchema(defaultValue: number, max: number) {
  const message = `must be a whole number from 1 to ${max}`;
  return v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,9}$/, message),
      v.transform(Number),
      v.minValue(1, message),
      v.maxValue(max, message),
    ),
    String(defaultValue),
  );
}

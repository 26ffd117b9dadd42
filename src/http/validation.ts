/**
 * @module Input validation at the edge of service endpoints (STYLE rule 4): a valibot schema over a JSON
 * body or a query string; the first failure is 400 `validation_error` naming the field.
 */
import * as v from 'valibot';
import { SvcError } from '../lib/errors.ts';
import { issueMessage } from '../lib/issue-message.ts';
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
 * The query string read by an object `schema`: each parameter it reads given at most once, else 400
 * `validation_error` naming it (`purge=true&purge=false` is refused, not read as its first value, as the
 * analytics parameters are); parameters it does not read are left alone.
 */
export function validateQuery<
  S extends v.ObjectSchema<v.ObjectEntries, v.ErrorMessage<v.ObjectIssue> | undefined>,
>(schema: S, all: Readonly<Record<string, readonly string[]>>): v.InferOutput<S> {
  const query: Record<string, string> = {};
  for (const [name, values] of Object.entries(all)) {
    if (!Object.hasOwn(schema.entries, name) || values.length === 0) continue;
    if (values.length > 1) {
      const message = `is given ${values.length} times; give it once`;
      throw new SvcError('validation_error', {
        message: `${name}: ${message}`,
        details: { field: name, issues: [{ field: name, message }] },
      });
    }
    query[name] = values[0];
  }
  return validateInput(schema, query, 'query');
}

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

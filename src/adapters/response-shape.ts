/**
 * @module The edge check of an upstream 200 body: it must be the provider's response object before it is
 * decoded, priced or passed through (issue 17: a 200 of `"oops"` or `{}` was billed as a $0 success).
 * Anything else is `upstream_error` of class `server_error`; the message names the path and the expected
 * type, never the received value (it may quote the prompt).
 */
import * as v from 'valibot';
import { SvcError } from '../lib/errors.ts';

/** Count fields of a usage object: non-negative numbers. */
export const TokenCountSchema = v.pipe(v.number(), v.minValue(0));

/** `body` as `schema` describes it, or SvcError('upstream_error', server_error) naming the first mismatch. */
export function checkResponseShape<S extends v.GenericSchema>(
  schema: S,
  body: unknown,
  what: string,
): v.InferOutput<S> {
  const result = v.safeParse(schema, body, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = issue.path?.map((p) => String(p.key)).join('.') || 'body';
  throw new SvcError('upstream_error', {
    message: `the upstream answered 200 with a body that is not ${what} (${path}: expected ${issue.expected ?? 'a valid value'})`,
    details: { error_class: 'server_error' },
  });
}

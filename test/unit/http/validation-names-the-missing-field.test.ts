import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as v from 'valibot';
import { validateInput } from '#src/http/validation.ts';
import type { SvcError } from '#src/lib/errors.ts';

const Schema = v.object({
  workspace_path: v.string('must be a string'),
  nested: v.optional(v.object({ decision: v.picklist(['allow', 'deny'], 'must be allow or deny') })),
});

function refusal(input: unknown): SvcError {
  try {
    validateInput(Schema, input);
  } catch (err) {
    return err as SvcError;
  }
  throw new Error('accepted');
}

test('a missing key is "is required" under its own name, wherever it sits', () => {
  let err = refusal({});
  assert.equal(err.code, 'validation_error');
  assert.equal(err.message, 'workspace_path: is required');
  assert.equal(err.details?.field, 'workspace_path');
  err = refusal({ workspace_path: '/w', nested: {} });
  assert.equal(err.message, 'nested.decision: is required');
});

test('a present key keeps its schema message', () => {
  assert.equal(refusal({ workspace_path: 5 }).message, 'workspace_path: must be a string');
  assert.equal(
    refusal({ workspace_path: '/w', nested: { decision: 'x' } }).message,
    'nested.decision: must be allow or deny',
  );
});

test('a wrong type without a schema message says what it must be, never valibot’s "Invalid type: Expected …"', () => {
  assert.equal(refusal(null).message, 'body: must be a JSON object, not null');
  assert.equal(refusal('x').message, 'body: must be a JSON object, not "x"');
  const Plain = v.object({
    n: v.optional(v.number()),
    tags: v.optional(v.array(v.string())),
    mode: v.optional(v.picklist(['a', 'b'])),
  });
  const message = (input: unknown) => {
    try {
      validateInput(Plain, input);
    } catch (err) {
      return (err as SvcError).message;
    }
    throw new Error('accepted');
  };
  assert.equal(message({ n: 'x' }), 'n: must be a number, not "x"');
  assert.equal(message({ tags: {} }), 'tags: must be an array, not a JSON object');
  assert.equal(message({ mode: 'c' }), 'mode: must be "a" or "b", not "c"');
});

test('a loose object (a provider-shape body) names a missing key the same way, and a union in JSON’s words', () => {
  const Loose = v.looseObject({
    model: v.string(),
    content: v.optional(v.union([v.string(), v.array(v.string())])),
  });
  const message = (input: unknown) => {
    try {
      validateInput(Loose, input);
    } catch (err) {
      return (err as SvcError).message;
    }
    throw new Error('accepted');
  };
  assert.equal(message({}), 'model: is required');
  assert.equal(message({ model: 'm', content: 5 }), 'content: must be a string or an array, not 5');
});

test('a wrong type is named in JSON’s words, and a long string that arrived is not echoed whole', () => {
  const Plain = v.object({ n: v.optional(v.number()) });
  const message = (input: unknown) => {
    try {
      validateInput(Plain, input);
    } catch (err) {
      return (err as SvcError).message;
    }
    throw new Error('accepted');
  };
  assert.equal(message({ n: {} }), 'n: must be a number, not a JSON object');
  assert.equal(message({ n: [1] }), 'n: must be a number, not an array');
  const long = message({ n: `${'word '.repeat(2000)}` });
  assert.ok(long.length < 100, long);
  assert.match(long, /^n: must be a number, not "word word .*…"$/);
});

test('an array body is not a JSON object: refused as the body, never read as an object without keys', () => {
  const Optional = v.object({ reason: v.optional(v.string()) });
  for (const [schema, body] of [
    [Optional, []],
    [Schema, [{ workspace_path: '/w' }]],
  ] as const) {
    let err: SvcError | undefined;
    try {
      validateInput(schema, body);
    } catch (e) {
      err = e as SvcError;
    }
    assert.equal(err?.code, 'validation_error', JSON.stringify(body));
    assert.equal(err?.message, 'body: must be a JSON object, not an array');
    assert.equal(err?.details?.field, 'body');
  }
});

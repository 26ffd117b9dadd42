/**
 * An OpenAI client's JSON schema held to the subset Claude's structured outputs take (strict-schema.ts), as
 * the Anthropic SDK's own transform sends it: what the subset lacks moves into the description.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claudeStrictSchema } from '#src/adapters/anthropic/strict-schema.ts';

test('bounds, lengths, pattern, minItems above 1 and an unknown format move into the description; the rest stays', () => {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      year: { type: 'integer', minimum: 0, maximum: 3000, description: 'The year' },
      email: { type: 'string', format: 'email', pattern: '^.+@.+$' },
      code: { type: 'string', format: 'iso-code', minLength: 2 },
      tags: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 5 },
      one: { type: 'array', items: { type: 'string' }, minItems: 1 },
      kind: { type: 'string', enum: ['a', 'b'] },
      either: { oneOf: [{ $ref: '#/$defs/item' }, { type: 'null' }] },
      open: { type: 'object', properties: {}, additionalProperties: true },
    },
    required: ['year'],
    $defs: { item: { type: 'object', properties: { n: { type: 'number', multipleOf: 2 } } } },
  };
  assert.deepEqual(claudeStrictSchema(schema), {
    $defs: {
      item: {
        type: 'object',
        properties: { n: { type: 'number', description: '{multipleOf: 2}' } },
        additionalProperties: false,
      },
    },
    type: 'object',
    properties: {
      year: { type: 'integer', description: 'The year\n\n{minimum: 0, maximum: 3000}' },
      email: { type: 'string', format: 'email', description: '{pattern: "^.+@.+$"}' },
      code: { type: 'string', description: '{format: "iso-code", minLength: 2}' },
      tags: { type: 'array', items: { type: 'string' }, description: '{minItems: 2, maxItems: 5}' },
      one: { type: 'array', items: { type: 'string' }, minItems: 1 },
      kind: { enum: ['a', 'b'] },
      either: { anyOf: [{ $ref: '#/$defs/item' }, { type: 'null' }] },
      open: { type: 'object', properties: {}, additionalProperties: false },
    },
    additionalProperties: false,
    required: ['year'],
  });
});

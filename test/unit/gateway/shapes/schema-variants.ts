/**
 * @module Variants of a request block built from its valibot schema's own description (`entries`, `options`,
 * `wrapped`, `item`, `literal`, `type`), for the test that holds the decoders' hand checks to their schemas:
 * every field of the schema and of the seed blocks absent, of every wrong JSON type, set to the schema's
 * literals and options and their near misses and to the values the seeds hold under that name; nested objects
 * and lists varied the same way a few levels down; unknown keys beside them. A field added to a schema is
 * varied without a word here; a kind of schema this module has no rule for fails the test. No randomness.
 */

/** What valibot exposes of a schema (the parts this module reads). */
export interface SchemaNode {
  type: string;
  entries?: Record<string, SchemaNode>;
  options?: readonly unknown[];
  wrapped?: SchemaNode;
  item?: SchemaNode;
  literal?: unknown;
}

/** Values of each JSON type (and the empty ones) tried wherever a field stands. */
const ODD: readonly unknown[] = [null, 0, 7, -1.5, '', 'x', true, false, [], ['x'], {}, { type: 'x' }];

/** Values given to an unknown key: one of each JSON kind (a hand check reading it would meet one it refuses). */
const UNKNOWN_VALUES: readonly unknown[] = [null, 7, 'x', true, ['x'], { type: 'x' }];

/** Keys an object takes apart or copies in its own way, set as own keys (as JSON.parse sets them). */
const ODD_KEYS = ['__proto__', 'constructor', 'prototype'];

/** How a block's variants are built: how deep to vary, what the seeds hold per key, what keys to add. */
export interface VariantOptions {
  /** Levels of nested objects and lists to vary (the block itself is one). */
  depth: number;
  /** Values the seeds hold under each key (every `type` a seed names is tried on every object). */
  vocabulary: ReadonlyMap<string, readonly unknown[]>;
  /** Unknown keys added to the block itself (nested objects get `extra` and ODD_KEYS). */
  extraKeys: readonly string[];
}

/** Every string value the seeds hold, by key, at any depth. */
export function vocabularyOf(seeds: readonly unknown[]): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (isObject(value))
      for (const [key, v] of Object.entries(value)) {
        if (typeof v === 'string' && !out.get(key)?.includes(v)) out.set(key, [...(out.get(key) ?? []), v]);
        walk(v);
      }
  };
  seeds.forEach(walk);
  return out;
}

/** The variants of the seeds under `schema`, without duplicates (compared as JSON, own odd keys included). */
export function blockVariants(
  schema: SchemaNode,
  seeds: readonly unknown[],
  options: VariantOptions,
): unknown[] {
  const seen = new Set<string>();
  return seeds
    .flatMap((seed) => variants(schema, seed, options.depth, options, true))
    .filter((value) => {
      const key = JSON.stringify(value) ?? 'undefined';
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

/** A value the schema takes, every entry of an object filled in (optional ones too), first options picked. */
export function sampleOf(schema: SchemaNode): unknown {
  switch (schema.type) {
    case 'optional':
    case 'exact_optional':
    case 'nullable':
    case 'nullish':
      return sampleOf(inner(schema.wrapped, schema));
    case 'string':
      return 'x';
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'literal':
      return schema.literal;
    case 'picklist':
      return schema.options?.[0];
    case 'union':
    case 'variant':
      return sampleOf(schema.options?.[0] as SchemaNode);
    case 'array':
      return [sampleOf(inner(schema.item, schema))];
    case 'record':
      return { k: 'v' };
    case 'unknown':
    case 'any':
      return 'x';
    case 'object':
    case 'loose_object':
      return Object.fromEntries(Object.entries(schema.entries ?? {}).map(([k, e]) => [k, sampleOf(e)]));
    default:
      throw new Error(`schema-variants: no rule for a valibot ${schema.type} schema`);
  }
}

function variants(
  schema: SchemaNode,
  base: unknown,
  depth: number,
  o: VariantOptions,
  top = false,
): unknown[] {
  const out: unknown[] = [...ODD];
  if (base !== undefined) out.push(base);
  switch (schema.type) {
    case 'optional':
    case 'exact_optional':
      return [...out, ...variants(inner(schema.wrapped, schema), base, depth, o)];
    case 'nullable':
    case 'nullish':
      return [...out, null, ...variants(inner(schema.wrapped, schema), base, depth, o)];
    case 'string':
      out.push('', ' ', 'xyz');
      break;
    case 'number':
      out.push(0, 1, 1.5, -1, '1');
      break;
    case 'boolean':
      out.push(true, false, 'true', 1);
      break;
    case 'literal':
      out.push(...nearMisses(schema.literal));
      break;
    case 'picklist':
      for (const option of schema.options ?? []) out.push(...nearMisses(option));
      break;
    case 'union':
    case 'variant':
      for (const option of (schema.options ?? []) as SchemaNode[])
        out.push(...variants(option, fits(option, base) ? base : sampleOf(option), depth, o));
      break;
    case 'array': {
      const item = inner(schema.item, schema);
      const list = Array.isArray(base) ? base : [sampleOf(item)];
      out.push([], list, [...list, sampleOf(item)]);
      if (depth <= 0) for (const odd of ODD) out.push([odd], [...list, odd]);
      else
        list.slice(0, 3).forEach((element, i) => {
          for (const v of variants(item, element, depth - 1, o)) out.push(list.with(i, v));
        });
      break;
    }
    case 'record':
      out.push(
        {},
        { a: 1, b: { c: [1, null] } },
        { 0: 'a', 1: 'b' },
        ['a', 'b'],
        { toString: 'x', hasOwnProperty: 1 },
        ...ODD_KEYS.map((key) => withOwn(isObject(base) ? base : { a: 1 }, key, { x: 1 })),
      );
      break;
    case 'object':
    case 'loose_object':
      if (depth > 0) out.push(...objectVariants(schema, isObject(base) ? base : {}, depth, o, top));
      else out.push(sampleOf(schema));
      break;
    case 'unknown':
    case 'any':
      break;
    default:
      throw new Error(`schema-variants: no rule for a valibot ${schema.type} schema`);
  }
  return out;
}

/**
 * The object `base` (filled in with the schema's entries it lacks) with each key absent and each key set to
 * each of its variants, one at a time; unknown keys added beside it.
 */
function objectVariants(
  schema: SchemaNode,
  seed: Record<string, unknown>,
  depth: number,
  o: VariantOptions,
  top: boolean,
): unknown[] {
  const entries = schema.entries ?? {};
  const base = { ...(sampleOf(schema) as Record<string, unknown>), ...seed };
  const out: unknown[] = [base, seed, {}];
  for (const key of new Set([...Object.keys(entries), ...Object.keys(seed)])) {
    out.push(without(base, key));
    const here = base[key];
    const values = entries[key]
      ? variants(entries[key], here, depth - 1, o)
      : isObject(here) || Array.isArray(here)
        ? variants(
            { type: Array.isArray(here) ? 'array' : 'loose_object', item: { type: 'unknown' } },
            here,
            depth - 1,
            o,
          )
        : [...ODD];
    for (const value of [...values, ...(o.vocabulary.get(key) ?? [])]) out.push({ ...base, [key]: value });
  }
  for (const key of top ? o.extraKeys : ['extra']) {
    if (Object.hasOwn(base, key)) continue;
    for (const value of top ? UNKNOWN_VALUES : [1]) out.push({ ...base, [key]: value });
  }
  for (const key of ODD_KEYS) out.push(withOwn(base, key, { type: 'x' }));
  return out;
}

/** Strings one letter, one case or one space off a literal, and the literal itself. */
function nearMisses(literal: unknown): unknown[] {
  if (typeof literal !== 'string') return [literal];
  return [literal, `${literal}s`, literal.slice(0, -1), literal.toUpperCase(), ` ${literal}`];
}

/** Whether `base` is of the JSON kind the union's option describes (its variants are then varied from it). */
function fits(option: SchemaNode, base: unknown): boolean {
  const kind = option.type === 'optional' || option.type === 'nullish' ? option.wrapped?.type : option.type;
  if (kind === 'array') return Array.isArray(base);
  if (kind === 'object' || kind === 'loose_object' || kind === 'record') return isObject(base);
  return typeof base === kind;
}

function inner(node: SchemaNode | undefined, of: SchemaNode): SchemaNode {
  if (!node) throw new Error(`schema-variants: a valibot ${of.type} schema without its inner schema`);
  return node;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function without(value: Record<string, unknown>, key: string): Record<string, unknown> {
  const out = { ...value };
  delete out[key];
  return out;
}

/** `value` with an own `key` (`__proto__` too: defined, not set, as JSON.parse does). */
function withOwn(value: Record<string, unknown>, key: string, member: unknown): Record<string, unknown> {
  const out = { ...value };
  Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
  return out;
}

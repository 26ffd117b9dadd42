/**
 * @module YAML for the two config files (models.yaml, routing.yaml): decimals stay exact and every
 * problem is reported as `<file>: <field path>: <reason>` so an operator can fix it in one go.
 */
import {
  CORE_SCHEMA,
  defineScalarTag,
  floatCoreTag,
  load,
  loadAll,
  NOT_RESOLVED,
  YAMLException,
} from 'js-yaml';
import type * as v from 'valibot';
import { SvcError } from '../lib/errors.ts';

/**
 * js-yaml turns `0.30` into the float 0.3; money must never pass through a float (DECISIONS §3).
 * This schema keeps every plain scalar that YAML would read as a float as its source text, so
 * `0.30` loads as the string "0.30". Integers still load as numbers (they are exact).
 */
const EXACT_FLOAT_TAG = defineScalarTag<string>(floatCoreTag.tagName, {
  implicit: true,
  implicitFirstChars: floatCoreTag.implicitFirstChars,
  resolve: (source, isExplicit, tagName) =>
    floatCoreTag.resolve(source, isExplicit, tagName) === NOT_RESOLVED ? NOT_RESOLVED : source,
  identify: () => false,
});

const EXACT_SCHEMA = CORE_SCHEMA.withTags(EXACT_FLOAT_TAG);

/**
 * Values a config document may hold once its aliases are expanded: far above any real models.yaml or
 * routing.yaml, far below what a few nested aliases reach (`&p [*q, *q, …]` ten deep is 9^10 predicates).
 */
export const MAX_CONFIG_VALUES = 100_000;

/**
 * Parses one YAML document (with `emptyIsNull`, a file of none is null); a syntax error becomes SvcError
 * config_invalid naming the file and line.
 */
export function parseConfigYaml(text: string, file: string, emptyIsNull = false): unknown {
  let doc: unknown;
  try {
    doc = load(text, { schema: EXACT_SCHEMA, filename: file });
  } catch (err) {
    if (!(err instanceof YAMLException)) throw err;
    // a file of no document (empty, or comments only) reads, with emptyIsNull, as the document `~`
    if (emptyIsNull && holdsNoDocument(text)) return null;
    const where = err.mark ? ` (line ${err.mark.line + 1}, column ${err.mark.column + 1})` : '';
    throw new SvcError('config_invalid', {
      message: `${file}: not valid YAML${where}: ${err.reason}; fix the file and try again.`,
      details: { file, errors: [`not valid YAML${where}: ${err.reason}`] },
      cause: err,
    });
  }
  // aliases share one object, so a tiny file can stand for billions of values that validation would walk
  if (exceedsValues(doc, MAX_CONFIG_VALUES)) {
    const reason = `not valid: more than ${MAX_CONFIG_VALUES} values once its aliases (*name) are expanded; write the entries out instead`;
    throw new SvcError('config_invalid', {
      message: `${file}: ${reason}.`,
      details: { file, errors: [reason] },
    });
  }
  return doc;
}

/** True when `text` parses as a stream of no document at all; false for a syntax error or several. */
function holdsNoDocument(text: string): boolean {
  try {
    return loadAll(text, { schema: EXACT_SCHEMA }).length === 0;
  } catch {
    return false;
  }
}

/**
 * `models[3].prices.input: <reason>` for each valibot issue. With the file's `root` schema, the two issues
 * valibot words for itself ("Invalid key: …") say what to do: a misspelt key lists the keys allowed at that
 * place, a missing one "is required", a list where a mapping belongs says so once at its own field; and a
 * document that is not a mapping says so once.
 */
export function describeIssues(
  issues: readonly v.BaseIssue<unknown>[],
  root?: v.GenericSchema,
  doc?: unknown,
): string[] {
  if (root && (typeof doc !== 'object' || doc === null || Array.isArray(doc))) {
    const keys = keysAt(root, []);
    if (keys) return [`the file must be a mapping with the keys ${keys.join(', ')}`];
  }
  const out = issues.map((issue) => {
    const list = root ? listForMapping(issue, root) : undefined;
    if (list) return list;
    const path = formatPath(issue.path);
    const message = root ? (keyIssueMessage(issue, root) ?? issue.message) : issue.message;
    return path ? `${path}: ${message}` : message;
  });
  return [...new Set(out)];
}

/**
 * `doc` with each empty list that stands where `root` wants a mapping made a one-item list: valibot reads
 * `[]` as a mapping with no keys (so `tiers: []`, or a whole file `[]`, passed as empty), while a list with
 * items is refused, which describeIssues words as `<field>: must be a mapping …, not a list`.
 */
export function markEmptyListsForMappings(doc: unknown, root: v.GenericSchema): unknown {
  const walk = (value: unknown, here: SchemaShape[]): unknown => {
    if (here.length === 0 || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      const items = here.flatMap((s) => (s.item ? unwrap(s.item) : []));
      const mappingOnly = items.length === 0 && here.some((s) => s.entries);
      if (value.length === 0) return mappingOnly ? [null] : value;
      return value.map((item) => walk(item, items));
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      out[key] = walk(
        item,
        here.flatMap((s) => (s.entries?.[key] ? unwrap(s.entries[key]) : [])),
      );
    return out;
  };
  return walk(doc, unwrap(root as unknown as SchemaShape));
}

/** Formats a path built from keys and indexes: `['models', 3, 'prices']` → `models[3].prices`. */
export function formatPath(path: readonly unknown[] | undefined): string {
  let out = '';
  for (const step of path ?? []) {
    const key = typeof step === 'object' && step !== null && 'key' in step ? step.key : step;
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** SvcError config_invalid listing every problem; the message carries the first few. */
export function configInvalid(file: string, errors: readonly string[]): SvcError {
  const shown = errors.slice(0, 5).join('; ');
  const more = errors.length > 5 ? ` (and ${errors.length - 5} more)` : '';
  return new SvcError('config_invalid', {
    message: `${file} is invalid: ${shown}${more}; fix the file and try again.`,
    details: { file, errors: [...errors] },
  });
}

// --- internal ---

/** True once walking `doc` as a tree (each alias use counted again) passes `limit` values; stops there. */
function exceedsValues(doc: unknown, limit: number): boolean {
  let count = 0;
  const stack: unknown[] = [doc];
  while (stack.length > 0) {
    const value = stack.pop();
    if (++count > limit) return true;
    if (value === null || typeof value !== 'object') continue;
    for (const item of Array.isArray(value) ? value : Object.values(value)) {
      if (stack.length + count > limit) return true; // a huge flat list: no need to queue it all
      stack.push(item);
    }
  }
  return false;
}

/** Enough of a valibot schema's public shape to find the keys an object schema allows. */
interface SchemaShape {
  type: string;
  entries?: Record<string, SchemaShape>;
  item?: SchemaShape;
  wrapped?: SchemaShape;
  options?: SchemaShape[];
  getter?: (input: unknown) => SchemaShape;
}

/** A list where a mapping belongs: valibot reads its indexes as unknown keys, one issue per item. */
function listForMapping(issue: v.BaseIssue<unknown>, root: v.GenericSchema): string | undefined {
  const last = issue.path?.at(-1);
  if (issue.kind !== 'schema' || last?.origin !== 'key' || !Array.isArray(last.input)) return undefined;
  const parent = issue.path!.slice(0, -1);
  const keys = keysAt(
    root,
    parent.map((step) => step.key),
  );
  const path = formatPath(parent);
  const message = `must be a mapping${keys ? ` with the keys ${keys.join(', ')}` : ''}, not a list`;
  return path ? `${path}: ${message}` : message;
}

function keyIssueMessage(issue: v.BaseIssue<unknown>, root: v.GenericSchema): string | undefined {
  const last = issue.path?.at(-1);
  if (issue.kind !== 'schema' || last?.type !== 'object' || last.origin !== 'key') return undefined;
  if (issue.received === 'undefined') return 'is required';
  if (issue.expected !== 'never') return undefined;
  const keys = keysAt(
    root,
    issue.path!.slice(0, -1).map((step) => step.key),
  );
  return keys ? `is not a known key; use one of ${keys.join(', ')}` : undefined;
}

/** The keys of the object schema found by following `path` from `root`, if there is one. */
function keysAt(root: v.GenericSchema, path: readonly unknown[]): string[] | undefined {
  let here = unwrap(root as unknown as SchemaShape);
  for (const key of path)
    here = here.flatMap((s) => {
      const next = typeof key === 'number' ? s.item : s.entries?.[String(key)];
      return next ? unwrap(next) : [];
    });
  const object = here.find((s) => s.entries);
  return object?.entries ? Object.keys(object.entries) : undefined;
}

/** The schemas a value may meet here: through optional, nullable, lazy and union wrappers. */
function unwrap(schema: SchemaShape): SchemaShape[] {
  if (schema.wrapped) return unwrap(schema.wrapped);
  if (schema.type === 'lazy' && schema.getter) return unwrap(schema.getter(undefined));
  if (schema.type === 'union' && schema.options) return schema.options.flatMap(unwrap);
  return [schema];
}

/**
 * A value of a JSON schema, as a model answering under structured outputs (or a strict tool) gives one: its
 * required properties, the first branch of anyOf/oneOf/allOf, the first enum value or the const, `$ref`s
 * into the root's `$defs` / `definitions`, and the bounds and string formats both APIs' grammars enforce
 * (minimum/maximum, lengths, minItems, date-time, email, uuid, …), so an SDK that checks the answer against
 * its schema (zod) takes it. A string is `<property>-value`, a number 1 within the bounds.
 */

type Obj = Record<string, unknown>;

const FORMATS: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00',
  duration: 'P1D',
  email: 'value@example.com',
  hostname: 'example.com',
  uri: 'https://example.com/',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uuid: '00000000-0000-4000-8000-000000000000',
};

export function schemaValue(schema: unknown, name = 'value'): unknown {
  return valueIn(schema, name, asObj(schema), 0);
}

function valueIn(schema: unknown, name: string, root: Obj, depth: number): unknown {
  const s = asObj(schema);
  if (typeof s.$ref === 'string' && depth < 32) return valueIn(resolve(root, s.$ref), name, root, depth + 1);
  const first = [s.anyOf, s.oneOf, s.allOf].find((x) => Array.isArray(x) && x.length > 0);
  if (first) return valueIn((first as unknown[])[0], name, root, depth + 1);
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ('const' in s) return s.const;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      return stringFor(s, name);
    case 'integer':
    case 'number':
      return numberFor(s, type === 'integer');
    case 'boolean':
      return true;
    case 'array': {
      const count = typeof s.minItems === 'number' ? s.minItems : 0;
      return Array.from({ length: count }, () => valueIn(s.items, name, root, depth + 1));
    }
    case 'null':
      return null;
    default: {
      const properties = asObj(s.properties);
      const requiredNames = Array.isArray(s.required) ? (s.required as string[]) : [];
      const out: Obj = {};
      for (const key of requiredNames) out[key] = valueIn(properties[key], key, root, depth + 1);
      return out;
    }
  }
}

function stringFor(s: Obj, name: string): string {
  const formatted = typeof s.format === 'string' ? FORMATS[s.format] : undefined;
  if (formatted !== undefined) return formatted;
  let text = `${name}-value`;
  if (typeof s.minLength === 'number' && text.length < s.minLength) text = text.padEnd(s.minLength, 'x');
  if (typeof s.maxLength === 'number' && text.length > s.maxLength) text = text.slice(0, s.maxLength);
  return text;
}

function numberFor(s: Obj, integer: boolean): number {
  const step = integer ? 1 : 0.5;
  let n = 1;
  if (typeof s.minimum === 'number' && n < s.minimum) n = s.minimum;
  if (typeof s.exclusiveMinimum === 'number' && n <= s.exclusiveMinimum) n = s.exclusiveMinimum + step;
  if (typeof s.maximum === 'number' && n > s.maximum) n = s.maximum;
  if (typeof s.exclusiveMaximum === 'number' && n >= s.exclusiveMaximum) n = s.exclusiveMaximum - step;
  return integer ? Math.ceil(n) : n;
}

/** A local `#/…` pointer into the root schema (`#/$defs/x`, `#/definitions/x`, `#` itself). */
function resolve(root: Obj, ref: string): unknown {
  if (!ref.startsWith('#')) return {};
  let at: unknown = root;
  for (const part of ref.slice(1).split('/').filter(Boolean))
    at = asObj(at)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  return at;
}

function asObj(x: unknown): Obj {
  return typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Obj) : {};
}

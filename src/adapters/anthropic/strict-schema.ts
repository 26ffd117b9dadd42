/**
 * @module A JSON schema another wire's client wrote, in the subset Claude's structured outputs take
 * (`output_config.format`, `strict` tools). Claude refuses a schema with a keyword outside it (400 "For
 * 'integer' type, property 'minimum' is not supported"), and an OpenAI client's schemas carry them: zod's
 * `.int()` alone is `minimum`/`maximum`, `.email()` a `pattern`. As the Anthropic SDK's own transform does
 * (the one its `messages.parse` helpers send), every object gets `additionalProperties: false`, `$schema` is
 * dropped, and what the subset lacks moves into the schema's description for the model to read: numeric
 * and length bounds, `pattern`, `minItems` other than 0 or 1, `maxItems`, a string format Claude does not
 * know. The client still checks the answer against its own schema. An Anthropic client's schema, written
 * for Claude already, is sent as it wrote it.
 */

const STRING_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'uri',
  'ipv4',
  'ipv6',
  'uuid',
]);

/** The schema in Claude's subset; a part that is no schema object is left as it is. */
export function claudeStrictSchema(schema: unknown): unknown {
  if (!isRecord(schema)) return schema;
  const rest: Record<string, unknown> = { ...schema };
  const out: Record<string, unknown> = {};
  for (const defs of ['$defs', 'definitions'] as const) {
    const held = take(rest, defs);
    if (isRecord(held)) out[defs] = mapValues(held, claudeStrictSchema);
    else if (held !== undefined) rest[defs] = held;
  }
  const ref = take(rest, '$ref');
  if (ref !== undefined) return { ...out, $ref: ref };
  delete rest.$schema;
  if (Array.isArray(rest.enum) && rest.enum.length > 0 && rest.enum.every(isPrimitive))
    out.enum = take(rest, 'enum');
  if (rest.const !== undefined && isPrimitive(rest.const)) out.const = take(rest, 'const');
  const literal = 'enum' in out || 'const' in out;
  const type = take(rest, 'type');
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = take(rest, key);
    if (!Array.isArray(branches)) continue;
    // oneOf is read as anyOf, as the SDK sends it: Claude's subset has no oneOf
    const as = key === 'allOf' ? 'allOf' : 'anyOf';
    if (out.anyOf === undefined && out.allOf === undefined) out[as] = branches.map(claudeStrictSchema);
  }
  if (!literal && type !== undefined && out.anyOf === undefined && out.allOf === undefined) out.type = type;
  for (const key of ['description', 'title'] as const)
    if (rest[key] !== undefined) out[key] = take(rest, key);
  if (type === 'object' || (type === undefined && isRecord(rest.properties))) {
    out.properties = mapValues(isRecord(rest.properties) ? rest.properties : {}, claudeStrictSchema);
    delete rest.properties;
    delete rest.additionalProperties;
    out.additionalProperties = false;
    if (rest.required !== undefined) out.required = take(rest, 'required');
  } else if (type === 'string' && typeof rest.format === 'string' && STRING_FORMATS.has(rest.format)) {
    out.format = take(rest, 'format');
  } else if (type === 'array') {
    if (rest.items !== undefined) out.items = claudeStrictSchema(take(rest, 'items'));
    if (rest.minItems === 0 || rest.minItems === 1) out.minItems = take(rest, 'minItems');
  }
  const moved = Object.entries(rest);
  if (moved.length > 0) {
    const said = `{${moved.map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(', ')}}`;
    out.description = typeof out.description === 'string' ? `${out.description}\n\n${said}` : said;
  }
  return out;
}

/** A tool's input schema as Claude takes it: an object schema, held to the subset when the tool is strict. */
export function claudeToolSchema(schema: Record<string, unknown>, strict: boolean | undefined): unknown {
  const object = schema.type === undefined ? { type: 'object', ...schema } : schema;
  return strict ? claudeStrictSchema(object) : object;
}

// --- internal ---

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isPrimitive(x: unknown): boolean {
  return x === null || typeof x !== 'object';
}

function take(o: Record<string, unknown>, key: string): unknown {
  const value = o[key];
  delete o[key];
  return value;
}

function mapValues(o: Record<string, unknown>, f: (x: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}

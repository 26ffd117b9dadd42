/**
 * The Messages API's refusal of a structured-output schema outside the subset Claude's grammar takes
 * (`output_config.format`, the beta `output_format`, a `strict` tool's `input_schema`): numeric bounds
 * (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`), string lengths, `minItems`
 * other than 0 or 1, `maxItems`, and `additionalProperties` set to anything but false, each a 400; the bounds
 * and minItems in the API's words ("output_config.format.schema: For 'integer' type, property 'minimum' is not
 * supported").
 */

type Obj = Record<string, unknown>;

const UNSUPPORTED: Record<string, readonly string[]> = {
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  string: ['minLength', 'maxLength'],
  array: ['maxItems'],
};

/** The 400's message for the first schema of the body Claude's structured outputs would refuse. */
export function structuredSchemaRefusal(body: Obj): string | undefined {
  const config = body.output_config as { format?: { schema?: unknown } } | undefined;
  const format = body.output_format as { schema?: unknown } | undefined;
  if (config?.format?.schema !== undefined) {
    const why = schemaRefusal(config.format.schema);
    if (why) return `output_config.format.schema: ${why}`;
  }
  if (format?.schema !== undefined) {
    const why = schemaRefusal(format.schema);
    if (why) return `output_format.schema: ${why}`;
  }
  const tools = Array.isArray(body.tools) ? (body.tools as Obj[]) : [];
  for (const [i, t] of tools.entries()) {
    const why = t.strict === true ? schemaRefusal(t.input_schema) : undefined;
    if (why) return `tools.${i}.custom.input_schema: ${why}`;
  }
  return undefined;
}

function schemaRefusal(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const s = schema as Obj;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  for (const type of types) {
    const key = (UNSUPPORTED[String(type)] ?? []).find((k) => s[k] !== undefined);
    if (key) return `For '${type}' type, property '${key}' is not supported`;
  }
  if (types.includes('array') && s.minItems !== undefined && s.minItems !== 0 && s.minItems !== 1)
    return "For 'array' type, 'minItems' values other than 0 or 1 are not supported";
  if (s.additionalProperties !== undefined && s.additionalProperties !== false)
    return "For 'object' type, 'additionalProperties' must be explicitly set to false";
  const nested = [
    ...Object.values((s.properties ?? {}) as Obj),
    ...Object.values((s.$defs ?? {}) as Obj),
    ...Object.values((s.definitions ?? {}) as Obj),
    ...(Array.isArray(s.items) ? s.items : [s.items]),
    ...[s.anyOf, s.oneOf, s.allOf].flatMap((x) => (Array.isArray(x) ? x : [])),
  ];
  for (const part of nested) {
    const why = schemaRefusal(part);
    if (why) return why;
  }
  return undefined;
}

/**
 * @module The nesting bound of request JSON. JSON.parse accepts any depth, but the recursive code after
 * it (schema validation, translation, stringify) overflows the stack somewhere past a few thousand levels,
 * so a parsed body is walked once here, without recursion, before anything recursive touches it.
 */
import { SvcError } from './errors.ts';

/** Levels of objects and arrays a request body may have; the body itself is level 1 (README Limits). */
export const MAX_JSON_DEPTH = 256;

/**
 * The path of the first container nested deeper than `maxDepth` levels, rendered like
 * `tools[0].input_schema.properties…` (cut after a few dozen characters), or undefined when within bounds.
 */
export function findTooDeep(value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  if (!isContainer(value)) return undefined;
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: undefined }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (frame.depth > maxDepth) return renderPath(frame);
    const depth = frame.depth + 1;
    const v = frame.value;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        if (isContainer(v[i])) stack.push({ value: v[i], depth, parent: frame, key: i });
      }
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const child = (v as Record<string, unknown>)[keys[i]];
        if (isContainer(child)) stack.push({ value: child, depth, parent: frame, key: keys[i] });
      }
    }
  }
  return undefined;
}

/**
 * Throws 400 `invalid_request` naming the field when `body` nests deeper than `maxDepth`. With `text`, the
 * JSON `body` was parsed from, a text of at most `maxDepth` `{` and `[` characters is not walked: every
 * object or array of the value opened with one of them, so it cannot hold more levels (most bodies).
 */
export function assertJsonDepth(body: unknown, maxDepth = MAX_JSON_DEPTH, text?: string): void {
  if (text !== undefined && openersAtMost(text, maxDepth)) return;
  const field = findTooDeep(body, maxDepth);
  if (field === undefined) return;
  throw new SvcError('invalid_request', {
    message: `${field}: JSON nested deeper than ${maxDepth} levels, the gateway's limit for a request body`,
    details: { param: field, max_depth: maxDepth },
  });
}

// --- internal ---

interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  key: string | number | undefined;
}

/** Characters of a rendered path before it is cut with `…`. */
const PATH_CHARS = 80;
/** Characters of one object key before it is cut (keys are client text of any length). */
const KEY_CHARS = 40;

/** Whether `text` holds at most `max` `{` and `[` characters in all (strings included). */
function openersAtMost(text: string, max: number): boolean {
  let count = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++count > max) return false;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++count > max) return false;
  return true;
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function renderPath(frame: Frame): string {
  const keys: Array<string | number> = [];
  for (let f: Frame | undefined = frame; f?.parent; f = f.parent) keys.push(f.key!);
  keys.reverse();
  let out = typeof keys[0] === 'number' || keys.length === 0 ? 'body' : '';
  for (const key of keys) {
    if (out.length >= PATH_CHARS) return `${out}…`;
    if (typeof key === 'number') {
      out += `[${key}]`;
      continue;
    }
    const cut = key.length > KEY_CHARS ? `${key.slice(0, KEY_CHARS)}…` : key;
    if (/^[A-Za-z_$][\w$]*$/.test(key)) out += out ? `.${cut}` : cut;
    else out += `[${JSON.stringify(cut)}]`;
  }
  return out;
}

/**
 * @module Edits of JSON text without parse + re-serialise, for the same-shape fast path: replace one value
 * at a key path, or add a top-level member. Strings (base64 images) are skipped with indexOf, so the cost
 * is a scan of the structure, not of every character. Input must be valid JSON (validated elsewhere).
 */

/**
 * Offsets of the values at `path` (object keys from the root). A duplicated key yields every occurrence
 * at the last level (parsers disagree on which one wins); intermediate levels follow the last occurrence.
 */
export function locateJsonValues(
  text: string,
  path: readonly string[],
): Array<{ start: number; end: number }> {
  let pos = skipWs(text, 0);
  for (let depth = 0; depth < path.length; depth++) {
    if (text.charCodeAt(pos) !== 123 /* { */) return [];
    const found = findMembers(text, pos, path[depth]);
    if (found.length === 0) return [];
    if (depth === path.length - 1) return found.map((start) => ({ start, end: skipValue(text, start) }));
    pos = found[found.length - 1];
  }
  return [];
}

/** `text` with every value at `path` replaced by `json` (already serialised), or undefined if absent. */
export function replaceJsonValue(text: string, path: readonly string[], json: string): string | undefined {
  const found = locateJsonValues(text, path);
  if (found.length === 0) return undefined;
  let out = '';
  let from = 0;
  for (const at of found) {
    out += text.slice(from, at.start) + json;
    from = at.end;
  }
  return out + text.slice(from);
}

/** `text` (a JSON object) with `"key": json` added as its first member. The caller ensures `key` is absent. */
export function insertJsonMember(text: string, key: string, json: string): string {
  const open = skipWs(text, 0);
  const inner = skipWs(text, open + 1);
  const sep = text.charCodeAt(inner) === 125 /* } */ ? '' : ',';
  return `${text.slice(0, open + 1)}${JSON.stringify(key)}:${json}${sep}${text.slice(open + 1)}`;
}

/**
 * `text` (a JSON object) without its top-level member(s) `key`, with the comma that separated each; `text`
 * itself (the same string) when it has none.
 */
export function removeJsonMember(text: string, key: string): string {
  const open = skipWs(text, 0);
  if (text.charCodeAt(open) !== 123 /* { */) return text;
  const spans = findMemberSpans(text, open, key);
  let out = text;
  // the last first: the earlier offsets stay where they were
  for (let i = spans.length - 1; i >= 0; i--) {
    const { key: start, value } = spans[i];
    const valueEnd = skipValue(out, value);
    const end = skipWs(out, valueEnd);
    if (out.charCodeAt(end) === 44 /* , */) {
      out = out.slice(0, start) + out.slice(skipWs(out, end + 1));
      continue;
    }
    // the last member: the comma before it goes (none before the only member)
    let before = start - 1;
    while (before > open && isWs(out.charCodeAt(before))) before--;
    const from = out.charCodeAt(before) === 44 ? before : start;
    out = out.slice(0, from) + out.slice(valueEnd);
  }
  return out;
}

// --- internal ---

function isWs(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function skipWs(text: string, pos: number): number {
  for (;;) {
    const c = text.charCodeAt(pos);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return pos;
    pos++;
  }
}

/** Offset just after the closing quote of the string starting at `pos`. */
function skipString(text: string, pos: number): number {
  let q = pos;
  for (;;) {
    q = text.indexOf('"', q + 1);
    if (q < 0) return text.length;
    let bs = 0;
    while (text.charCodeAt(q - 1 - bs) === 92 /* \ */) bs++;
    if (bs % 2 === 0) return q + 1;
  }
}

function skipValue(text: string, pos: number): number {
  const c = text.charCodeAt(pos);
  if (c === 34) return skipString(text, pos);
  if (c !== 123 && c !== 91) {
    let p = pos;
    for (;;) {
      const d = text.charCodeAt(p);
      if (Number.isNaN(d) || d === 44 || d === 125 || d === 93 || d === 32 || d === 10 || d === 13 || d === 9)
        return p;
      p++;
    }
  }
  let depth = 0;
  let p = pos;
  for (;;) {
    const d = text.charCodeAt(p);
    if (Number.isNaN(d)) return p;
    if (d === 34) {
      p = skipString(text, p);
      continue;
    }
    if (d === 123 || d === 91) depth++;
    else if (d === 125 || d === 93) {
      depth--;
      if (depth === 0) return p + 1;
    }
    p++;
  }
}

/** Offsets of the values of every member `key` in the object starting at `pos`. */
function findMembers(text: string, pos: number, key: string): number[] {
  return findMemberSpans(text, pos, key).map((m) => m.value);
}

/** Where each member `key` of the object starting at `pos` begins (its key's quote) and its value begins. */
function findMemberSpans(text: string, pos: number, key: string): Array<{ key: number; value: number }> {
  const found: Array<{ key: number; value: number }> = [];
  let p = skipWs(text, pos + 1);
  while (text.charCodeAt(p) === 34) {
    const at = p;
    const end = skipString(text, p);
    const named = isKey(text, p, end, key);
    p = skipWs(text, end);
    p = skipWs(text, p + 1); // ':'
    if (named) found.push({ key: at, value: p });
    p = skipWs(text, skipValue(text, p));
    if (text.charCodeAt(p) !== 44) break; // '}'
    p = skipWs(text, p + 1);
  }
  return found;
}

/**
 * Whether the JSON string from `start` (its opening quote) to `end` (just after its closing one) is `key`:
 * compared in place unless it holds an escape (then parsed), so no member name is copied out of the text
 * (this runs for every top-level member of every same-wire request and answer).
 */
function isKey(text: string, start: number, end: number, key: string): boolean {
  for (let i = start + 1; i < end - 1; i++)
    if (text.charCodeAt(i) === 92 /* \ */) return JSON.parse(text.slice(start, end)) === key;
  return end - start - 2 === key.length && text.startsWith(key, start + 1);
}

/**
 * Fast-path helper: a request or response body (JSON text) with its top-level `model` set to `model`,
 * added when absent. Everything else stays byte-for-byte.
 */
export function rewriteModel(bodyText: string, model: string): string {
  // splicing into anything but an object (a JSON string such as "oops") would make broken JSON
  if (bodyText.charCodeAt(skipWs(bodyText, 0)) !== 123 /* { */)
    throw new TypeError('rewriteModel: the JSON text is not an object');
  const json = JSON.stringify(model);
  return replaceJsonValue(bodyText, ['model'], json) ?? insertJsonMember(bodyText, 'model', json);
}

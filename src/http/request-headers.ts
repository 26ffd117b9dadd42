/**
 * @module A request's headers read straight from Node's raw header list when @hono/node-server hands the
 * IncomingMessage over (`c.env.incoming`): the adapter's `c.req.raw.headers` builds an undici `Headers` of
 * every header on first touch (a validated append per line, ~4 KiB a request), where a handful of names is
 * all the gateway reads. The values read as `Headers.get` reads them: a name's repeated lines joined with
 * `, ` in the order sent, leading and trailing spaces and tabs left out, `null` when absent (Node's own
 * `incoming.headers` keeps only the first Host or Authorization line, which would let a second one through).
 * Under `app.fetch` (tests) the Request's headers are used.
 */
import type { Context } from 'hono';
import type { NodeBindings } from './incoming.ts';

/** What the readers need of a request's headers; `name` is lower case. */
export interface HeaderReader {
  get(name: string): string | null;
}

/** The request's headers, from Node's raw list when there is one. */
export function requestHeaders(c: Context): HeaderReader {
  const incoming = (c.env as NodeBindings | undefined)?.incoming;
  return incoming ? new RawHeaders(incoming.rawHeaders) : c.req.raw.headers;
}

/** One header of a raw `[name, value, name, value…]` list as `Headers.get` reads it; `name` is lower case. */
export function rawHeader(raw: readonly string[], name: string): string | null {
  let value: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    if (!sameName(raw[i], name)) continue;
    const line = trimSpaces(raw[i + 1]);
    value = value === null ? line : `${value}, ${line}`;
  }
  return value;
}

// --- internal ---

class RawHeaders implements HeaderReader {
  private readonly raw: readonly string[];
  constructor(raw: readonly string[]) {
    this.raw = raw;
  }
  get(name: string): string | null {
    return rawHeader(this.raw, name);
  }
}

/** ASCII case-insensitive; `name` is lower case (header names are tokens: letters, digits and symbols). */
function sameName(sent: string, name: string): boolean {
  if (sent.length !== name.length) return false;
  for (let i = 0; i < name.length; i++) {
    const a = sent.charCodeAt(i);
    const b = name.charCodeAt(i);
    if (a !== b && !(a >= 65 && a <= 90 && a + 32 === b)) return false;
  }
  return true;
}

/** Leading and trailing spaces and tabs left out, as `Headers` normalizes a value (copies only then). */
function trimSpaces(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isSpace(value.charCodeAt(start))) start++;
  while (end > start && isSpace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

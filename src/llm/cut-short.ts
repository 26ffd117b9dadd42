/**
 * @module A non-streaming 2xx body that ended cleanly before its JSON did (a chunked body closed early, a
 * proxy's `res.end(half)`): the same loss as a reset mid-body, so the call treats it as one (DECISIONS §4:
 * a connection error before the first byte to the client, retried; the provider answered, so billed).
 */

/**
 * The JSON of a whole 2xx body, parsed once for the call and its reader. Throws bodyCutShort for a JSON object
 * cut short; undefined for a body that is whole but no JSON (a proxy's page, an unquoted value), which is left
 * to the decoder (502 upstream_error, not retried).
 */
export function parseWholeBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    if (cutShort(text)) throw bodyCutShort(text);
    return undefined;
  }
}

/**
 * Whether a body that does not parse is a JSON object cut short: it begins as one and ends inside a string or
 * with an object or array still open (a cut can fall right after a nested object's `}`). Only read once the
 * parse has failed: a whole answer costs nothing here.
 */
function cutShort(text: string): boolean {
  let at = 0;
  while (at < text.length && isJsonSpace(text.charCodeAt(at))) at++;
  if (text.charCodeAt(at) !== 0x7b) return false; // {
  let depth = 0;
  let inString = false;
  // \ escapes the next character in a string; { [ open, } ] close
  for (; at < text.length; at++) {
    const c = text.charCodeAt(at);
    if (inString) {
      if (c === 0x5c) at++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if ((c === 0x7d || c === 0x5d) && --depth === 0) return false; // closed: whole, malformed inside
  }
  return true;
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The failure of a body cut short: a connection error, as the reset that usually cuts one (retried, billed). */
function bodyCutShort(text: string): Error {
  return new Error(
    `the provider ended its answer before it was complete (a 200 body of ${Buffer.byteLength(text)} bytes cut short)`,
  );
}

/**
 * @module A non-streaming 2xx body that ended cleanly before its JSON did (a chunked body closed early, a
 * proxy's `res.end(half)`): the same loss as a reset mid-body, so the call treats it as one (DECISIONS §4:
 * a connection error before the first byte to the client, retried; the provider answered, so billed).
 */
/**
 * Whether a 2xx body is a JSON object cut short: it begins as one but neither ends as one nor parses. The look
 * at its last character costs nothing for a whole answer; a body that is no JSON object at all (a proxy's
 * page), or one that ends as an object does, is left to the decoder (502 upstream_error, not retried).
 */
export function cutShort(text: string): boolean {
  let end = text.length - 1;
  while (end >= 0 && isJsonSpace(text.charCodeAt(end))) end--;
  if (end < 0 || text.charCodeAt(end) === 0x7d) return false; // }
  let start = 0;
  while (start < end && isJsonSpace(text.charCodeAt(start))) start++;
  if (text.charCodeAt(start) !== 0x7b) return false; // {
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The failure of a body cut short: a connection error, as the reset that usually cuts one (retried, billed). */
export function bodyCutShort(text: string): Error {
  return new Error(
    `the provider ended its answer before it was complete (a 200 body of ${Buffer.byteLength(text)} bytes cut short)`,
  );
}

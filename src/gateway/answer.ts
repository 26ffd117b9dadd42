/**
 * @module The headers of an answer on a provider path (`/v1/*`), kept in one plain object from the request's
 * first middleware to `res.writeHead` (issue 13). Hono's `c.header` keeps them in an undici `Headers`, which
 * validates each name and value and sorts them, and @hono/node-server then copies that into a plain object
 * for `writeHead`; a `Response` made with a plain object of headers goes to `writeHead` as it is (the adapter's
 * own fast path for its lightweight `Response`). The answer lists the names sorted, as `Headers` did, with
 * `Content-Length` last where the adapter put it: the bytes on the wire are the same.
 *
 * Every answer on a provider path goes through here (the pipeline's, the count's, the model list's, and the
 * app's error answers); another path keeps Hono's `c.header` (setAnswerHeader falls back to it).
 */
import type { Context } from 'hono';
import type { GatewayEnv } from './env.ts';

/** A stream's content type (also how the request log tells a stream's answer from another). */
export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/** Whether a path's answers keep their headers here: the provider paths. */
export function keepsAnswerHeaders(path: string): boolean {
  return path.startsWith('/v1/');
}

/** The headers kept for this request's answer (the app's first middleware starts them on a provider path). */
export function keptAnswerHeaders(c: Context<GatewayEnv>): Record<string, string> {
  const headers = c.get('answerHeaders');
  if (!headers) throw new Error(`no answer headers are kept on ${c.req.path}`);
  return headers;
}

/**
 * Sets a header of this request's answer (lowercase `name`), wherever its answer keeps them. The value is written
 * as a header carries it: a character outside printable ASCII becomes `\uXXXX` (a name the client's body chose,
 * e.g. a Responses field newer than the gateway in `svc-dropped-params`: Node refuses a control character in a
 * header and cannot write one past U+00FF, which would fail the answer after its call).
 */
export function setAnswerHeader(c: Context<GatewayEnv>, name: string, value: string): void {
  const safe = value.replace(UNSAFE_IN_HEADER, escaped);
  const headers = c.get('answerHeaders');
  if (headers) headers[name] = safe;
  else c.header(name, safe);
}

/** A JSON answer whose body is `text`, with the request's headers and `extra` (lowercase names) after them. */
export function jsonAnswer(
  c: Context<GatewayEnv>,
  text: string,
  status = 200,
  extra?: Record<string, string>,
): Response {
  const headers = c.get('answerHeaders');
  if (!headers) {
    if (extra) for (const name in extra) c.header(name, extra[name]);
    return c.body(text, status as 200, JSON_TYPE);
  }
  if (extra) Object.assign(headers, extra);
  headers['content-type'] = JSON_TYPE['content-type'];
  const sorted: Record<string, string | number> = sortedHeaders(headers);
  // the length as the adapter adds it to a Headers answer; a HEAD answer (Hono makes it of the GET's, without a
  // body) never had one
  if (c.req.method !== 'HEAD') sorted['Content-Length'] = Buffer.byteLength(text);
  return new Response(text, { status, headers: sorted as Record<string, string> });
}

/** An event stream's 200 with the request's headers and `streamed` (the stream's own, lowercase names). */
export function streamAnswer(
  body: ReadableStream<Uint8Array>,
  headers: Record<string, string>,
  streamed: Record<string, string>,
): Response {
  Object.assign(headers, streamed);
  return new Response(body, { status: 200, headers: sortedHeaders(headers) });
}

/** Whether `c`'s answer is an event stream, read without turning its headers into a `Headers`. */
export function isStreamAnswer(c: Context): boolean {
  const headers = (c as Context<GatewayEnv>).get('answerHeaders');
  if (headers) return headers['content-type'] === SSE_CONTENT_TYPE;
  return c.res.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
}

// --- internal ---

const JSON_TYPE = { 'content-type': 'application/json' };
const UNSAFE_IN_HEADER = /[^\x20-\x7e]/g;

function escaped(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

function sortedHeaders(headers: Record<string, string>): Record<string, string> {
  const sorted: Record<string, string> = {};
  for (const name of Object.keys(headers).sort()) sorted[name] = headers[name] as string;
  return sorted;
}

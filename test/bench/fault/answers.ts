/**
 * What counts as an answer the client received whole, per wire: a 200 whose JSON body is the response
 * object (non-streaming) or whose SSE stream reached its terminal frame with no error frame (streaming).
 */
import type { Dispatcher } from 'undici';
import { request } from 'undici';

/** A request as sent: a bench request, or anything a hostile case builds (any method, raw bytes). */
export interface ProbeRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[]> | string[];
  body?: string | Buffer;
}

export type Wire = 'openai' | 'anthropic';

export interface Answer {
  /** `svc-request-id` of the response, when the headers arrived. */
  requestId: string | null;
  /** HTTP status, or 0 when no response head arrived. */
  status: number;
  /** Status 200 and the whole body in the client's shape. */
  complete: boolean;
  stream: boolean;
  /** Socket or protocol failure (connection reset or refused, body cut off). */
  error?: string;
  body: string;
}

/** The wire of the response: the request path decides it (the cross shape answers on the Messages wire). */
export function wireOf(path: string): Wire {
  return path.startsWith('/v1/messages') ? 'anthropic' : 'openai';
}

/** Sends one request and reads the whole response body; never throws. */
export async function send(
  url: string,
  req: ProbeRequest,
  dispatcher?: Dispatcher,
  timeoutMs = 120_000,
): Promise<Answer> {
  const stream = typeof req.body === 'string' && isStreamBody(req.body);
  let requestId: string | null = null;
  let status = 0;
  try {
    const res = await request(`${url}${req.path}`, {
      method: req.method as Dispatcher.HttpMethod,
      headers: req.headers,
      body: req.body,
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = res.statusCode;
    const id = res.headers['svc-request-id'];
    requestId = typeof id === 'string' ? id : null;
    const body = await res.body.text();
    const complete = status === 200 && isWhole(wireOf(req.path), stream, body);
    return { requestId, status, complete, stream, body };
  } catch (err) {
    const error = (err as { code?: string }).code ?? (err as Error).message;
    return { requestId, status, complete: false, stream, error, body: '' };
  }
}

/** The body is the whole response in the wire's shape. */
export function isWhole(wire: Wire, stream: boolean, body: string): boolean {
  if (stream) return isWholeStream(wire, body);
  const json = parse(body) as Record<string, unknown> | undefined;
  if (!json || typeof json !== 'object') return false;
  if (wire === 'openai') {
    const choices = json.choices as Array<{ message?: unknown }> | undefined;
    return (
      json.object === 'chat.completion' && Array.isArray(choices) && !!choices[0]?.message && !!json.usage
    );
  }
  return json.type === 'message' && Array.isArray(json.content) && !!json.usage;
}

// --- internal ---

function isWholeStream(wire: Wire, body: string): boolean {
  const frames = body.split(/\n\n/).filter((f) => f.trim() !== '');
  if (wire === 'openai') {
    const errored = frames.some((f) => /^data: \{"error"/m.test(f));
    return !errored && frames.at(-1)?.trim() === 'data: [DONE]';
  }
  const errored = frames.some((f) => /^event: error$/m.test(f));
  return !errored && /^event: message_stop$/m.test(frames.at(-1) ?? '');
}

function isStreamBody(body: string): boolean {
  return /"stream"\s*:\s*true/.test(body);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

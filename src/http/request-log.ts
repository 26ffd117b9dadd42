import type { Context, MiddlewareHandler } from 'hono';
import type { NodeBindings } from './incoming.ts';

export interface RequestLogOptions {
  /** Receives one JSON line (with its newline) per finished request: stdout for the gateway. */
  write: (line: string) => void;
  /** Adds per-app fields (key id, shape, model...) to the line; never tokens or prompts (DECISIONS §4). */
  fields?: (c: Context, line: Record<string, unknown>) => void;
  /** Whether the answer is an event stream; default: its `content-type` (which makes its headers a `Headers`). */
  isEventStream?: (c: Context) => boolean;
  now?: () => number;
}

/**
 * One JSON line per request: time, method, path, status, latency_ms (to the response headers) plus the app's
 * fields. An event stream's line is written when the stream ends, so the fields say how it ended (the
 * gateway's `error_code` of a stream that failed after its 200).
 */
export function createRequestLog(options: RequestLogOptions): MiddlewareHandler {
  const now = options.now ?? (() => performance.now());
  const finish = createRequestLogFinish(options);
  return async function requestLog(c, next) {
    const started = now();
    try {
      await next();
    } finally {
      finish(c, started);
    }
  };
}

/**
 * What the request log does once the app answered a request that `started` at `now()`: writes its line, or
 * for an event stream arranges it for the stream's end. For an app that runs it inside its own first
 * middleware rather than mounting `createRequestLog`.
 */
export function createRequestLogFinish(options: RequestLogOptions): (c: Context, started: number) => void {
  const now = options.now ?? (() => performance.now());
  const eventStream = options.isEventStream ?? ((c: Context) => isEventStream(c.res));
  return (c, started) => {
    const status = c.res.status;
    const latencyMs = Math.round((now() - started) * 1000) / 1000;
    const outgoing = (c.env as NodeBindings | undefined)?.outgoing;
    // a closure only for a stream (the hot path's other answers allocate none)
    if (status === 200 && outgoing && !outgoing.closed && eventStream(c))
      outgoing.once('close', () => writeLine(options, c, status, latencyMs));
    else writeLine(options, c, status, latencyMs);
  };
}

/**
 * `write` once per turn of the event loop with every line given during it, in order (a process exit writes
 * what is left). At c=64 a group commit lets dozens of answers go out in one turn, and each request-log line
 * was then a write(2) of its own to stdout; the lines and their order are the same.
 */
export function writeLinesPerTurn(write: (text: string) => void): (line: string) => void {
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    const text = pending;
    pending = '';
    write(text);
  };
  process.on('exit', flush);
  return (line) => {
    if (pending === '') process.nextTick(flush);
    pending += line;
  };
}

/**
 * The path as logged: a user id in a user-data path (spec 3 export and forget) is personal data that
 * forget cannot reach in an operator's log files, so it is written `:user_id` (the audit events record the request).
 */
export function loggedPath(path: string): string {
  return path.startsWith(USER_DATA_PREFIX) ? path.replace(USER_DATA_ID, `${USER_DATA_PREFIX}:user_id`) : path;
}

function writeLine(options: RequestLogOptions, c: Context, status: number, latencyMs: number): void {
  const line: Record<string, unknown> = {
    time: new Date().toISOString(),
    msg: 'request',
    method: c.req.method,
    path: loggedPath(c.req.path),
  };
  options.fields?.(c, line);
  line.status = status;
  line.latency_ms = latencyMs;
  options.write(`${JSON.stringify(line)}\n`);
}

function isEventStream(res: Response): boolean {
  return res.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
}

const USER_DATA_PREFIX = '/analytics/user/';
const USER_DATA_ID = /^\/analytics\/user\/[^/]+/;

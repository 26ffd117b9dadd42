/**
 * @module The answers to requests Node's HTTP server refuses before the app sees them (listen.ts attaches
 * them as the server's `clientError` listener): a client too slow to send its request, malformed HTTP,
 * headers over Node's limit. Without them Node writes a bare status line, with no body, id or log line.
 */
import { type IncomingMessage, maxHeaderSize, ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { SvcError } from '../lib/errors.ts';
import { refuseBody } from './incoming.ts';
import type { ClientTimeouts } from './listen.ts';
import { encodeServiceError } from './service-errors.ts';

/** How the requests Node refuses are answered and logged (each server says for itself). */
export interface RefusalOptions {
  /** A fresh request id for each refusal (the gateway's; the agent server has none). */
  newRequestId?: () => string;
  /**
   * Headers a refusal carries besides `content-type` and `connection: close` (the request id's,
   * x-should-retry, the version headers); `path` is the request's path when its request line was read.
   */
  headers?: (
    err: SvcError,
    requestId: string | undefined,
    path: string | undefined,
  ) => Record<string, string>;
  /**
   * The refusal's status and body for the request's path (the gateway's provider shape on /v1/*); the
   * service error body by default.
   */
  encode?: (
    err: SvcError,
    requestId: string | undefined,
    path: string | undefined,
  ) => { status: number; body: unknown };
  /** Receives the refusal's request-log line (the app's request log never sees these requests). */
  writeRequestLog?: (line: string) => void;
}

/**
 * Node's `clientError`: the client is too slow (headers / request timeout), or sent what is not HTTP/1.1
 * (a bad request line or header, a bad chunk size, headers over `--max-http-header-size`). A request the
 * app is already answering (its headers arrived, its body did not) has its body read fail with the refusal,
 * so the app answers it as its own (error body in the path's shape, request id, request-log line, the
 * gateway's turn.completed). Otherwise this writes the answer: the service error body, the request id,
 * `connection: close`, and one request-log line (none for a connection that never sent a byte). A reset
 * or broken socket, or a client that ended its side mid-request, is only destroyed (the app, if it was
 * answering, logs a 499).
 */
export function answerClientError(
  err: NodeJS.ErrnoException,
  socket: Socket,
  timeouts: ClientTimeouts,
  options: RefusalOptions,
): void {
  if (answeredSockets.has(socket)) return;
  answeredSockets.add(socket);
  const inFlight = (socket as { _httpMessage?: unknown })._httpMessage;
  const res = inFlight instanceof ServerResponse ? inFlight : undefined;
  if (CLIENT_GONE.has(err.code ?? '') || !socket.writable || res?.headersSent) {
    socket.destroy();
    return;
  }
  const refusal = refusalOf(err, timeouts);
  if (res && !res.writableFinished) {
    res.shouldKeepAlive = false;
    refuseBody(res.req, refusal);
    return;
  }
  const answer = refusalAnswer(refusal, options, requestPathOf(err, socket));
  const head = Object.entries(answer.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n${head}\r\n${answer.body}`);
  socket.once('finish', () => socket.destroy());
  // a connection that never sent a byte made no request: it is answered, but not logged as one
  if (socket.bytesRead === 0) return;
  logRefusal(options, refusal, answer, refusal.code === 'invalid_request' ? err.code : undefined);
}

/**
 * A request whose target the Node adapter cannot read as a URL (`OPTIONS *`, a target without a leading
 * `/`, a backslash before the query, an absolute URL that does not parse), which it answers with a bare 400
 * (no body, id or log line) without calling the app: answered here, as a refusal, before the adapter runs.
 * True when it was.
 */
export function answerUnreadableTarget(
  req: IncomingMessage,
  res: ServerResponse,
  options: RefusalOptions,
): boolean {
  if (targetReadable(req.url ?? '')) return false;
  const refusal = new SvcError('invalid_request', {
    message:
      'The request target is not a path the server can read (it must start with / and hold no backslash before its query); check the URL.',
  });
  const answer = refusalAnswer(refusal, options, undefined);
  res.shouldKeepAlive = false;
  res.writeHead(answer.status, answer.headers).end(answer.body);
  req.resume();
  logRefusal(options, refusal, answer, 'unreadable_target');
  return true;
}

const answeredSockets = new WeakSet<Socket>();

interface RefusalAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  requestId: string | undefined;
}

function refusalAnswer(refusal: SvcError, options: RefusalOptions, path: string | undefined): RefusalAnswer {
  const requestId = options.newRequestId?.();
  const encoded = options.encode?.(refusal, requestId, path) ?? {
    status: refusal.status,
    body: encodeServiceError(refusal),
  };
  const body = JSON.stringify(encoded.body);
  const headers: Record<string, string> = {
    ...options.headers?.(refusal, requestId, path),
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  return { status: encoded.status, headers, body, requestId };
}

function logRefusal(
  options: RefusalOptions,
  refusal: SvcError,
  answer: RefusalAnswer,
  reason?: string,
): void {
  options.writeRequestLog?.(
    `${JSON.stringify({
      time: new Date().toISOString(),
      msg: 'request',
      method: null,
      path: null,
      request_id: answer.requestId ?? null,
      status: answer.status,
      error_code: refusal.code,
      ...(reason ? { reason } : {}),
    })}\n`,
  );
}

/** The adapter's common targets, read without a URL (issue 13: no URL is built per request). */
const PLAIN_PATH = /^\/[!#$&-;=?-[\]_a-z~]*$/;

/** What @hono/node-server 2's newRequest takes: a path or an http(s) absolute URL, each as a URL parses it. */
function targetReadable(target: string): boolean {
  if (PLAIN_PATH.test(target)) return true;
  const absolute = target.startsWith('http://') || target.startsWith('https://');
  if (!absolute && !target.startsWith('/')) return false;
  const backslash = target.indexOf('\\');
  const query = target.indexOf('?');
  if (backslash !== -1 && (query === -1 || backslash < query)) return false;
  try {
    new URL(absolute ? target : `http://h${target}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * The refused request's path (no query), when known: from the request line at the start of the bytes Node
 * was parsing (`rawPacket`), or the target the parser already took from earlier bytes. Undefined when the
 * request line never arrived whole (a header timeout) or the bytes do not begin with it.
 */
function requestPathOf(err: NodeJS.ErrnoException, socket: Socket): string | undefined {
  const parsed = (socket as { parser?: { _url?: unknown } | null }).parser?._url;
  let target = typeof parsed === 'string' && parsed !== '' ? parsed : undefined;
  if (target === undefined) {
    const raw = (err as { rawPacket?: unknown }).rawPacket;
    const head = Buffer.isBuffer(raw) ? raw.subarray(0, 8192).toString('latin1') : '';
    target = REQUEST_LINE.exec(head)?.[1];
  }
  if (target === undefined) return undefined;
  if (target.startsWith('/')) return target.split(/[?#]/, 1)[0];
  try {
    return new URL(target).pathname; // absolute form: GET http://host/healthz HTTP/1.1
  } catch {
    return undefined;
  }
}

const REQUEST_LINE = /^[A-Z]+ (\S+) HTTP\/\d\.\d\r?\n/;

/** A reset or broken socket, or a client that ended its side in the middle of its request: nobody reads. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'HPE_INVALID_EOF_STATE']);

/** What Node's refusal means, as the error the client is told (never the bytes it sent). */
function refusalOf(err: NodeJS.ErrnoException, timeouts: ClientTimeouts): SvcError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new SvcError('request_timeout', {
        message: `The request was not received in time: its headers must arrive within ${timeouts.headersMs} ms and the whole request within ${timeouts.requestMs} ms; send it again.`,
      });
    case 'HPE_HEADER_OVERFLOW':
      return new SvcError('request_headers_too_large', {
        message: `The request headers are larger than the ${maxHeaderSize} bytes the server reads; send fewer or shorter headers.`,
      });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new SvcError('request_too_large', {
        message: 'The chunk extensions of the request body are too large; send the body without them.',
      });
    default:
      return new SvcError('invalid_request', {
        message: `The request is not valid HTTP/1.1 (${err.code ?? 'unreadable'}); check the request line, headers and body framing.`,
      });
  }
}

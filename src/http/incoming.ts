/**
 * @module The request body and the client's disconnect signal, read straight from Node's IncomingMessage
 * and ServerResponse when @hono/node-server hands them over (`c.env`). Touching `c.req.raw.body`,
 * `.text()` or `.signal` makes the adapter build a full WHATWG Request with a web-stream body around the
 * socket, which is a measurable share of a proxy's CPU; under `app.fetch` (tests) the Request is used.
 * The body limit is enforced while reading, so no more than `limit` bytes are ever buffered.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../lib/errors.ts';
import { rawHeader } from './request-headers.ts';

/** What @hono/node-server passes as `c.env`. */
export interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

/**
 * The body as UTF-8 text; 413 `request_too_large` past `limit` bytes; 400 `invalid_request` naming `body`
 * when the bytes are not UTF-8 (RFC 8259 §8.1), which decoding would otherwise turn into U+FFFD in silence,
 * changing the text a caller stores or forwards.
 */
export async function readBodyText(request: Request, limit: number, node?: NodeBindings): Promise<string> {
  const incoming = node?.incoming;
  const length = incoming
    ? rawHeader(incoming.rawHeaders, 'content-length')
    : request.headers.get('content-length');
  if (Number(length ?? Number.NaN) > limit) throw tooLarge(limit);
  if (incoming) return readIncoming(incoming, limit);
  const body = request.body;
  if (!body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return utf8Text(Buffer.concat(chunks));
}

/** The refusal of a body that is not UTF-8: the gateway's 400 as it is; svc serve answers it as not JSON (415). */
export class BodyNotUtf8 extends SvcError {
  constructor() {
    super('invalid_request', {
      message: 'body: the request body is not valid UTF-8, which JSON must be',
      details: { param: 'body' },
    });
  }
}

/** Aborts when the client goes away before the response finished (never after a complete answer). */
export function clientGoneSignal(request: Request, node?: NodeBindings): AbortSignal {
  const outgoing = node?.outgoing;
  if (!outgoing) return request.signal;
  const controller = new AbortController();
  outgoing.once('close', () => {
    if (!outgoing.writableFinished) controller.abort(new Error('the client closed the connection'));
  });
  return controller.signal;
}

/**
 * Node refused the rest of this request's body (the request timeout, a malformed chunked body): the body
 * read in progress, or the next one, fails with `err`, which the app answers like any refusal (its error
 * body, request id and request-log line). See listen.ts, `clientError`.
 */
export function refuseBody(incoming: IncomingMessage, err: SvcError): void {
  refusedBodies.set(incoming, err);
  pendingReads.get(incoming)?.(err);
}

// --- internal ---

const refusedBodies = new WeakMap<IncomingMessage, SvcError>();
const pendingReads = new WeakMap<IncomingMessage, (err: SvcError) => void>();

function readIncoming(incoming: IncomingMessage, limit: number): Promise<string> {
  const refused = refusedBodies.get(incoming);
  if (refused) return Promise.reject(refused);
  if (incoming.readableEnded) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    pendingReads.set(incoming, (err) => {
      cleanup();
      reject(err);
    });
    const cleanup = () => {
      pendingReads.delete(incoming);
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        // stop collecting; the server discards the rest of the body after the 413 is sent
        cleanup();
        chunks.length = 0;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      try {
        resolve(utf8Text(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    };
    // Node reports a client that leaves mid-body as an 'error' ("aborted", ECONNRESET) or a bare 'close'
    const onError = () => {
      cleanup();
      reject(clientGone());
    };
    const onClose = () => {
      if (incoming.readableEnded) return;
      cleanup();
      reject(clientGone());
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

function utf8Text(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw new BodyNotUtf8();
  return bytes.toString('utf8');
}

function clientGone(): SvcError {
  return new SvcError('cancelled', {
    message: 'the client closed the connection before sending the whole body',
  });
}

function tooLarge(limit: number): SvcError {
  return new SvcError('request_too_large', {
    message: `The request body is larger than the gateway's limit of ${limit} bytes (SVC_GATEWAY_MAX_BODY_BYTES).`,
    details: { limit_bytes: limit },
  });
}

/**
 * @module The HTTP `upgrade` listener of the agent server. Every upgrade request runs through the Hono app
 * like any request (Host/Origin check, shutdown gate, versioning, the handshake route); when the route
 * accepted it, the `ws` server completes the handshake, otherwise the app's answer is written whole, JSON
 * body included (@hono/node-ws's own listener writes only the status line of a refusal). Other paths are 404.
 */
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import { encodeServiceError } from '../../http/service-errors.ts';
import { errorMessage, SvcError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';

export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface UpgradeDeps {
  /** Paths that take an upgrade; any other path is answered 404 without running the app. */
  isStreamPath(pathname: string): boolean;
  /** The app answering the handshake request (Hono's `app.request`). */
  request(url: string, init: RequestInit, env: { incoming: IncomingMessage }): Response | Promise<Response>;
  wss: WebSocketServer;
  /** Requests the handshake route accepted. */
  accepted: WeakSet<IncomingMessage>;
  log: Logger;
}

export function createUpgradeListener(deps: UpgradeDeps): UpgradeListener {
  // the 101 carries the app's svc-* headers too (Svc-API-Version on every service-owned answer, spec 1)
  const extra = new WeakMap<IncomingMessage, string[]>();
  deps.wss.on('headers', (lines, req) => {
    lines.push(...(extra.get(req) ?? []));
  });
  return (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    void answer(deps, extra, req, socket, head).catch((err) => {
      // the path only: its query carries the attach token, a credential that never goes to a log
      const path = (req.url ?? '').split('?')[0];
      deps.log.error('websocket handshake failed', { path, message: errorMessage(err) });
      socket.destroy();
    });
  };
}

// --- internal ---

async function answer(
  deps: UpgradeDeps,
  extra: WeakMap<IncomingMessage, string[]>,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers.set(key, Array.isArray(value) ? value.join(', ') : value);
  }
  const url = new URL(`http://localhost${req.url?.startsWith('/') ? req.url : '/'}`);
  const response = deps.isStreamPath(url.pathname)
    ? await deps.request(url.href, { method: req.method, headers }, { incoming: req })
    : Response.json(
        encodeServiceError(
          new SvcError('not_found', { message: `No WebSocket endpoint at ${url.pathname}.` }),
        ),
        { status: 404 },
      );
  if (deps.accepted.has(req) && !socket.destroyed) {
    const own: string[] = [];
    response.headers.forEach((value, key) => {
      if (key.startsWith('svc-')) own.push(`${key}: ${value}`);
    });
    extra.set(req, own);
    deps.wss.handleUpgrade(req, socket, head, (ws) => deps.wss.emit('connection', ws, req));
    return;
  }
  const body = Buffer.from(await response.arrayBuffer());
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}`];
  response.headers.forEach((value, key) => {
    if (key !== 'content-length' && key !== 'connection' && key !== 'transfer-encoding')
      lines.push(`${key}: ${value}`);
  });
  lines.push(`content-length: ${body.length}`, 'connection: close', '', '');
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]));
}

/**
 * A WebSocket client of the agent server's stream for e2e tests (the `ws` package): attach with a fresh
 * token, record every frame, wait for frames by predicate, and read a refused handshake's status and body.
 */
import WebSocket from 'ws';
import type { AgentServer } from './agent-server.ts';

export interface Frame {
  type: string;
  [key: string]: any;
}

export interface StreamClient {
  ws: WebSocket;
  /** Every frame received so far, in order. */
  frames: Frame[];
  /** Envelopes of the `event` frames so far. */
  events(): Array<{
    id: string;
    type: string;
    session_id: string;
    turn_id: string;
    payload: any;
    actor: string;
  }>;
  send(frame: unknown): void;
  /** The first frame (from index `from`) matching `pred`; rejects if the socket closes first. */
  next(pred: (f: Frame) => boolean, from?: number): Promise<Frame>;
  /** Resolves with the close code and reason once the socket closed. */
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

/** GET /sessions/{id} for a token, then open its ws_url. */
export async function attach(server: AgentServer, sessionId: string): Promise<StreamClient> {
  const res = await server.api('GET', `/sessions/${sessionId}`);
  if (res.status !== 200) throw new Error(`GET /sessions/${sessionId}: ${res.status}`);
  return open(res.body.ws_url);
}

/** Opens a stream URL and resolves once the socket is open. */
export function open(url: string, headers: Record<string, string> = {}): Promise<StreamClient> {
  const ws = new WebSocket(url, { headers });
  const frames: Frame[] = [];
  const waiters: Array<() => void> = [];
  let isClosed = false;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on('close', (code, reason) => {
      isClosed = true;
      resolve({ code, reason: reason.toString() });
      for (const w of waiters.splice(0)) w();
    });
  });
  ws.on('message', (data) => {
    frames.push(JSON.parse(data.toString()));
    for (const w of waiters.splice(0)) w();
  });
  const client: StreamClient = {
    ws,
    frames,
    events: () => frames.filter((f) => f.type === 'event').map((f) => f.event),
    send: (frame) => ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame)),
    next(pred, from = 0) {
      return new Promise((resolve, reject) => {
        let i = from; // each frame is looked at once per waiter
        const check = () => {
          for (; i < frames.length; i++) if (pred(frames[i])) return resolve(frames[i]);
          if (isClosed)
            return reject(
              new Error(
                `socket closed before the frame came: ${JSON.stringify(frames.slice(-3)).slice(0, 2000)}`,
              ),
            );
          waiters.push(check);
        };
        check();
      });
    },
    closed,
    close: () => ws.close(),
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake refused: ${res.statusCode}`)));
  });
}

/** A handshake the server refuses: its HTTP status and JSON body. */
export function refusal(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      reject(new Error('the handshake was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }),
      );
    });
    ws.once('error', reject);
  });
}

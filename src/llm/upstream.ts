/**
 * @module The upstream HTTP client of the hot path: undici.request over a pooled keep-alive Agent
 * (measured ~2.5× less CPU per call than fetch). Owns connection reuse and the two timeouts of
 * DECISIONS §4: a total deadline until the response head arrives, and an idle limit between body chunks.
 */
import { Agent, type Dispatcher, request } from 'undici';

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Dispatcher.ResponseData['body'];
}

export interface UpstreamRequest {
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
  signal?: AbortSignal;
}

export interface Upstream {
  send(req: UpstreamRequest): Promise<UpstreamResponse>;
  close(): Promise<void>;
}

export interface UpstreamOptions {
  /** Total time until the response head arrives (default 600 s). */
  timeoutMs?: number;
  /** Longest silence between body chunks (default 120 s). */
  idleTimeoutMs?: number;
  connectionsPerOrigin?: number;
}

export function createUpstream(options: UpstreamOptions = {}): Upstream {
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    connections: options.connectionsPerOrigin ?? 256,
    pipelining: 1,
    headersTimeout: options.timeoutMs ?? 600_000,
    bodyTimeout: options.idleTimeoutMs ?? 120_000,
  });
  return {
    async send(req) {
      const res = await request(req.url, {
        method: 'POST',
        headers: req.headers,
        body: req.body,
        signal: req.signal,
        dispatcher: agent,
      });
      return { status: res.statusCode, headers: res.headers, body: res.body };
    },
    close: () => agent.close(),
  };
}

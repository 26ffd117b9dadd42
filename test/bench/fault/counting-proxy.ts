/**
 * A counting forwarder between the gateway and the fake provider, in the probe's own process: every
 * request is passed on byte for byte (streams included) and counted by path, so the probe can say how
 * many upstream calls one user call caused without trusting the gateway's own `attempts`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

export interface CountingProxy {
  url: string;
  /** Requests seen per path (query string removed). */
  counts: Map<string, number>;
  close(): Promise<void>;
}

export async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  const agent = new Agent({ connections: 64 });
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    counts.set(path, (counts.get(path) ?? 0) + 1);
    forward(upstream, agent, req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.destroy();
    },
  };
}

// --- internal ---

async function forward(
  upstream: string,
  agent: Agent,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const headers = { ...req.headers };
  delete headers.host;
  delete headers.connection;
  const controller = new AbortController();
  res.once('close', () => controller.abort());
  const up = await request(`${upstream}${req.url}`, {
    method: req.method as 'POST',
    headers,
    body: req.method === 'GET' || req.method === 'HEAD' ? undefined : req,
    dispatcher: agent,
    signal: controller.signal,
  });
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(up.headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  res.writeHead(up.statusCode, out);
  for await (const chunk of up.body) res.write(chunk);
  res.end();
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

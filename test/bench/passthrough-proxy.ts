/**
 * The floor of a Node proxy, for the gateway benchmark only, as issue 13 defines it: a do-nothing node:http
 * server forwarding the body with undici.request and writing the response back chunk by chunk as it
 * arrives, with no framework, auth, routing, pricing, events or metrics.
 * Usage: node test/bench/passthrough-proxy.ts <port> <upstream-origin>
 */
import { createServer } from 'node:http';
import { Agent, request } from 'undici';

const [portArg, upstream] = process.argv.slice(2);
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
const FORWARDED = new Set(['/v1/messages', '/v1/chat/completions', '/v1/responses']);

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (req.method !== 'POST' || !FORWARDED.has(req.url ?? '')) {
    res.writeHead(404).end();
    return;
  }
  try {
    const up = await request(`${upstream}${req.url}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'bench',
        authorization: 'Bearer bench',
        'anthropic-version': '2023-06-01',
      },
      body: Buffer.concat(chunks),
      dispatcher: agent,
    });
    res.writeHead(up.statusCode, {
      'content-type': String(up.headers['content-type'] ?? 'application/json'),
    });
    for await (const chunk of up.body) res.write(chunk);
    res.end();
  } catch {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});
server.listen(Number(portArg), '127.0.0.1');
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

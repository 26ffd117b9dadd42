/**
 * Target (h) of the gateway benchmark: the floor of passthrough-proxy.ts on the framework the gateway is
 * built on (Hono + @hono/node-server), used the way the gateway's non-streaming path uses it: the body read
 * from Node's IncomingMessage (`c.env.incoming`, never the web-stream `c.req`), the upstream answer read
 * whole and returned as one string body with its headers; an SSE answer is streamed back chunk by chunk
 * (hono/streaming). No auth, routing, pricing, events or metrics. (c)/(h) is the gateway's cost over its
 * own framework's.
 * Usage: node test/bench/passthrough-hono.ts <port> <upstream-origin>
 */
import type { IncomingMessage } from 'node:http';
import { serve } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { stream } from 'hono/streaming';
import { Agent, request } from 'undici';

type Env = { Bindings: { incoming: IncomingMessage } };

const [portArg, upstream] = process.argv.slice(2);
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
const app = new Hono<Env>();

const forward = async (c: Context<Env>) => {
  const chunks: Buffer[] = [];
  for await (const chunk of c.env.incoming) chunks.push(chunk as Buffer);
  const res = await request(`${upstream}${c.req.path}`, {
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
  const type = String(res.headers['content-type'] ?? 'application/json');
  if (type.startsWith('text/event-stream')) {
    c.status(res.statusCode as 200);
    c.header('content-type', type);
    return stream(c, async (s) => {
      for await (const chunk of res.body) await s.write(chunk as Uint8Array);
    });
  }
  return c.body(await res.body.text(), res.statusCode as 200, { 'content-type': type });
};

app.post('/v1/messages', forward);
app.post('/v1/chat/completions', forward);
app.post('/v1/responses', forward);

const server = serve({ fetch: app.fetch, port: Number(portArg), hostname: '127.0.0.1' });
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

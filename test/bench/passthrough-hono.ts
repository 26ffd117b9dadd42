/**
 * Target (h) of the gateway benchmark: the floor of passthrough-proxy.ts on the framework the gateway is
 * built on (Hono + @hono/node-server, the response streamed back through hono/streaming), with no auth,
 * routing, pricing, events or metrics. (c)/(h) is the gateway's cost over its own framework's.
 * Usage: node test/bench/passthrough-hono.ts <port> <upstream-origin>
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { Agent, request } from 'undici';

const [portArg, upstream] = process.argv.slice(2);
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
const app = new Hono();

const forward = (base: string) => async (c: import('hono').Context) => {
  const res = await request(`${upstream}${base}${c.req.path.replace(/^\/v1/, '/v1')}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'bench',
      authorization: 'Bearer bench',
      'anthropic-version': '2023-06-01',
    },
    body: Buffer.from(await c.req.arrayBuffer()),
    dispatcher: agent,
  });
  const type = String(res.headers['content-type'] ?? 'application/json');
  c.status(res.statusCode as 200);
  c.header('content-type', type);
  return stream(c, async (s) => {
    for await (const chunk of res.body) await s.write(chunk as Uint8Array);
  });
};

app.post('/v1/messages', forward(''));
app.post('/v1/chat/completions', forward(''));
app.post('/v1/responses', forward(''));

const server = serve({ fetch: app.fetch, port: Number(portArg), hostname: '127.0.0.1' });
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

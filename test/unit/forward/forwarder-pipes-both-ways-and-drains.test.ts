import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { test } from 'node:test';
import { createForwarder, type Forwarder, type HostPort } from '#src/forward/index.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { createLogger } from '#src/lib/log.ts';

interface Harness {
  forwarder: Forwarder;
  at: HostPort;
  logs: Array<Record<string, unknown>>;
}

/** A target server on a free loopback port; closed in t.after. */
async function target(t: test.TestContext, onConn: (s: Socket) => void): Promise<HostPort> {
  const server: Server = createServer({ allowHalfOpen: true }, onConn);
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });
  const addr = server.address() as { port: number };
  return { host: '127.0.0.1', port: addr.port };
}

async function forwarderTo(t: test.TestContext, to: HostPort): Promise<Harness> {
  const logs: Array<Record<string, unknown>> = [];
  const log = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line)) });
  const forwarder = createForwarder({ target: to, log });
  const at = await forwarder.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => forwarder.close(0));
  return { forwarder, at, logs };
}

function dial(at: HostPort, t: test.TestContext): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: at.host, port: at.port, allowHalfOpen: true }, () => resolve(s));
    s.once('error', reject);
    t.after(() => s.destroy());
  });
}

/** Everything a socket sends until it ends (or closes). */
function readAll(s: Socket): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    s.once('end', () => resolve(Buffer.concat(chunks)));
    s.once('close', () => resolve(Buffer.concat(chunks)));
  });
}

function until(check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const tick = () => (check() ? resolve() : setTimeout(tick, 5));
    tick();
  });
}

test('bytes cross unchanged in both directions, megabytes included (backpressure holds)', async (t) => {
  const echo = await target(t, (s) => s.pipe(s));
  const { at, forwarder } = await forwarderTo(t, echo);
  const payload = randomBytes(4 * 1024 * 1024);
  const client = await dial(at, t);
  const received = readAll(client);
  client.end(payload);
  assert.ok((await received).equals(payload));
  await until(() => forwarder.activeConnections() === 0);
});

test('a client half-close reaches the target, and the reply written after it still arrives', async (t) => {
  // The target answers only once it has seen the client's FIN: the reply travels on the other half.
  const upper = await target(t, (s) => {
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('end', () => s.end(Buffer.concat(chunks).toString('utf8').toUpperCase()));
  });
  const { at, forwarder } = await forwarderTo(t, upper);
  const client = await dial(at, t);
  const received = readAll(client);
  client.write('hello ');
  client.end('forward');
  assert.equal((await received).toString('utf8'), 'HELLO FORWARD');
  await until(() => forwarder.activeConnections() === 0);
});

test('a target half-close reaches the client, which may still send', async (t) => {
  let fromClient = '';
  let clientEnded!: () => void;
  const gotClientEnd = new Promise<void>((r) => {
    clientEnded = r;
  });
  const banner = await target(t, (s) => {
    s.end('banner\n'); // the target is done writing at once
    s.setEncoding('utf8').on('data', (d) => {
      fromClient += d;
    });
    s.on('end', () => clientEnded());
  });
  const { at } = await forwarderTo(t, banner);
  const client = await dial(at, t);
  assert.equal((await readAll(client)).toString('utf8'), 'banner\n');
  client.end('late words');
  await gotClientEnd;
  assert.equal(fromClient, 'late words');
});

test('an unreachable target drops the client connection and logs a warning without the payload', async (t) => {
  // Nothing listens on the port once its server is gone.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const deadPort = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  const { at, forwarder, logs } = await forwarderTo(t, { host: '127.0.0.1', port: deadPort });
  const client = await dial(at, t);
  client.on('error', () => {});
  const received = readAll(client);
  client.write('GET /healthz HTTP/1.1\r\n\r\n');
  assert.equal((await received).length, 0);
  await until(() => forwarder.activeConnections() === 0);
  const warn = logs.find((l) => l.msg === 'upstream connect failed');
  assert.ok(warn, JSON.stringify(logs));
  assert.equal(warn.level, 'warn');
  assert.equal(warn.code, 'ECONNREFUSED');
  assert.equal(warn.target, `127.0.0.1:${deadPort}`);
  assert.ok(!JSON.stringify(logs).includes('healthz'), 'payload bytes are never logged');
});

test('a client that resets mid-stream closes the upstream side too', async (t) => {
  let upstreamClosed!: () => void;
  const upClosed = new Promise<void>((r) => {
    upstreamClosed = r;
  });
  const streamer = await target(t, (s) => {
    s.on('error', () => {});
    s.on('close', () => upstreamClosed());
    s.write('data: 1\n\n');
  });
  const { at, forwarder } = await forwarderTo(t, streamer);
  const client = await dial(at, t);
  await new Promise((r) => client.once('data', r));
  client.resetAndDestroy();
  await upClosed;
  await until(() => forwarder.activeConnections() === 0);
});

test('close stops accepting, lets an open connection finish, and reports nothing forced', async (t) => {
  let serverSide!: Socket;
  const echo = await target(t, (s) => {
    serverSide = s;
    s.pipe(s);
  });
  const { at, forwarder } = await forwarderTo(t, echo);
  const client = await dial(at, t);
  client.write('ping');
  await new Promise((r) => client.once('data', r));
  await until(() => serverSide !== undefined);
  const closing = forwarder.close(60_000);
  // New connections are refused once the listener is closed.
  await assert.rejects(dial(at, t), /ECONNREFUSED/);
  // The open one still works.
  client.write('pong');
  const echoed = await new Promise<Buffer>((r) => client.once('data', r));
  assert.equal(echoed.toString(), 'pong');
  client.end();
  assert.deepEqual(await closing, { forced: 0 });
  assert.equal(forwarder.activeConnections(), 0);
});

test('connections still open at the drain deadline are destroyed and counted', async (t) => {
  const silent = await target(t, (s) => s.on('error', () => {}));
  const { at, forwarder } = await forwarderTo(t, silent);
  const client = await dial(at, t);
  client.on('error', () => {});
  const clientClosed = new Promise((r) => client.once('close', r));
  await until(() => forwarder.activeConnections() === 1);
  assert.deepEqual(await forwarder.close(20), { forced: 1 });
  await clientClosed;
});

test('listening on a taken address fails with a startup refusal naming it', async (t) => {
  const taken = await target(t, () => {});
  const forwarder = createForwarder({ target: taken, log: createLogger({ write: () => {} }) });
  await assert.rejects(forwarder.listen(taken), (err) => {
    assert.ok(isSvcError(err));
    assert.equal(err.code, 'startup_refused');
    assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${taken.port}.*EADDRINUSE`));
    return true;
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NodeBindings } from '#src/http/incoming.ts';
import { listen } from '#src/http/listen.ts';
import { stopCutOffSignal } from '#src/http/stop-cut-off.ts';

/** A handler that answers after `release()` is called. */
function gated() {
  let release = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let entered = () => {};
  const inside = new Promise<void>((r) => {
    entered = r;
  });
  const fetch = async () => {
    entered();
    await gate;
    return new Response('done');
  };
  return { fetch, release: () => release(), inside };
}

test('close stops accepting, lets an in-flight request finish, and closes idle keep-alive sockets', async (t) => {
  const g = gated();
  const server = await listen(g.fetch, { host: '127.0.0.1', port: 0 });
  t.after(() => server.server.closeAllConnections());
  const pending = fetch(`${server.url}/slow`);
  await g.inside;
  assert.equal(server.inFlight, 1);
  const closing = server.close(10_000);
  await assert.rejects(fetch(`${server.url}/late`), 'a new connection is refused once closing');
  g.release();
  const res = await pending;
  assert.equal(await res.text(), 'done');
  assert.deepEqual(await closing, { forced: false });
});

test('a request still running at the deadline is cut off and reported as forced', async () => {
  const g = gated();
  const server = await listen(g.fetch, { host: '127.0.0.1', port: 0 });
  const pending = fetch(`${server.url}/stuck`).then(
    () => 'answered',
    () => 'cut off',
  );
  await g.inside;
  assert.deepEqual(await server.close(100), { forced: true });
  assert.equal(await pending, 'cut off');
  g.release();
});

test('a stream still running at the deadline that listens for the cut-off sends its ending before its connection closes', async () => {
  const utf8 = new TextEncoder();
  const stream = (_req: Request, env: NodeBindings) => {
    const cut = stopCutOffSignal(env.outgoing);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(utf8.encode('data: first\n\n'));
        cut?.addEventListener('abort', () => {
          controller.enqueue(utf8.encode('event: error\ndata: cut\n\n'));
          controller.close();
        });
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
  const server = await listen(stream as (req: Request) => Response, { host: '127.0.0.1', port: 0 });
  const res = await fetch(`${server.url}/stream`);
  const text = res.text();
  assert.deepEqual(await server.close(100), { forced: true });
  assert.equal(await text, 'data: first\n\nevent: error\ndata: cut\n\n');
});

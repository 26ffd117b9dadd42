import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createUpstream, readUpstreamText, type UpstreamResponse } from '#src/llm/upstream.ts';

const answer = (body: Readable, headers: UpstreamResponse['headers'] = {}): UpstreamResponse => ({
  status: 200,
  headers,
  body,
});

test('a body in many chunks is read whole: a character split between chunks, a leading BOM dropped', async () => {
  const bytes = Buffer.from('\ufeff{"text":"héllo wörld ✓"}');
  const chunks = Array.from(bytes, (b) => Buffer.from([b]));
  assert.equal(await readUpstreamText(answer(Readable.from(chunks)), 1024), '{"text":"héllo wörld ✓"}');
  assert.equal(await readUpstreamText(answer(Readable.from([Buffer.from('one chunk')])), 1024), 'one chunk');
  assert.equal(await readUpstreamText(answer(Readable.from([])), 1024), '');
});

test('a body past the cap (declared or as it arrives) is refused and dropped, never read to its end', async () => {
  const declared = new PassThrough();
  await assert.rejects(readUpstreamText(answer(declared, { 'content-length': '11' }), 10), {
    code: 'upstream_error',
  });
  assert.ok(declared.destroyed);
  const arriving = new PassThrough();
  const read = readUpstreamText(answer(arriving), 10);
  arriving.write(Buffer.alloc(6));
  arriving.write(Buffer.alloc(6));
  await assert.rejects(read, { code: 'upstream_error', message: /larger than 10 bytes/ });
  assert.ok(arriving.destroyed);
});

test('a body that errors, closes before its end, was destroyed before the read, or trickles past its time is refused', async () => {
  const failing = new PassThrough();
  const read = readUpstreamText(answer(failing), 1024);
  failing.write('partial');
  failing.destroy(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
  await assert.rejects(read, { code: 'UND_ERR_SOCKET' });
  // an error after the read ended reaches no one (no unhandled 'error')
  failing.emit('error', new Error('late'));

  const cut = new PassThrough();
  const cutRead = readUpstreamText(answer(cut), 1024);
  cut.write('partial');
  cut.destroy();
  await assert.rejects(cutRead, { code: 'ERR_STREAM_PREMATURE_CLOSE' });

  const gone = new PassThrough().on('error', () => {});
  gone.destroy(new Error('aborted before the read'));
  await new Promise((closed) => gone.once('close', closed));
  await assert.rejects(readUpstreamText(answer(gone), 1024), /aborted before the read/);

  const slow = new PassThrough();
  const slowRead = readUpstreamText(answer(slow), 1024, 0);
  slow.write('a');
  await assert.rejects(slowRead, { name: 'TimeoutError' });
  assert.ok(slow.destroyed);
});

test('a gzip body is read decoded, and an empty one (a 429 or 204 marked gzip by a proxy) reads as empty', async (t) => {
  const answers = [
    { status: 200, body: gzipSync('{"ok":true}') },
    { status: 429, body: Buffer.alloc(0) },
    { status: 204, body: Buffer.alloc(0) },
  ];
  const server = createServer((req, res) => {
    const a = answers.shift()!;
    req
      .resume()
      .on('end', () =>
        res.writeHead(a.status, { 'content-encoding': 'gzip', 'content-length': a.body.length }).end(a.body),
      );
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const upstream = createUpstream();
  t.after(async () => {
    await upstream.close();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/messages`;
  const read = async () => {
    const res = await upstream.send({ url, headers: {}, body: '{}' });
    return [res.status, await readUpstreamText(res, 1024)];
  };
  assert.deepEqual(await read(), [200, '{"ok":true}']);
  assert.deepEqual(await read(), [429, '']);
  assert.deepEqual(await read(), [204, '']);
});

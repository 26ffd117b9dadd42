/**
 * The first event of a 2xx stream is read before the caller gets the body (llm/stream-start.ts): comments
 * are skipped, an event split across chunks is found, and every byte read is there again for the reader.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { PEEK_MAX_BYTES, peekFirstEvent } from '#src/llm/stream-start.ts';

async function rest(body: PassThrough): Promise<string> {
  let text = '';
  for await (const chunk of body) text += chunk;
  return text;
}

test('an upstream that opens with a keep-alive comment has started: no waiting for its first event', async () => {
  const body = new PassThrough();
  body.write(': OPENROUTER PROCESSING\n\n');
  assert.equal(await peekFirstEvent(body), null);
  body.end('data: {"id":"x"}\n\ndata: [DONE]\n\n');
  assert.equal(await rest(body), ': OPENROUTER PROCESSING\n\ndata: {"id":"x"}\n\ndata: [DONE]\n\n');
});

test('the first event with data, across chunks, and the body read whole afterwards', async () => {
  const body = new PassThrough();
  const sent = ['\n', 'event: error\nda', 'ta: {"type":"error"}\n', '\nevent: next\ndata: 2\n\n'];
  setImmediate(() => {
    for (const s of sent.slice(0, 3)) body.write(s);
    setTimeout(() => body.end(sent[3]), 10);
  });
  const first = await peekFirstEvent(body);
  assert.deepEqual([first?.event, first?.data], ['error', '{"type":"error"}']);
  assert.equal(await rest(body), sent.join(''));
});

test('a body that ends before any event gives null; a failing body throws its error', async () => {
  const ended = new PassThrough();
  ended.end('data: {"cut');
  assert.equal(await peekFirstEvent(ended), null);

  const failing = new PassThrough();
  setImmediate(() => failing.destroy(new Error('socket reset')));
  await assert.rejects(peekFirstEvent(failing), /socket reset/);
});

test('past the byte limit without an event it gives up and leaves the bytes in place', async () => {
  const body = new PassThrough();
  const line = `data: ${'x'.repeat(PEEK_MAX_BYTES)}`;
  body.write(line);
  assert.equal(await peekFirstEvent(body), null);
  body.end('\n\n');
  assert.equal(await rest(body), `${line}\n\n`);
});

/**
 * The first event of a 2xx stream is read before the caller gets the body (llm/stream-start.ts): a
 * keep-alive comment or a silent upstream ends the look at once or after the wait, an event split across
 * chunks is found, a body that ends yields its last event, and every byte read is there again for the reader.
 */
import assert from 'node:assert/strict';
import { PassThrough, type Readable } from 'node:stream';
import { test } from 'node:test';
import {
  PEEK_MAX_BYTES,
  PEEK_PREAMBLE_MAX_BYTES,
  peekFirstEvent,
  preamblePeekBytes,
} from '#src/llm/stream-start.ts';

async function rest(body: Readable): Promise<string> {
  let text = '';
  for await (const chunk of body) text += chunk;
  return text;
}

test('an upstream that opens with a keep-alive comment has started: no waiting for its first event', async () => {
  const body = new PassThrough();
  body.write(': OPENROUTER PROCESSING\n\n');
  const peeked = await peekFirstEvent(body);
  assert.equal(peeked.first, null);
  body.end('data: {"id":"x"}\n\ndata: [DONE]\n\n');
  assert.equal(await rest(peeked.body), ': OPENROUTER PROCESSING\n\ndata: {"id":"x"}\n\ndata: [DONE]\n\n');
});

test('the first event with data, across chunks, and the body read whole afterwards', async () => {
  const body = new PassThrough();
  const sent = ['\n', 'event: error\nda', 'ta: {"type":"error"}\n', '\nevent: next\ndata: 2\n\n'];
  setImmediate(() => {
    for (const s of sent.slice(0, 3)) body.write(s);
    setTimeout(() => body.end(sent[3]), 10);
  });
  const { first, body: after } = await peekFirstEvent(body);
  assert.deepEqual([first?.event, first?.data], ['error', '{"type":"error"}']);
  assert.equal(await rest(after), sent.join(''));
});

test('a body that ends gives its last event, blank line or not, and its bytes are still there', async () => {
  const ended = new PassThrough();
  ended.end('data: {"error":{"type":"rate_limit_error","message":"slow down"}}\n');
  const peeked = await peekFirstEvent(ended);
  assert.equal(peeked.first?.data, '{"error":{"type":"rate_limit_error","message":"slow down"}}');
  assert.equal(
    await rest(peeked.body),
    'data: {"error":{"type":"rate_limit_error","message":"slow down"}}\n',
  );

  const cut = new PassThrough();
  cut.end('data: {"cut');
  const nothing = await peekFirstEvent(cut);
  assert.equal(nothing.first?.data ?? null, '{"cut');
  assert.equal(await rest(nothing.body), 'data: {"cut');

  const failing = new PassThrough();
  setImmediate(() => failing.destroy(new Error('socket reset')));
  await assert.rejects(peekFirstEvent(failing), /socket reset/);
});

test('past the byte limit or the wait it gives up and leaves the bytes in place', async () => {
  const big = new PassThrough();
  const line = `data: ${'x'.repeat(PEEK_MAX_BYTES)}`;
  big.write(line);
  const peeked = await peekFirstEvent(big);
  assert.equal(peeked.first, null);
  big.end('\n\n');
  assert.equal(await rest(peeked.body), `${line}\n\n`);

  const silent = new PassThrough();
  silent.write('data: {"partial":');
  const started = Date.now();
  const waited = await peekFirstEvent(silent, PEEK_MAX_BYTES, 50);
  assert.equal(waited.first, null);
  assert.ok(Date.now() - started < 2000);
  silent.end('1}\n\n');
  assert.equal(await rest(waited.body), 'data: {"partial":1}\n\n');
});

test('past preamble events larger than the byte limit it still finds the first event after them', async () => {
  // response.created and response.in_progress repeat the request's instructions and tools, each well past
  // PEEK_MAX_BYTES here; the overload error after them decides the call before the client's 200
  const echo = 'x'.repeat(PEEK_MAX_BYTES);
  const preambleEvent = (type: string) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, response: { instructions: echo } })}\n\n`;
  const error = 'event: error\ndata: {"type":"error","error":{"code":"server_is_overloaded"}}\n\n';
  const body = new PassThrough();
  const text = preambleEvent('response.created') + preambleEvent('response.in_progress') + error;
  for (let i = 0; i < text.length; i += 16 * 1024) body.write(text.slice(i, i + 16 * 1024));
  const isPreamble = (e: { event?: string }) =>
    e.event === 'response.created' || e.event === 'response.in_progress';
  const peeked = await peekFirstEvent(body, PEEK_MAX_BYTES, 5_000, isPreamble);
  assert.equal(peeked.first?.event, 'error');
  body.end();
  assert.equal(await rest(peeked.body), text, 'every byte read is handed back');
  // a preamble past its own limit gives up as before
  const huge = new PassThrough();
  huge.write(preambleEvent('response.created'));
  const gaveUp = await peekFirstEvent(huge, PEEK_MAX_BYTES, 5_000, isPreamble, PEEK_MAX_BYTES);
  assert.equal(gaveUp.first, null);
  huge.end();
});

test('a first event that another completes is read with the one after it, and only that one', async () => {
  // the Responses API fails a stream with `error`, then `response.failed` holding the usage of what it read
  const error = 'event: error\ndata: {"type":"error","error":{"code":"server_is_overloaded"}}\n\n';
  const failed = 'event: response.failed\ndata: {"type":"response.failed","response":{"usage":{}}}\n\n';
  const isError = (e: { event?: string }) => e.event === 'error';
  const body = new PassThrough();
  body.write(error);
  setImmediate(() => body.write(`${failed}event: more\ndata: 3\n\n`));
  const peeked = await peekFirstEvent(body, PEEK_MAX_BYTES, 5_000, undefined, undefined, isError);
  assert.deepEqual([peeked.first?.event, peeked.next?.event], ['error', 'response.failed']);
  body.end();
  assert.equal(await rest(peeked.body), `${error}${failed}event: more\ndata: 3\n\n`);

  // a provider that ends its stream after the first event, or sends nothing more: as without the look
  const ended = new PassThrough();
  ended.end(error);
  const alone = await peekFirstEvent(ended, PEEK_MAX_BYTES, 5_000, undefined, undefined, isError);
  assert.deepEqual([alone.first?.event, alone.next, alone.waitedOut], ['error', null, false]);
  const silent = new PassThrough();
  silent.write(error);
  const held = await peekFirstEvent(silent, PEEK_MAX_BYTES, 5_000, undefined, undefined, isError, 20);
  assert.deepEqual([held.first?.event, held.next, held.waitedOut], ['error', null, false]);
  silent.end();
  assert.equal(await rest(held.body), error);

  // an event no one completes is never waited past
  const other = new PassThrough();
  other.write('data: {"id":"x"}\n\n');
  const started = await peekFirstEvent(other, PEEK_MAX_BYTES, 5_000, undefined, undefined, isError);
  assert.deepEqual([started.first?.data, started.next], ['{"id":"x"}', null]);
  other.end();
});

test('the preamble bound follows the request size, between 8 MiB and two events at the SSE limit', () => {
  const MiB = 1024 * 1024;
  // a small request: the fixed floor
  assert.equal(preamblePeekBytes(10 * 1024, 8 * MiB), PEEK_PREAMBLE_MAX_BYTES);
  // a 2 MiB request: its two echoes (escaped up to threefold), past the floor
  assert.equal(preamblePeekBytes(2 * MiB, 8 * MiB), 12 * MiB + PEEK_MAX_BYTES);
  // a 30 MiB request: never more than two events at the SSE event limit, which refuses larger ones anyway
  assert.equal(preamblePeekBytes(30 * MiB, 8 * MiB), 2 * (8 * MiB + 1024) + PEEK_MAX_BYTES);
  // a lowered SSE limit lowers the bound below the floor
  assert.ok(preamblePeekBytes(10 * 1024, MiB) < PEEK_PREAMBLE_MAX_BYTES);
});

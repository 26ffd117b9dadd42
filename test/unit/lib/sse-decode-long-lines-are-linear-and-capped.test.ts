/**
 * Issue 17 item 4: an SSE line without a newline must cost linear work (it was re-scanned and re-joined on
 * every chunk: 8 / 16 / 32 MiB took 1.2 / 4.8 / 21.4 s) and is refused past `maxLineBytes` with
 * upstream_error of class server_error. Work is counted as the bytes the decoder's searches examine.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SvcError } from '#src/lib/errors.ts';
import { createSseDecoder, decodeSse, type SseEvent } from '#src/lib/sse-decode.ts';
import { chunks, collect, everySplit, utf8 } from '../../helpers/sse-fixtures.ts';

/** A Buffer that counts the bytes its indexOf searches examine. */
class CountingBuffer extends Uint8Array {
  static scanned = 0;
  override indexOf(value: number, from = 0): number {
    const at = super.indexOf(value, from);
    CountingBuffer.scanned += (at === -1 ? this.length : at + 1) - from;
    return at;
  }
}

function isLineTooLong(err: unknown): boolean {
  assert.ok(err instanceof SvcError, `not an SvcError: ${err}`);
  assert.equal(err.code, 'upstream_error');
  assert.equal(err.details?.error_class, 'server_error');
  assert.match(err.message, /longer than \d+ bytes/);
  return true;
}

test('a 32 MiB data line in 64 KiB chunks is scanned a bounded number of times per byte', () => {
  const piece = 64 * 1024;
  const total = 32 * 1024 * 1024;
  const d = createSseDecoder();
  CountingBuffer.scanned = 0;
  const head = CountingBuffer.from(utf8('event: x\ndata: '));
  const events: SseEvent[] = [...d.push(head)];
  const body = new CountingBuffer(piece).fill(120); // 'x'
  for (let sent = 0; sent < total; sent += piece) events.push(...d.push(body));
  events.push(...d.push(CountingBuffer.from(utf8('\n\n'))));
  assert.equal(events.length, 1);
  assert.equal(events[0].event, 'x');
  assert.equal(events[0].data.length, total);
  // each byte is looked at by the two searches (LF and CR) at most, never once per chunk received
  assert.ok(CountingBuffer.scanned >= total, 'the searches examined every byte');
  assert.ok(CountingBuffer.scanned <= 2 * (total + 64), `scanned ${CountingBuffer.scanned} bytes`);
});

test('a line longer than maxLineBytes is refused as upstream_error, however it is split', () => {
  const max = 32;
  const text = `data: ${'é'.repeat(20)}\n\n`; // 46 bytes on its data line
  for (const split of everySplit(text)) {
    const d = createSseDecoder({ maxLineBytes: max });
    assert.throws(() => {
      for (const c of split) d.push(c);
      d.end();
    }, isLineTooLong);
  }
});

test('a line without a newline is refused as soon as it passes the cap, before the stream ends', () => {
  const d = createSseDecoder({ maxLineBytes: 1024 });
  d.push(utf8('data: '));
  let pushed = 6;
  assert.throws(() => {
    for (;;) {
      d.push(new Uint8Array(100).fill(120));
      pushed += 100;
      assert.ok(pushed < 2048, 'the cap was not enforced while the line was still open');
    }
  }, isLineTooLong);
});

test('a line of exactly maxLineBytes passes, at every split, with CRLF and LF ends', async () => {
  const max = 40;
  const data = `${'☃'.repeat(11)}ab`; // 35 bytes
  for (const nl of ['\n', '\r\n', '\r']) {
    const text = `data: ${data}${nl}${nl}`; // the data line is 6 + 35 = 41 bytes: one too many
    for (const split of everySplit(text)) {
      await assert.rejects(collect(decodeSse(chunks(split), { maxLineBytes: max })), isLineTooLong);
    }
    const fits = `data:${data}${nl}${nl}`; // 40 bytes
    for (const split of everySplit(fits)) {
      assert.deepEqual(await collect(decodeSse(chunks(split), { maxLineBytes: max })), [
        { event: undefined, data, id: undefined },
      ]);
    }
  }
});

test('many short data lines of one event are capped together', () => {
  const d = createSseDecoder({ maxLineBytes: 64 });
  assert.throws(() => {
    for (let i = 0; i < 100; i++) d.push(utf8('data: abcdef\n'));
  }, isLineTooLong);
});

test('a leading BOM is dropped once, a BOM later in the stream is kept', async () => {
  const text = '\uFEFFdata: a\n\ndata: \uFEFFb\n\n';
  for (const split of everySplit(text)) {
    assert.deepEqual(await collect(decodeSse(chunks(split))), [
      { event: undefined, data: 'a', id: undefined },
      { event: undefined, data: '\uFEFFb', id: undefined },
    ]);
  }
});

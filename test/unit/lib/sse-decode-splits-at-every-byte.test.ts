import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSseDecoder, decodeSse } from '#src/lib/sse-decode.ts';
import {
  ANTHROPIC_TOOL_STREAM,
  chunks,
  collect,
  everySplit,
  OPENAI_TOOL_STREAM,
  utf8,
} from '../../helpers/sse-fixtures.ts';

for (const [name, base, fixture] of [
  ['anthropic', ANTHROPIC_TOOL_STREAM, ANTHROPIC_TOOL_STREAM],
  ['openai', OPENAI_TOOL_STREAM, OPENAI_TOOL_STREAM],
  ['anthropic with CRLF line ends', ANTHROPIC_TOOL_STREAM, ANTHROPIC_TOOL_STREAM.replaceAll('\n', '\r\n')],
  ['openai with CR line ends', OPENAI_TOOL_STREAM, OPENAI_TOOL_STREAM.replaceAll('\n', '\r')],
] as const) {
  test(`the ${name} fixture decodes to the same events at every byte split (incl. inside UTF-8 and CRLF)`, async () => {
    const expected = await collect(decodeSse(chunks([utf8(base)])));
    assert.ok(expected.length > 5);
    for (const split of everySplit(fixture))
      assert.deepEqual(await collect(decodeSse(chunks(split))), expected);
  });
}

test('every byte as its own chunk decodes like one chunk', async () => {
  const bytes = utf8(OPENAI_TOOL_STREAM);
  const single = [...bytes].map((b) => Uint8Array.of(b));
  assert.deepEqual(await collect(decodeSse(chunks(single))), await collect(decodeSse(chunks([bytes]))));
});

test('comment lines (OpenRouter keep-alives) never become data events', async () => {
  const events = await collect(
    decodeSse(chunks([utf8(': OPENROUTER PROCESSING\n\n: x\n\ndata: {"a":1}\n\n')])),
  );
  assert.deepEqual(events, [{ event: undefined, data: '{"a":1}', id: undefined }]);
});

test('multi-line data is joined with newlines and event/id fields are kept', async () => {
  const d = createSseDecoder();
  const events = [...d.push(utf8('id: 7\nevent: x\ndata: a\ndata:b\n\n')), ...d.end()];
  assert.deepEqual(events, [{ event: 'x', data: 'a\nb', id: '7' }]);
});

test('a final event without a trailing blank line is flushed at end', async () => {
  assert.deepEqual(await collect(decodeSse(chunks([utf8('data: [DONE]')]))), [
    { event: undefined, data: '[DONE]', id: undefined },
  ]);
});

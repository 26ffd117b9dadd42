/**
 * A generator function made per stream (a closure, an object literal's `async *[Symbol.asyncIterator]()`)
 * gets its own initial map from V8, allocated in the old generation and pointing back at the function: its
 * context, and so the whole request, then survived every young collection until the next full one (streamed
 * gateway requests promoted 15-22 KiB each). The stream path's generators are declared once.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createAnthropicAdapter, createOpenAIAdapter } from '#src/adapters/registry.ts';
import { decodeSse } from '#src/lib/sse-decode.ts';
import { ROOT } from '../../helpers/svc.ts';

const OPENAI_SSE = [
  'data: {"id":"c1","object":"chat.completion.chunk","model":"up","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}\n\n',
  'data: {"id":"c1","object":"chat.completion.chunk","model":"up","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
  'data: {"id":"c1","object":"chat.completion.chunk","model":"up","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}\n\n',
  'data: [DONE]\n\n',
];

async function* bytes(frames: string[]): AsyncGenerator<Uint8Array> {
  for (const f of frames) yield Buffer.from(f);
}

/** The prototype a stream's generator object takes from its generator function. */
const generatorOf = (iterable: AsyncIterable<unknown>) =>
  Object.getPrototypeOf(iterable[Symbol.asyncIterator]());

const openai = createOpenAIAdapter({ baseUrl: 'https://o.test/v1', apiKey: 'k' });
const anthropic = createAnthropicAdapter({ baseUrl: 'https://a.test', apiKey: 'k' });

test('two tapped streams are read by one generator function, and still pass their frames and usage', async () => {
  const taps = [0, 1].map(() => openai.tapStream(bytes(OPENAI_SSE), { model: 'alias' }));
  assert.equal(generatorOf(taps[0]!), generatorOf(taps[1]!));
  const other = anthropic.tapStream(bytes([]), {});
  assert.equal(generatorOf(other), generatorOf(taps[0]!));
  let text = '';
  for await (const chunk of taps[0]!) text += Buffer.from(chunk).toString();
  assert.match(text, /"model":"alias"/);
  assert.doesNotMatch(text, /"model":"up"/);
  assert.equal(taps[0]!.completed()?.type, 'message.complete');
  assert.equal(taps[0]!.usage().output_tokens, 1);
});

test("two decoded streams are read by one generator function, and still yield the wire's events", async () => {
  const streams = [0, 1].map(() => openai.decodeStream(decodeSse(bytes(OPENAI_SSE))));
  assert.equal(generatorOf(streams[0]!), generatorOf(streams[1]!));
  const types: string[] = [];
  for await (const e of streams[0]!) types.push(e.type);
  assert.equal(types.at(-1), 'message.complete');
});

test('no generator function in src is declared inside another function or an object literal', () => {
  const nested: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts'))
        readFileSync(path, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (/^\s+(async\s+function\s*\*|async\s*\*|function\s*\*)/.test(line))
              nested.push(`${path.slice(ROOT.length + 1)}:${i + 1}`);
          });
    }
  };
  walk(join(ROOT, 'src'));
  assert.deepEqual(nested, []);
});

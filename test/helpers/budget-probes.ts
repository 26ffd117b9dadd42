/**
 * Request bodies that probe the budget reservation (issue 17 #1), in both inbound shapes: CJK text, emoji,
 * English, base64 images and large tool schemas with tool calls and results, plus what the upstream
 * receives for a model (the client body on the same wire, the adapter's translation otherwise).
 */
import { createAnthropicAdapter, createOpenAIAdapter } from '#src/adapters/registry.ts';
import type { CanonicalRequest } from '#src/canonical/request.ts';
import { SHAPES } from '#src/gateway/shapes/shapes.ts';
import { loadModelRegistry } from '#src/models/registry.ts';

export const registry = loadModelRegistry(undefined);
const adapters = {
  anthropic: createAnthropicAdapter({ baseUrl: 'http://fake', apiKey: 'k' }),
  openai: createOpenAIAdapter({ baseUrl: 'http://fake/v1', apiKey: 'k' }),
};
export const MODELS = ['anthropic:claude-haiku-4-5', 'openai:gpt-4o-mini', 'openai:gpt-5-mini'];

/** A PNG whose header says w × h, padded with `bytes` of pixel data, as base64. */
export function png(w: number, h: number, bytes: number): string {
  const head = Buffer.alloc(24);
  head.writeUInt32BE(0x89504e47, 0);
  head.writeUInt32BE(0x0d0a1a0a, 4);
  head.writeUInt32BE(13, 8);
  head.write('IHDR', 12, 'latin1');
  head.writeUInt32BE(w, 16);
  head.writeUInt32BE(h, 20);
  return Buffer.concat([head, Buffer.alloc(bytes, 7)]).toString('base64');
}

export const CJK = '预算上限必须守住這是一個測試日本語のテキスト한국어'.repeat(200).slice(0, 4_000);
export const EMOJI = '😀👩‍👩‍👧🚀🇯🇵✨'.repeat(400);
export const ENGLISH = 'The quick brown fox jumps over the lazy dog while the budget holds. '.repeat(30);
export const BIG_PNG = png(8_000, 8_000, 60_000);

function bigSchema(i: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let p = 0; p < 150; p++)
    properties[`field_${i}_${p}`] = {
      type: p % 3 === 0 ? 'string' : 'integer',
      description: `字段 ${p}: 用于测试的很长的描述 with some English words`,
      enum: p % 3 === 0 ? ['a', 'b', 'c'] : undefined,
    };
  return { type: 'object', properties, required: Object.keys(properties).slice(0, 10) };
}

export type Shape = 'anthropic' | 'openai';
export type Case = { anthropic: Record<string, unknown>; openai: Record<string, unknown> };

function textCase(text: string): Case {
  return {
    anthropic: {
      model: 'm',
      max_tokens: 200,
      system: text.slice(0, 50),
      messages: [{ role: 'user', content: text }],
    },
    openai: {
      model: 'm',
      max_tokens: 200,
      messages: [
        { role: 'system', content: text.slice(0, 50) },
        { role: 'user', content: text },
      ],
    },
  };
}

export const CASES: Record<string, Case> = {
  'CJK text': textCase(CJK),
  emoji: textCase(EMOJI),
  'English text': textCase(ENGLISH),
  'base64 images': {
    anthropic: {
      model: 'm',
      max_tokens: 200,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: BIG_PNG } },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(2048, 768, 10) } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            { type: 'text', text: 'compare these' },
          ],
        },
      ],
    },
    openai: {
      model: 'm',
      max_tokens: 200,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: `data:image/png;base64,${BIG_PNG}`, detail: 'high' } },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png(2048, 768, 10)}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            { type: 'text', text: 'compare these' },
          ],
        },
      ],
    },
  },
  'large tool schemas, tool calls and tool results': {
    anthropic: {
      model: 'm',
      max_tokens: 200,
      tools: Array.from({ length: 8 }, (_, i) => ({
        name: `tool_${i}`,
        description: `工具 ${i} does many things`.repeat(20),
        input_schema: bigSchema(i),
      })),
      messages: [
        { role: 'user', content: 'run it' },
        {
          role: 'assistant',
          content: [
            {
              type: 'tool_use',
              id: 'toolu_1',
              name: 'tool_0',
              input: Object.fromEntries(Array.from({ length: 300 }, (_, k) => [`k${k}`, k % 2 ? 1 : '值'])),
            },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: `${CJK}${EMOJI}`, is_error: true },
          ],
        },
      ],
    },
    openai: {
      model: 'm',
      max_tokens: 200,
      tools: Array.from({ length: 8 }, (_, i) => ({
        type: 'function',
        function: {
          name: `tool_${i}`,
          description: `工具 ${i} does many things`.repeat(20),
          parameters: bigSchema(i),
        },
      })),
      messages: [
        { role: 'user', content: 'run it' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: {
                name: 'tool_0',
                arguments: JSON.stringify(
                  Object.fromEntries(Array.from({ length: 300 }, (_, k) => [`k${k}`, k % 2 ? 1 : '值'])),
                ),
              },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: `${CJK}${EMOJI}` },
      ],
    },
  },
};

export function decode(shape: 'anthropic' | 'openai', body: Record<string, unknown>): CanonicalRequest {
  const headers = shape === 'anthropic' ? { 'anthropic-version': '2023-06-01' } : {};
  return SHAPES[shape].decode(structuredClone(body), headers);
}

/** What the upstream receives for this model: the client body on the same wire, else the translation. */
export function upstreamBody(shape: 'anthropic' | 'openai', body: Record<string, unknown>, modelId: string) {
  const model = registry.get(modelId)!;
  const adapter = adapters[model.adapter as 'anthropic' | 'openai'];
  const name = modelId.split(':')[1];
  if (adapter.wire === shape) return { wire: adapter.wire, body: { ...body, model: name } };
  return { wire: adapter.wire, body: JSON.parse(adapter.encodeRequest(decode(shape, body), name).body) };
}

/**
 * The SDK matrix shared by `gateway-sdk-matrix-*.test.ts`: the three routed models with their upstream
 * paths, keys and list prices, the scripted fake usage, the conversations written out in both wire formats,
 * and the checks of what the fake provider received and what the trace store holds for one turn.
 *
 * Each conversation is written once in Anthropic Messages form and once in Chat Completions form, by hand
 * from wire-formats §5.1. On these conversations the translation is exact both ways: an Anthropic client's
 * `anthropic` body reaches an OpenAI-wire upstream as the `chat` body, and an OpenAI client's `chat` body
 * reaches Anthropic as the `anthropic` body (only `model`, the max-tokens field and the stream fields differ).
 */
import assert from 'node:assert/strict';
import type { FakeStep } from '../fake-provider/script.ts';
import { readEvents } from './gateway-keys.ts';
import type { GatewayStack } from './gateway-stack.ts';

export type ProviderName = 'anthropic' | 'openai' | 'openrouter';
export type Kind = 'text' | 'tool' | 'image';
export type Wire = 'anthropic' | 'openai';

export interface MatrixProvider {
  provider: ProviderName;
  /** What the client asks for (a canonical id) and what the upstream must receive. */
  model: string;
  upstreamModel: string;
  wire: Wire;
  path: string;
  auth: [header: string, value: string];
  /** Built-in price table (src/models/default-models.ts) in thousandths of a USD per million tokens. */
  prices: { input: bigint; output: bigint; cache_read: bigint; cache_write: bigint };
}

export const PROVIDERS: readonly MatrixProvider[] = [
  {
    provider: 'anthropic',
    model: 'anthropic:claude-sonnet-4-5',
    upstreamModel: 'claude-sonnet-4-5',
    wire: 'anthropic',
    path: '/v1/messages',
    auth: ['x-api-key', 'sk-ant-test'],
    prices: { input: 3000n, output: 15000n, cache_read: 300n, cache_write: 3750n }, // 3 / 15 / 0.30 / 3.75
  },
  {
    provider: 'openai',
    model: 'openai:gpt-5-mini',
    upstreamModel: 'gpt-5-mini',
    wire: 'openai',
    path: '/v1/chat/completions',
    auth: ['authorization', 'Bearer sk-openai-test'],
    prices: { input: 250n, output: 2000n, cache_read: 25n, cache_write: 250n }, // 0.25 / 2 / 0.025 / (input)
  },
  {
    provider: 'openrouter',
    model: 'openrouter:google/gemini-2.5-flash',
    upstreamModel: 'google/gemini-2.5-flash',
    wire: 'openai',
    path: '/api/v1/chat/completions',
    auth: ['authorization', 'Bearer sk-or-test'],
    prices: { input: 300n, output: 2500n, cache_read: 75n, cache_write: 300n }, // 0.30 / 2.50 / 0.075 / (input)
  },
];

export const KINDS: readonly Kind[] = ['text', 'tool', 'image'];

/** The fake's usage on every reply: all three input classes, so each is priced and reported apart. */
export const USAGE = { input: 40, output: 12, cacheRead: 1200, cacheWrite: 300 };

/** A 1×1 PNG. */
export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** One request/answer of a conversation. */
export interface TurnSpec {
  /** The fake's reply plan besides USAGE. */
  step: FakeStep;
  /** The body in each form, without model, max-tokens and stream fields. */
  anthropic: Record<string, unknown>;
  chat: Record<string, unknown>;
  /** What the answer must carry. */
  expect: { text: string; stop: 'end_turn' } | { tool: Omit<ToolCall, 'id'>; stop: 'tool_use' };
}

const SYSTEM = 'You are terse.';
const WEATHER = {
  name: 'get_weather',
  description: 'Current weather for a city',
  schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const ASK_WEATHER = 'What is the weather in Oslo?';
const TOOL_RESULT = 'Sunny, 21 C';

/** The turns of one conversation; `call` is the tool call the previous turn answered with. */
export function conversation(kind: Kind): Array<(call?: ToolCall) => TurnSpec> {
  if (kind === 'text') {
    return [
      () => ({
        step: {},
        anthropic: { system: SYSTEM, messages: [userText('Say hello.')] },
        chat: {
          messages: [
            { role: 'system', content: SYSTEM },
            { role: 'user', content: 'Say hello.' },
          ],
        },
        expect: { text: 'Hello from the fake provider.', stop: 'end_turn' },
      }),
    ];
  }
  if (kind === 'image') {
    const url = `data:image/png;base64,${PNG_BASE64}`;
    const anthropicImage = {
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 },
    };
    return [
      () => ({
        step: { imageCheck: true },
        anthropic: {
          messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe it.' }, anthropicImage] }],
        },
        chat: {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Describe it.' },
                { type: 'image_url', image_url: { url } },
              ],
            },
          ],
        },
        expect: { text: 'image-check: 1 image (image/png)', stop: 'end_turn' },
      }),
    ];
  }
  const anthropicTools = [
    { name: WEATHER.name, description: WEATHER.description, input_schema: WEATHER.schema },
  ];
  const chatTools = [
    {
      type: 'function',
      function: { name: WEATHER.name, description: WEATHER.description, parameters: WEATHER.schema },
    },
  ];
  return [
    () => ({
      step: { toolCalls: 1 },
      anthropic: { system: SYSTEM, tools: anthropicTools, messages: [userText(ASK_WEATHER)] },
      chat: {
        tools: chatTools,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: ASK_WEATHER },
        ],
      },
      // the fake fills required string properties with "<name>-value"
      expect: { tool: { name: WEATHER.name, input: { city: 'city-value' } }, stop: 'tool_use' },
    }),
    (call) => {
      assert.ok(call, 'the second tool turn needs the first turn’s tool call');
      return {
        step: {},
        anthropic: {
          system: SYSTEM,
          tools: anthropicTools,
          messages: [
            userText(ASK_WEATHER),
            { role: 'assistant', content: [{ type: 'tool_use', ...call }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: TOOL_RESULT }] },
          ],
        },
        chat: {
          tools: chatTools,
          messages: [
            { role: 'system', content: SYSTEM },
            { role: 'user', content: ASK_WEATHER },
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: JSON.stringify(call.input) },
                },
              ],
            },
            { role: 'tool', tool_call_id: call.id, content: TOOL_RESULT },
          ],
        },
        expect: { text: `Tool result received: ${TOOL_RESULT}`, stop: 'end_turn' },
      };
    },
  ];
}

/** Resets the fake and queues this turn's reply. */
export function scriptFake(stack: GatewayStack, turn: TurnSpec): void {
  stack.fake.reset();
  stack.fake.script([{ ...turn.step, usage: USAGE }]);
}

/**
 * The one request the fake received: path, provider key (and nothing of the client's token), and a body
 * deep-equal to `body`. `anthropicVersion` is the header an Anthropic upstream must get.
 */
export function checkUpstream(
  stack: GatewayStack,
  p: MatrixProvider,
  body: unknown,
  anthropicVersion?: string,
): void {
  assert.equal(stack.fake.requests.length, 1, 'exactly one upstream request');
  const [got] = stack.fake.requests;
  assert.equal(got.method, 'POST');
  assert.equal(got.path, p.path);
  assert.equal(got.headers[p.auth[0]], p.auth[1]);
  if (p.wire === 'anthropic') {
    assert.equal(got.headers.authorization, undefined, 'no Authorization header to Anthropic');
    assert.equal(got.headers['anthropic-version'], anthropicVersion);
  } else assert.equal(got.headers['x-api-key'], undefined, 'no x-api-key to an OpenAI-wire upstream');
  const everything = JSON.stringify([got.headers, got.body]);
  assert.ok(!everything.includes(stack.token), 'the gateway token reached the provider');
  assert.ok(!everything.includes(stack.keyId), 'the gateway key id reached the provider');
  assert.deepEqual(got.body, body);
}

/** Cost of USAGE on `p` from the price table, formatted as the trace store stamps it (≥ 6 decimals). */
export function expectedCostUsd(p: MatrixProvider): string {
  const { prices } = p;
  const nanoUsd =
    BigInt(USAGE.input) * prices.input +
    BigInt(USAGE.cacheRead) * prices.cache_read +
    BigInt(USAGE.cacheWrite) * prices.cache_write +
    BigInt(USAGE.output) * prices.output;
  const digits = nanoUsd.toString().padStart(10, '0');
  return `${digits.slice(0, -9)}.${digits.slice(-9).replace(/0{1,3}$/, '')}`;
}

export interface TraceExpectation {
  p: MatrixProvider;
  shape: Wire;
  requestedModel: string;
  keyId: string;
  stopReason: string;
  stream: boolean;
}

/** The turn's events: one each of route.decided, llm.call_started, llm.call_completed, turn.completed. */
export function checkTrace(db: string, turnId: string | null, x: TraceExpectation): void {
  assert.match(String(turnId), /^[0-9A-HJKMNP-TV-Z]{26}$/, 'svc-request-id is a ULID');
  const events = readEvents(db).filter((e) => e.turn_id === turnId);
  assert.deepEqual(
    events.map((e) => e.type),
    ['route.decided', 'llm.call_started', 'llm.call_completed', 'turn.completed'],
  );
  const [route, started, completed, turn] = events.map((e) => e.payload);
  const who = { requested_model: x.requestedModel, inbound_shape: x.shape, gateway_key_id: x.keyId };
  const routed = { ...who, model: x.p.model, provider: x.p.provider };
  const cost = expectedCostUsd(x.p);
  assert.deepEqual(pick(route, ['chosen_model', ...Object.keys(who)]), { chosen_model: x.p.model, ...who });
  assert.deepEqual(pick(started, [...Object.keys(routed), 'stream']), { ...routed, stream: x.stream });
  assert.deepEqual(
    pick(completed, [
      ...Object.keys(routed),
      'cost_usd',
      'input_tokens',
      'output_tokens',
      'cached_input_tokens',
      'cache_creation_input_tokens',
      'stop_reason',
      'error_class',
      'attempts',
    ]),
    {
      ...routed,
      cost_usd: cost,
      input_tokens: USAGE.input, // uncached only
      output_tokens: USAGE.output,
      cached_input_tokens: USAGE.cacheRead,
      cache_creation_input_tokens: USAGE.cacheWrite,
      stop_reason: x.stopReason,
      error_class: null,
      attempts: 1,
    },
  );
  assert.deepEqual(pick(turn, [...Object.keys(routed), 'status', 'error_code', 'cost_usd']), {
    ...routed,
    status: 200,
    error_code: null,
    cost_usd: cost,
  });
}

// --- internal ---

function userText(text: string): Record<string, unknown> {
  return { role: 'user', content: [{ type: 'text', text }] };
}

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, o[k]]));
}

/**
 * The request decoders read a common block as it is after a hand-written check of what its valibot schema
 * takes, and parse any other (issue 13's CPU cuts: 433426c, 38f9ca2, 46d29be, 5ffa6c7, 269922e). Each hand
 * check here meets hundreds of variants of its blocks, built from the schema's own entries (schema-variants.ts:
 * a field the schema gains is varied too), in every place the decoder reads such a block, and must give what
 * the schema gives: the same 400 in the same words for a block the schema refuses, and for one it takes the
 * canonical request the slow path gives (the decoder fed the schema's parse of the block, which the same code
 * reads), key order included. The schema's own parse runs are counted to tell the paths apart: a block read as
 * it is must be one the schema takes, and every block the schema takes is read as it is but for the kinds the
 * hand check leaves to the schema on purpose (`parsed`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type { CanonicalRequest } from '#src/canonical/request.ts';
import * as anthropicSchemas from '#src/gateway/shapes/anthropic/schema.ts';
import * as openaiSchemas from '#src/gateway/shapes/openai/schema.ts';
import * as responsesSchemas from '#src/gateway/shapes/responses/schema.ts';
import { parseOrThrow } from '#src/gateway/shapes/shape.ts';
import { anthropicShape, openaiShape, responsesShape } from '#src/gateway/shapes/shapes.ts';
import { isSvcError } from '#src/lib/errors.ts';
import { blockVariants, type SchemaNode, vocabularyOf } from './schema-variants.ts';

type Block = Record<string, unknown>;
type Schema = SchemaNode & Parameters<typeof parseOrThrow>[0];

/** One place a decoder reads such a block: the body around it, the 400's path to it, which blocks get there. */
interface Place {
  name: string;
  body: (block: unknown) => unknown;
  at: string;
  /** The block gets to the hand check here (the request's own schema and the decoder's switch let it by). */
  reaches: (block: Block) => boolean;
}

interface FastPath {
  /** The hand check in decode.ts. */
  check: string;
  /** Its schema, by its export name in `schemas`. */
  schema: string;
  schemas: Record<string, unknown>;
  decode: (body: unknown) => CanonicalRequest;
  places: Place[];
  /** Real blocks of every form the wire has, the variants' starting points. */
  seeds: Block[];
  /** Blocks the schema takes that the hand check leaves to it on purpose (their decode reads its copy). */
  parsed?: (block: Block) => boolean;
}

const isBlock = (value: unknown): value is Block =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const typed =
  (...types: unknown[]) =>
  (b: Block) =>
    types.includes(b.type);
const anyType = (b: Block) => typeof b.type === 'string';

const messages = (role: string) => (block: unknown) => ({
  model: 'claude-x',
  max_tokens: 10,
  messages: [{ role, content: [block] }],
});
const inToolResult = (block: unknown) =>
  messages('user')({ type: 'tool_result', tool_use_id: 't', content: [block] });
const anthropic = { schemas: anthropicSchemas, decode: (body: unknown) => anthropicShape.decode(body) };
const cacheControls = [{ type: 'ephemeral', ttl: '1h' }, { type: 'ephemeral' }, null];

const input = (item: unknown) => ({ model: 'gpt-x', input: [item] });
const responses = { schemas: responsesSchemas, decode: (body: unknown) => responsesShape.decode(body) };
const call = (type: string) => (b: Block) => b.type === type;
const IMAGE = 'https://example.com/cat.png';

const chat = (role: string) => (part: unknown) => ({
  model: 'gpt-x',
  messages: [{ role, content: [part], ...(role === 'tool' ? { tool_call_id: 't' } : {}) }],
});

const FAST_PATHS: FastPath[] = [
  {
    check: 'anthropic isPlainText',
    schema: 'TextBlockSchema',
    ...anthropic,
    places: [
      { name: 'user turn', body: messages('user'), at: 'messages.0.content.0', reaches: typed('text') },
      {
        name: 'tool result',
        body: inToolResult,
        at: 'messages.0.content.0.content.0',
        reaches: typed('text'),
      },
    ],
    seeds: [
      { type: 'text', text: 'hi' },
      {
        type: 'text',
        text: 'cited',
        cache_control: cacheControls[0],
        citations: [{ type: 'char_location', cited_text: 'c', document_index: 0, start_char_index: 0 }],
      },
      { type: 'text', text: '', cache_control: cacheControls[1], citations: null },
    ],
  },
  {
    check: 'anthropic isPlainToolUse',
    schema: 'ToolUseBlockSchema',
    ...anthropic,
    places: [
      {
        name: 'assistant turn',
        body: messages('assistant'),
        at: 'messages.0.content.0',
        reaches: typed('tool_use'),
      },
    ],
    seeds: [
      {
        type: 'tool_use',
        id: 'toolu_1',
        name: 'Bash',
        input: { command: 'ls', args: ['-l'], env: { A: null } },
      },
      {
        type: 'tool_use',
        id: 'toolu_2',
        name: 'Read',
        input: {},
        cache_control: cacheControls[1],
        caller: {},
      },
    ],
    // the record's copy leaves these names out and reads a list as an object of indexes
    parsed: (b) =>
      Array.isArray(b.input) ||
      (isBlock(b.input) &&
        ['__proto__', 'prototype', 'constructor'].some((k) => Object.hasOwn(b.input as Block, k))),
  },
  {
    check: 'anthropic isPlainToolResult',
    schema: 'ToolResultBlockSchema',
    ...anthropic,
    places: [
      {
        name: 'user turn',
        body: messages('user'),
        at: 'messages.0.content.0',
        reaches: typed('tool_result'),
      },
    ],
    seeds: [
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'out', is_error: false },
      { type: 'tool_result', tool_use_id: 'toolu_2', cache_control: cacheControls[0] },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_3',
        is_error: true,
        content: [
          { type: 'text', text: 'a' },
          { type: 'image', source: { type: 'url', url: IMAGE } },
        ],
      },
    ],
    parsed: (b) => Array.isArray(b.content),
  },
  {
    check: 'responses isPlainMessage',
    schema: 'MessageItemSchema',
    ...responses,
    places: [
      {
        name: 'input',
        body: input,
        at: 'input.0',
        reaches: (b) => b.type === undefined || b.type === 'message',
      },
    ],
    seeds: [
      { role: 'user', content: 'hi' },
      { role: 'developer', content: [{ type: 'input_text', text: 'rules' }] },
      {
        type: 'message',
        role: 'assistant',
        id: 'msg_1',
        content: [
          { type: 'output_text', text: 'a', annotations: [] },
          { type: 'refusal', refusal: 'no' },
        ],
      },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'x', prompt_cache_breakpoint: { mode: 'explicit' } },
          { type: 'input_image', image_url: IMAGE, detail: 'low' },
        ],
      },
    ],
    // a part other than text is kept raw as the schema's copy wrote it
    parsed: (b) =>
      Array.isArray(b.content) &&
      !b.content.every(
        (p) =>
          isBlock(p) && (p.type === 'input_text' || p.type === 'output_text') && typeof p.text === 'string',
      ),
  },
  {
    check: 'responses isPlainCall (arguments)',
    schema: 'FunctionCallSchema',
    ...responses,
    places: [{ name: 'input', body: input, at: 'input.0', reaches: call('function_call') }],
    seeds: [
      {
        type: 'function_call',
        call_id: 'call_1',
        name: 'shell',
        arguments: '{"cmd":"ls"}',
        id: 'fc_1',
        status: 'completed',
      },
      { type: 'function_call', call_id: 'call_2', name: 'exec', namespace: 'tools', arguments: '' },
    ],
  },
  {
    check: 'responses isPlainCall (input)',
    schema: 'CustomToolCallSchema',
    ...responses,
    places: [{ name: 'input', body: input, at: 'input.0', reaches: call('custom_tool_call') }],
    seeds: [
      {
        type: 'custom_tool_call',
        call_id: 'call_3',
        name: 'apply_patch',
        input: '*** Begin Patch',
        id: 'ctc_1',
      },
      { type: 'custom_tool_call', call_id: 'call_4', name: 'exec', namespace: 'code', input: '' },
    ],
  },
  ...(['function_call_output', 'custom_tool_call_output'] as const).map(
    (type): FastPath => ({
      check: `responses isPlainOutput (${type})`,
      schema: type === 'function_call_output' ? 'FunctionCallOutputSchema' : 'CustomToolCallOutputSchema',
      ...responses,
      places: [{ name: 'input', body: input, at: 'input.0', reaches: call(type) }],
      seeds: [
        { type, call_id: 'call_1', output: 'ok' },
        {
          type,
          call_id: 'call_2',
          id: 'out_1',
          status: 'completed',
          output: [
            { type: 'input_text', text: 'a' },
            { type: 'input_image', image_url: IMAGE },
          ],
        },
      ],
      parsed: (b) => Array.isArray(b.output),
    }),
  ),
  {
    check: 'responses isPlainReasoning',
    schema: 'ReasoningItemSchema',
    ...responses,
    places: [{ name: 'input', body: input, at: 'input.0', reaches: call('reasoning') }],
    seeds: [
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA123' },
      {
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 't' }, { type: 'summary_text' }],
        content: [{ type: 'reasoning_text', text: 'd' }],
        encrypted_content: null,
      },
      { type: 'reasoning', content: null },
    ],
  },
  {
    check: 'responses textOf',
    schema: 'InputTextSchema',
    ...responses,
    places: [
      {
        name: 'user message with an image',
        body: (part) => input({ role: 'user', content: [part, { type: 'input_image', image_url: IMAGE }] }),
        at: 'input.0.content.0',
        reaches: typed('input_text', 'output_text'),
      },
      {
        name: 'assistant message with a refusal',
        body: (part) => input({ role: 'assistant', content: [part, { type: 'refusal', refusal: 'no' }] }),
        at: 'input.0.content.0',
        reaches: (b) => anyType(b) && b.type !== 'refusal',
      },
      {
        name: 'call output of parts',
        body: (part) => input({ type: 'function_call_output', call_id: 'c', output: [part] }),
        at: 'input.0.output.0',
        reaches: typed('input_text', 'output_text'),
      },
    ],
    seeds: [
      { type: 'input_text', text: 'a' },
      {
        type: 'output_text',
        text: '',
        annotations: [],
        prompt_cache_breakpoint: { mode: 'explicit', ttl: '12h' },
      },
    ],
  },
  {
    check: 'openai textOf',
    schema: 'TextPartSchema',
    schemas: openaiSchemas,
    decode: (body) => openaiShape.decode(body),
    places: [
      ...['system', 'tool'].map((role) => ({
        name: `${role} message`,
        body: chat(role),
        at: 'messages.0.content.0',
        reaches: anyType,
      })),
      ...['user', 'assistant'].map((role) => ({
        name: `${role} message`,
        body: chat(role),
        at: 'messages.0.content.0',
        reaches: typed('text'),
      })),
    ],
    seeds: [
      { type: 'text', text: 'hi' },
      { type: 'text', text: '', cache_control: { type: 'ephemeral', ttl: '5m' } },
      { type: 'text', text: 'x', prompt_cache_breakpoint: { mode: 'explicit' } },
    ],
  },
];

/** Every name a schema under test has: each block also meets the others' fields as unknown keys. */
const NEIGHBOUR_KEYS = [
  'extra',
  ...new Set(
    FAST_PATHS.flatMap((f) => Object.keys((f.schemas[f.schema] as SchemaNode | undefined)?.entries ?? {})),
  ),
];

/** A decode's outcome: the canonical request, or the error's code and words. */
function outcome(
  run: () => unknown,
): { value: unknown } | { code: string; message: string } | { crash: string } {
  try {
    return { value: run() };
  } catch (err) {
    return isSvcError(err) ? { code: err.code, message: err.message } : { crash: String(err) };
  }
}

/** Counts the schema's parse runs while `run` runs (the slow path parses the block with it). */
function countingRuns<T>(schema: SchemaNode, run: () => T): { runs: number; result: T } {
  const node = schema as SchemaNode & { '~run': (...args: unknown[]) => unknown };
  const own = node['~run'];
  let runs = 0;
  node['~run'] = function (this: unknown, ...args: unknown[]) {
    runs++;
    return own.apply(this, args);
  };
  try {
    const result = run();
    return { runs, result };
  } finally {
    node['~run'] = own;
  }
}

for (const fast of FAST_PATHS) {
  test(`${fast.check} takes as it is exactly the blocks ${fast.schema} takes, and decodes them as its parse does`, () => {
    const schema = fast.schemas[fast.schema] as Schema | undefined;
    assert.ok(schema, `${fast.schema} is not exported by the schema module of ${fast.check}`);
    assert.ok(schema.entries, `${fast.schema} has no entries to vary`);
    const blocks = blockVariants(schema, fast.seeds, {
      depth: 3,
      vocabulary: vocabularyOf(fast.seeds),
      extraKeys: NEIGHBOUR_KEYS,
    });
    const failures: unknown[] = [];
    // thousands of 400s: their stacks are not read
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      for (const place of fast.places) failures.push(...placeFailures(fast, schema, place, blocks));
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    assert.deepStrictEqual(failures.slice(0, 3), [], `${failures.length} blocks went otherwise`);
  });
}

/** The blocks that reach the hand check in `place` and go otherwise than the schema says. */
function placeFailures(fast: FastPath, schema: Schema, place: Place, blocks: unknown[]): unknown[] {
  const failures: unknown[] = [];
  let asIs = 0;
  let refused = 0;
  for (const block of blocks) {
    if (!isBlock(block) || !place.reaches(block)) continue;
    const parse = outcome(() => parseOrThrow(schema, block, place.at));
    const takes = 'value' in parse;
    // the slow path: the decoder reading the schema's copy of the block, or the schema's 400
    const expected = takes ? outcome(() => fast.decode(place.body(parse.value))) : parse;
    const { runs, result: actual } = countingRuns(schema, () =>
      outcome(() => fast.decode(place.body(block))),
    );
    const readAsIs = runs === 0;
    if (readAsIs) asIs++;
    if (!takes) refused++;
    const wrong = (what: string) => failures.push({ place: place.name, what, block, actual, expected });
    if (readAsIs && !takes) wrong(`read as it is, though ${fast.schema} refuses it`);
    else if (!readAsIs && takes && !fast.parsed?.(block))
      wrong(`parsed, though ${fast.schema} takes it and the hand check does not leave it to the schema`);
    else if (JSON.stringify(actual) !== JSON.stringify(expected) || !isDeepStrictEqual(actual, expected))
      wrong('decoded otherwise than the slow path');
  }
  // both paths met in every place: the variants get to the hand check there
  assert.ok(
    asIs > 0 && refused > 0,
    `${fast.check} in ${place.name}: ${asIs} read as is, ${refused} refused`,
  );
  return failures;
}

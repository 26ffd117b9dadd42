/**
 * The gateway's memory of its own Responses answers on translated models (stored-responses.ts): a
 * follow-up's previous_response_id and item_reference are spelled out, store: false keeps nothing, and the
 * oldest conversations go first once the size bound is reached.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { droppedParams } from '#src/gateway/dropped-params.ts';
import {
  createStoredResponses,
  expandedItemNames,
  inputItems,
  withSignatures,
} from '#src/gateway/shapes/responses/stored-responses.ts';

const answer = (id: string, text: string) => ({
  id,
  object: 'response',
  store: true,
  output: [
    { id: `msg_${id}_0`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] },
  ],
});

test('previous_response_id brings the earlier input and output before the new input; a chain stays whole', () => {
  const kept = createStoredResponses();
  kept.remember(answer('resp_1', 'Hi Ada'), inputItems({ input: 'my name is Ada' }), 'gk_a');
  const next = kept.expand({ model: 'haiku', input: 'and then?', previous_response_id: 'resp_1' }, 'gk_a');
  assert.equal(next.previous_response_id, undefined);
  assert.deepEqual(
    (next.input as Array<{ role?: string; type?: string }>).map((i) => i.role),
    ['user', 'assistant', 'user'],
  );
  kept.remember(answer('resp_2', 'Then tea'), next.input as unknown[], 'gk_a');
  const third = kept.expand(
    {
      model: 'haiku',
      input: [{ role: 'user', content: 'and now?' }],
      previous_response_id: 'resp_2',
    },
    'gk_a',
  );
  assert.equal((third.input as unknown[]).length, 5);
});

test('an item_reference becomes the stored item; what is not kept is left for the 400', () => {
  const kept = createStoredResponses();
  kept.remember(answer('resp_1', 'Hi Ada'), [], 'gk_a');
  const body = {
    model: 'haiku',
    input: [
      { type: 'item_reference', id: 'msg_resp_1_0' },
      { role: 'user', content: 'x' },
    ],
  };
  const expanded = kept.expand(body, 'gk_a');
  assert.equal((expanded.input as Array<{ type: string }>)[0]!.type, 'message');
  const unknown = { model: 'haiku', input: [{ type: 'item_reference', id: 'msg_other' }] };
  assert.equal(kept.expand(unknown, 'gk_a'), unknown);
  const missing = { model: 'haiku', input: 'x', previous_response_id: 'resp_gone' };
  assert.equal(kept.expand(missing, 'gk_a'), missing);
});

test('store: false keeps nothing; the oldest go first past the size bound', () => {
  const kept = createStoredResponses(4_000);
  kept.remember({ ...answer('resp_x', 'secret'), store: false }, [], 'gk_a');
  assert.equal(kept.bytes, 0);
  for (let i = 0; i < 20; i++) kept.remember(answer(`resp_${i}`, 'x'.repeat(200)), [], 'gk_a');
  assert.ok(kept.bytes <= 4_000);
  const oldest = { input: 'a', previous_response_id: 'resp_0' };
  assert.equal(kept.expand(oldest, 'gk_a'), oldest);
  assert.notEqual(kept.expand({ input: 'a', previous_response_id: 'resp_19' }, 'gk_a').input, 'a');
  // one answer larger than a quarter of the bound is not kept at all
  kept.remember(answer('resp_big', 'y'.repeat(2_000)), [], 'gk_a');
  const big = { input: 'a', previous_response_id: 'resp_big' };
  assert.equal(kept.expand(big, 'gk_a'), big);
});

test('what is kept asks for reasoning signatures, whatever the client asked', () => {
  assert.deepEqual(withSignatures({ include: ['file_search_call.results'] }).include, [
    'file_search_call.results',
    'reasoning.encrypted_content',
  ]);
  const already = { include: ['reasoning.encrypted_content'] };
  assert.equal(withSignatures(already), already);
});

test('an answer belongs to the key that asked for it: another key naming it finds nothing', () => {
  const kept = createStoredResponses();
  kept.remember(answer('resp_1', 'secret of A'), inputItems({ input: 'A asks' }), 'gk_a');
  const byB = { model: 'haiku', input: 'and?', previous_response_id: 'resp_1' };
  assert.equal(kept.expand(byB, 'gk_b'), byB);
  const refByB = { model: 'haiku', input: [{ type: 'item_reference', id: 'msg_resp_1_0' }] };
  assert.equal(kept.expand(refByB, 'gk_b'), refByB);
});

test("for an OpenAI model the kept items go in without this gateway's ids and without reasoning items or a Claude model's web searches", () => {
  const kept = createStoredResponses();
  const withReasoning = {
    ...answer('resp_1', 'Hi'),
    output: [
      { id: 'rs_resp_1_0', type: 'reasoning', summary: [], encrypted_content: 'anthropic-signature' },
      {
        id: 'ws_resp_1_1',
        type: 'web_search_call',
        status: 'completed',
        action: { type: 'search', query: 'greetings' },
      },
      {
        id: 'msg_resp_1_1',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Hi' }],
      },
    ],
  };
  kept.remember(withReasoning, inputItems({ input: 'hello' }), 'gk_a');
  const body = kept.expand({ model: 'gpt-5', input: 'and?', previous_response_id: 'resp_1' }, 'gk_a', true);
  assert.deepEqual(body.input, [
    { role: 'user', content: 'hello' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi' }] },
    { role: 'user', content: 'and?' },
  ]);
});

test("a previous response not kept here stays as named while this key's item references are still spelled out", () => {
  const kept = createStoredResponses();
  kept.remember(answer('resp_1', 'Hi'), [], 'gk_a');
  const body = {
    model: 'gpt-5',
    previous_response_id: 'resp_stored_by_openai',
    input: [{ type: 'item_reference', id: 'msg_resp_1_0' }],
  };
  const expanded = kept.expand(body, 'gk_a');
  assert.equal(expanded.previous_response_id, 'resp_stored_by_openai');
  assert.equal((expanded.input as Array<{ type: string }>)[0]!.type, 'message');
});

test("an OpenAI model's answer is kept under OpenAI's id: spelled out for another model, named as sent to OpenAI", () => {
  const kept = createStoredResponses();
  const openai = {
    ...answer('resp_oa', 'Found it'),
    status: 'completed',
    output: [
      { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'q' } },
      ...answer('resp_oa', 'Found it').output,
    ],
  };
  kept.remember(openai, inputItems({ input: 'search' }), 'gk_a', 'openai');
  const body = {
    input: [
      { role: 'user', content: 'and?' },
      { type: 'item_reference', id: 'msg_resp_oa_0' },
    ],
    previous_response_id: 'resp_oa',
  };
  // to OpenAI, which has them: as sent
  assert.equal(kept.expand(body, 'gk_a', true), body);
  // to another model: the turns as they were, without the hosted search
  const types = (kept.expand(body, 'gk_a').input as Array<{ type?: string; role?: string }>).map(
    (i) => i.type ?? i.role,
  );
  assert.deepEqual(types, ['user', 'message', 'user', 'message']);
  // a response that did not finish is not kept
  kept.remember({ ...answer('resp_failed', 'x'), status: 'failed' }, [], 'gk_a', 'openai');
  const failed = { input: 'a', previous_response_id: 'resp_failed' };
  assert.equal(kept.expand(failed, 'gk_a'), failed);
});

test('an OpenAI answer kept as its request and answer texts expands like a parsed one, weighed by their lengths', () => {
  const kept = createStoredResponses();
  const requestText = JSON.stringify({ model: 'openai:gpt-5-mini', input: 'my name is Ada' });
  const answerText = JSON.stringify(answer('resp_o1', 'Hi Ada'));
  kept.keepText(JSON.parse(answerText), requestText, answerText, 'gk_a');
  assert.equal(kept.bytes, requestText.length + answerText.length);
  // on another model the earlier turns are spelled out from the texts
  const next = kept.expand({ model: 'haiku', input: 'and then?', previous_response_id: 'resp_o1' }, 'gk_a');
  assert.deepEqual(next.input, [
    { role: 'user', content: 'my name is Ada' },
    {
      id: 'msg_resp_o1_0',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Hi Ada' }],
    },
    { role: 'user', content: 'and then?' },
  ]);
  // an item_reference to its message, for the key that asked only; OpenAI's own stay named to OpenAI
  const ref = { model: 'haiku', input: [{ type: 'item_reference', id: 'msg_resp_o1_0' }] };
  assert.equal((kept.expand(ref, 'gk_a').input as Array<{ type: string }>)[0].type, 'message');
  assert.equal(kept.expand(ref, 'gk_b'), ref);
  assert.equal(kept.expand(ref, 'gk_a', true), ref);
  assert.deepEqual(kept.foreign(ref, 'gk_b'), { param: 'input', id: 'msg_resp_o1_0' });
  // store: false and an unfinished answer keep nothing
  kept.keepText({ ...answer('resp_o2', 'x'), store: false }, requestText, answerText, 'gk_a');
  kept.keepText({ ...answer('resp_o3', 'x'), status: 'failed' }, requestText, answerText, 'gk_a');
  const none = { model: 'haiku', input: 'x', previous_response_id: 'resp_o2' };
  assert.equal(kept.expand(none, 'gk_a'), none);
  assert.equal(
    kept.expand({ ...none, previous_response_id: 'resp_o3' }, 'gk_a').previous_response_id,
    'resp_o3',
  );
});

test("a streamed OpenAI answer kept as its terminal frame's text expands like the answer it carries", () => {
  const kept = createStoredResponses();
  const requestText = JSON.stringify({ model: 'openai:gpt-5-mini', input: 'my name is Ada', stream: true });
  const response = answer('resp_s1', 'Hi Ada');
  const frameText = JSON.stringify({ type: 'response.completed', sequence_number: 9, response });
  kept.keepText(response, requestText, frameText, 'gk_a');
  assert.equal(kept.bytes, requestText.length + frameText.length);
  const next = kept.expand({ model: 'haiku', input: 'and then?', previous_response_id: 'resp_s1' }, 'gk_a');
  assert.deepEqual(next.input, [
    { role: 'user', content: 'my name is Ada' },
    ...response.output,
    { role: 'user', content: 'and then?' },
  ]);
  const ref = { model: 'haiku', input: [{ type: 'item_reference', id: 'msg_resp_s1_0' }] };
  assert.deepEqual(kept.expand(ref, 'gk_a').input, response.output);
});

test("a follow-up's trimmed cache breakpoints are named, those of its earlier turns as previous_response_id.input.N", () => {
  const kept = createStoredResponses();
  const marked = (text: string) => ({
    role: 'user',
    content: [{ type: 'input_text', text, prompt_cache_breakpoint: { mode: 'explicit' } }],
  });
  // three breakpoints in turn 1, three in the follow-up: Claude takes four, the two earliest are left out
  const first = { model: 'haiku', input: [marked('a'), marked('b'), marked('c')] };
  kept.remember(answer('resp_1', 'ok'), inputItems(first), 'gk_a');
  const follow = {
    model: 'haiku',
    input: [marked('d'), marked('e'), marked('f')],
    previous_response_id: 'resp_1',
  };
  const whole = kept.expand(follow, 'gk_a');
  assert.deepEqual(expandedItemNames(whole), [
    'previous_response_id.input.0',
    'previous_response_id.input.1',
    'previous_response_id.input.2',
    'previous_response_id.input.3',
    'input.0',
    'input.1',
    'input.2',
  ]);
  assert.deepEqual(droppedParams(follow, 'openai_responses', 'anthropic', 'claude-haiku-4-5', whole), [
    'previous_response_id.input.0.content.0.prompt_cache_breakpoint',
    'previous_response_id.input.1.content.0.prompt_cache_breakpoint',
  ]);
  // an item_reference that spells out to nothing (a hosted search's call) leaves the client's numbering as sent
  kept.remember(
    {
      ...answer('resp_2', 'x'),
      output: [{ id: 'ws_2', type: 'web_search_call', status: 'completed', action: { type: 'search' } }],
    },
    [],
    'gk_a',
  );
  const referenced = {
    model: 'haiku',
    input: [{ type: 'item_reference', id: 'ws_2' }, ...['g', 'h', 'i', 'j', 'k'].map(marked)],
  };
  const spelled = kept.expand(referenced, 'gk_a');
  assert.equal((spelled.input as unknown[]).length, 5);
  assert.deepEqual(droppedParams(referenced, 'openai_responses', 'anthropic', 'claude-haiku-4-5', spelled), [
    'input.1.content.0.prompt_cache_breakpoint',
  ]);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSvcError } from '#src/lib/errors.ts';
import { assertJsonDepth, findTooDeep, MAX_JSON_DEPTH } from '#src/lib/json-depth.ts';

function deepObject(levels: number): unknown {
  return JSON.parse(`${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`);
}

test('the body itself is level 1: a flat object and scalars are within any bound', () => {
  assert.equal(findTooDeep({ a: 1, b: 'x' }, 1), undefined);
  assert.equal(findTooDeep('text', 0), undefined);
  assert.equal(findTooDeep(null, 0), undefined);
  assert.equal(findTooDeep(42), undefined);
});

test('nesting exactly at the bound passes and one level more names the path to the extra level', () => {
  assert.equal(findTooDeep(deepObject(MAX_JSON_DEPTH)), undefined);
  assert.match(findTooDeep(deepObject(MAX_JSON_DEPTH + 1))!, /^a\.a\.a/);
  assert.equal(findTooDeep({ a: { b: [1, { c: {} }] } }, 3), 'a.b[1]');
  assert.equal(findTooDeep({ a: { b: [1, { c: {} }] } }, 4), 'a.b[1].c');
  assert.equal(findTooDeep({ a: { b: [1, { c: {} }] } }, 5), undefined);
});

test('the path names the field in the request: tools, messages, content blocks', () => {
  const body = {
    model: 'm',
    messages: [
      { role: 'user', content: 'hi' },
      {},
      { role: 'assistant', content: [{ input: deepObject(300) }] },
    ],
  };
  assert.match(findTooDeep(body)!, /^messages\[2\]\.content\[0\]\.input\.a\.a/);
  const tools = { tools: [{ name: 't', input_schema: deepObject(5_000) }] };
  assert.match(findTooDeep(tools)!, /^tools\[0\]\.input_schema\.a/);
});

test('the first too-deep container in document order is named, whichever comes later is not', () => {
  const body = { first: deepObject(10), second: deepObject(10) };
  assert.match(findTooDeep(body, 5)!, /^first\./);
});

test('a root array is named body, odd keys are quoted, long keys and paths are cut', () => {
  assert.equal(findTooDeep([[[]]], 2), 'body[0][0]');
  assert.equal(findTooDeep({ 'a b': { '0': {} } }, 2), '["a b"]["0"]');
  const long = 'k'.repeat(1_000);
  const named = findTooDeep({ [long]: { x: {} } }, 2)!;
  assert.ok(named.length < 100, named);
  assert.ok(named.startsWith(`${'k'.repeat(40)}…`), named);
  const path = findTooDeep(deepObject(100_000))!;
  assert.ok(path.length < 100 && path.endsWith('…'), path);
});

test('100,000 nested arrays and objects are walked without recursion', () => {
  const arrays = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
  assert.ok(findTooDeep(arrays, 100_000) === undefined);
  assert.ok(findTooDeep(arrays)!.startsWith('body[0][0]'));
  assert.equal(findTooDeep(deepObject(100_000), 100_000), undefined);
});

test('wide bodies are walked fully: a deep value after many siblings is found', () => {
  const wide: unknown[] = Array.from({ length: 50_000 }, (_, i) => ({ i, s: 'x' }));
  wide.push(deepObject(300));
  assert.match(findTooDeep({ messages: wide })!, /^messages\[50000\]\.a/);
});

test('assertJsonDepth throws 400 invalid_request naming the field and the limit', () => {
  assert.doesNotThrow(() => assertJsonDepth({ a: [1, 2, { b: 'c' }] }));
  assert.throws(
    () => assertJsonDepth({ tools: [{ input_schema: deepObject(5_000) }] }),
    (err) => {
      assert.ok(isSvcError(err));
      assert.equal(err.code, 'invalid_request');
      assert.equal(err.status, 400);
      assert.match(err.message, /^tools\[0\]\.input_schema\..*256 levels/);
      assert.equal(err.details?.max_depth, 256);
      return true;
    },
  );
});

test('given the text it was parsed from, the check answers as the walk does on both sides of the bound', () => {
  const check = (text: string, maxDepth?: number): string | undefined => {
    try {
      assertJsonDepth(JSON.parse(text), maxDepth, text);
      return undefined;
    } catch (err) {
      assert.ok(isSvcError(err));
      return err.message;
    }
  };
  const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
  assert.equal(check(nested(MAX_JSON_DEPTH)), undefined);
  assert.match(check(nested(MAX_JSON_DEPTH + 1))!, /^a\.a\.a.*256 levels/);
  // brackets inside strings count toward the quick bound only: a flat body full of them passes
  assert.equal(check(JSON.stringify({ text: '{['.repeat(1_000), list: [[{}]] })), undefined);
  // and a deep body is still found among them, at the same path
  const mixed = `{"note":"${'{'.repeat(300)}","tools":[{"input_schema":${nested(300)}}]}`;
  assert.match(check(mixed)!, /^tools\[0\]\.input_schema\.a\.a/);
  assert.equal(check('[[[]]]', 3), undefined);
  assert.equal(
    check('[[[]]]', 2),
    "body[0][0]: JSON nested deeper than 2 levels, the gateway's limit for a request body",
  );
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  insertJsonMember,
  locateJsonValues,
  removeJsonMember,
  replaceJsonValue,
  rewriteModel,
} from '#src/lib/json-splice.ts';

test('replaceJsonValue swaps only the top-level model, leaving nested "model" keys and strings alone', () => {
  const text =
    '{"messages":[{"role":"user","content":"say \\"model\\": x","model":"inner"}], "model" : "alias" ,"n":1}';
  const out = replaceJsonValue(text, ['model'], '"claude-x"')!;
  const parsed = JSON.parse(out);
  assert.equal(parsed.model, 'claude-x');
  assert.equal(parsed.messages[0].model, 'inner');
  assert.equal(parsed.messages[0].content, 'say "model": x');
});

test('a duplicated model key is replaced at every occurrence, so no parser sees the client value', () => {
  const out = replaceJsonValue('{"model":"a","x":{"y":[1,2,{"z":"}"}]},"model":"b"}', ['model'], '"up"')!;
  assert.equal(out, '{"model":"up","x":{"y":[1,2,{"z":"}"}]},"model":"up"}');
});

test('nested paths are located (message_start message.model)', () => {
  const data = '{"type":"message_start","message":{"id":"m","model":"claude-x","usage":{"input_tokens":1}}}';
  assert.equal(JSON.parse(replaceJsonValue(data, ['message', 'model'], '"alias"')!).message.model, 'alias');
  assert.equal(locateJsonValues(data, ['nope']).length, 0);
});

test('strings with escaped backslashes before quotes are skipped correctly', () => {
  const text = '{"a":"x\\\\","model":"m","b":"\\\\\\"q"}';
  assert.equal(JSON.parse(replaceJsonValue(text, ['model'], '"n"')!).model, 'n');
});

test('a member name is the key it spells, escapes read: a prefix, a longer name or an escaped quote is another key', () => {
  // "mod\u0065l" is model to every JSON parser; "model\"" and "modelx" are not
  const text = '{"modelx":1,"mode":2,"model\\"":3,"mod\\u0065l":"a","Model":4,"":5}';
  assert.deepEqual(JSON.parse(text), { modelx: 1, mode: 2, 'model"': 3, model: 'a', Model: 4, '': 5 });
  assert.deepEqual(JSON.parse(replaceJsonValue(text, ['model'], '"up"')!), {
    modelx: 1,
    mode: 2,
    'model"': 3,
    model: 'up',
    Model: 4,
    '': 5,
  });
  assert.equal(locateJsonValues(text, ['model']).length, 1);
  assert.equal(locateJsonValues(text, ['']).length, 1);
  assert.equal(removeJsonMember('{"a\\\\":1,"a":2}', 'a\\'), '{"a":2}');
});

test('insertJsonMember adds a first member to empty and non-empty objects', () => {
  assert.deepEqual(JSON.parse(insertJsonMember(' { } ', 'k', '1')), { k: 1 });
  assert.deepEqual(JSON.parse(insertJsonMember('{"a":2}', 'k', '{"x":true}')), { k: { x: true }, a: 2 });
});

test('rewriteModel sets or adds the model of an object and refuses any other JSON text', () => {
  assert.equal(JSON.parse(rewriteModel('{"model":"up","x":1}', 'alias')).model, 'alias');
  assert.equal(JSON.parse(rewriteModel(' {"x":1}', 'alias')).model, 'alias');
  for (const text of ['"oops"', '[]', 'null', '12'])
    assert.throws(() => rewriteModel(text, 'alias'), TypeError);
});

test('removeJsonMember drops every top-level member of that key with its comma, nothing else', () => {
  const remove = (text: string) => removeJsonMember(text, 'usage');
  assert.equal(remove('{"id":"c","usage":null,"choices":[]}'), '{"id":"c","choices":[]}');
  assert.equal(
    remove('{"id":"c", "choices":[{"usage":1}], "usage": {"a":[1,{"b":"}"}]} }'),
    '{"id":"c", "choices":[{"usage":1}] }',
  );
  assert.equal(remove('{"usage":null}'), '{}');
  assert.equal(remove('{ "usage" : 1 , "x":"\\"usage\\":2"}'), '{ "x":"\\"usage\\":2"}');
  assert.equal(remove('{"a":1,"usage":null,"usage":2}'), '{"a":1}');
  const none = '{"a":"usage"}';
  assert.equal(remove(none), none);
  for (const text of [
    '{"id":"c","usage":null,"choices":[]}',
    '{"usage":null}',
    '{"a":1,"usage":null,"usage":2}',
  ])
    assert.equal('usage' in JSON.parse(remove(text)), false);
});

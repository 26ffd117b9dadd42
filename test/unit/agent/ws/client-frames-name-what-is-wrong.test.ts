/**
 * Client frames on the WebSocket (spec 2 Streaming): a frame that is not JSON, not an object, of an unknown
 * type or with a field missing or of the wrong type is answered with an error frame whose message names the
 * field in plain words (never the validator's own wording).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeClientFrame } from '#src/agent/ws/frames.ts';

const errorOf = (text: string) => {
  const r = decodeClientFrame(text);
  assert.ok('error' in r, `${text} should be refused`);
  return r.error;
};

test('a missing field is named as required', () => {
  assert.deepEqual(errorOf('{"type":"ping"}'), { code: 'invalid_frame', message: 'ping.nonce: is required' });
  assert.deepEqual(errorOf('{"type":"cancel"}'), {
    code: 'invalid_frame',
    message: 'cancel.turn_id: is required',
  });
});

test('a field of the wrong type, an unknown type and a non-object say what is expected', () => {
  assert.deepEqual(errorOf('{"type":"ping","nonce":7}'), {
    code: 'invalid_frame',
    message: 'ping.nonce: must be a string',
  });
  assert.deepEqual(errorOf('{"type":"subscribe","since":5}'), {
    code: 'invalid_frame',
    message: 'subscribe.since: must be an event id or null',
  });
  assert.equal(errorOf('{"type":"hello"}').code, 'unknown_frame_type');
  assert.equal(errorOf('[1]').code, 'invalid_frame');
  assert.equal(errorOf('{not json').code, 'invalid_frame');
});

test('valid frames decode', () => {
  assert.deepEqual(decodeClientFrame('{"type":"ping","nonce":"n1"}'), {
    frame: { type: 'ping', nonce: 'n1' },
  });
  assert.deepEqual(decodeClientFrame('{"type":"cancel","turn_id":"t1"}'), {
    frame: { type: 'cancel', turn_id: 't1' },
  });
});

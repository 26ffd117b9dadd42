import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nonNegativeInt, positiveInt } from '#src/config/env-numbers.ts';

test('an unset setting is undefined; whole numbers read as numbers', () => {
  assert.equal(positiveInt(undefined, 'SVC_AGENT_MAX_STEPS'), undefined);
  assert.equal(positiveInt(' 50 ', 'SVC_AGENT_MAX_STEPS'), 50);
  assert.equal(nonNegativeInt('0', 'SVC_GATEWAY_MAX_RETRIES'), 0);
});

test('a refusal says what the value must be: 0 where a positive number is needed is not "not a whole number"', () => {
  assert.throws(() => positiveInt('abc', 'SVC_AGENT_MAX_STEPS'), {
    code: 'startup_refused',
    message: /^SVC_AGENT_MAX_STEPS must be a whole number above 0, not "abc"/,
  });
  assert.throws(() => positiveInt('0', 'SVC_AGENT_TURN_TIMEOUT_MS'), {
    message: /^SVC_AGENT_TURN_TIMEOUT_MS must be a whole number above 0, not "0"/,
  });
  assert.throws(() => nonNegativeInt('-1', 'SVC_GATEWAY_MAX_RETRIES'), {
    message: /^SVC_GATEWAY_MAX_RETRIES must be a whole number, not "-1"/,
  });
});

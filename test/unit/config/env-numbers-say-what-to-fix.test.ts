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

test('a *_MS setting longer than a Node timer holds is refused, not run after 1 ms', () => {
  assert.equal(positiveInt('2147483647', 'SVC_PATTERN_REFRESH_MS'), 2_147_483_647);
  for (const name of [
    'SVC_PATTERN_REFRESH_MS',
    'SVC_GATEWAY_UPSTREAM_TIMEOUT_MS',
    'SVC_WS_PING_INTERVAL_MS',
  ]) {
    assert.throws(() => positiveInt('2147483648', name), {
      code: 'startup_refused',
      message: new RegExp(
        `^${name} must be at most 2147483647 \\(about 24.8 days.*not "2147483648"; fix or unset it`,
      ),
    });
  }
  // a byte count is no timer: above 2^31 is fine, above what a double holds exactly is not
  assert.equal(positiveInt('4294967296', 'SVC_GATEWAY_MAX_BODY_BYTES'), 4_294_967_296);
  assert.throws(() => positiveInt('99999999999999999999', 'SVC_GATEWAY_MAX_BODY_BYTES'), {
    message: /^SVC_GATEWAY_MAX_BODY_BYTES must be at most 9007199254740991, not "99999999999999999999"/,
  });
  assert.throws(() => nonNegativeInt('99999999999999999999', 'SVC_GATEWAY_MAX_RETRIES'), {
    code: 'startup_refused',
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatHostPort, parseHostPort } from '#src/forward/index.ts';
import { isSvcError } from '#src/lib/errors.ts';

test('host:port, bracketed IPv6 and names parse; formatting brackets IPv6 again', () => {
  assert.deepEqual(parseHostPort('0.0.0.0:8423', '--listen'), { host: '0.0.0.0', port: 8423 });
  assert.deepEqual(parseHostPort('127.0.0.1:8422', '--target'), { host: '127.0.0.1', port: 8422 });
  assert.deepEqual(parseHostPort('[::1]:8422', '--target'), { host: '::1', port: 8422 });
  assert.deepEqual(parseHostPort('localhost:0', '--listen'), { host: 'localhost', port: 0 });
  assert.equal(formatHostPort({ host: '::1', port: 1 }), '[::1]:1');
  assert.equal(formatHostPort({ host: '10.0.0.1', port: 2 }), '10.0.0.1:2');
});

test('anything else is a usage error that names the flag', () => {
  for (const bad of ['8422', ':8422', '127.0.0.1', '127.0.0.1:', 'host:70000', '::1:8422', 'a b:1', 'h:-1']) {
    assert.throws(
      () => parseHostPort(bad, '--target'),
      (err) => isSvcError(err) && err.code === 'usage_error' && err.message.startsWith('--target must be'),
      bad,
    );
  }
});

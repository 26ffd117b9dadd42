/**
 * A transport failure (no connection, a timeout, a connection cut mid-answer) reaches the client's error
 * body and llm.call_failed as a sentence saying what happened and which setting bounds it, never undici's
 * bare "Headers Timeout Error" / "Body Timeout Error" / "other side closed", and never the upstream's
 * address (the operator's base URL or proxy, which clients may not choose and need not learn).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyTransportError } from '#src/adapters/upstream-error.ts';

const undiciError = (name: string, code: string, message: string) =>
  Object.assign(new Error(message), { name, code });

test('transport failures are classified with a message that says what happened, without the address', () => {
  const cases = [
    {
      err: undiciError('HeadersTimeoutError', 'UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error'),
      cls: 'timeout',
      message: /^the provider did not start its answer in time \(SVC_GATEWAY_UPSTREAM_TIMEOUT_MS\)$/,
    },
    {
      err: undiciError('BodyTimeoutError', 'UND_ERR_BODY_TIMEOUT', 'Body Timeout Error'),
      cls: 'timeout',
      message: /^the provider sent nothing more for too long \(SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS\)$/,
    },
    {
      err: undiciError('SocketError', 'UND_ERR_SOCKET', 'other side closed'),
      cls: 'connection_error',
      message: /^the provider closed the connection before its answer was complete \(UND_ERR_SOCKET\)$/,
    },
    {
      err: undiciError('Error', 'ECONNREFUSED', 'connect ECONNREFUSED 10.20.30.40:3128'),
      cls: 'connection_error',
      message: /^the gateway could not reach the provider \(ECONNREFUSED\)$/,
    },
    {
      err: undiciError('Error', 'ENOTFOUND', 'getaddrinfo ENOTFOUND proxy.corp.internal'),
      cls: 'connection_error',
      message: /^the gateway could not reach the provider \(ENOTFOUND\)$/,
    },
    {
      err: undiciError(
        'ConnectTimeoutError',
        'UND_ERR_CONNECT_TIMEOUT',
        'Connect Timeout Error (attempted address: 10.20.30.40:443, timeout: 10000ms)',
      ),
      cls: 'timeout',
      message: /^the gateway could not reach the provider in time \(UND_ERR_CONNECT_TIMEOUT\)$/,
    },
  ];
  for (const c of cases) {
    const f = classifyTransportError(c.err);
    assert.equal(f.error_class, c.cls, c.err.message);
    assert.match(f.message, c.message);
    assert.doesNotMatch(f.message, /10\.20\.30\.40|proxy\.corp/);
  }
  // an abort stays the caller's cancellation
  assert.equal(
    classifyTransportError(Object.assign(new Error('aborted'), { name: 'AbortError' })).error_class,
    'cancelled',
  );
});

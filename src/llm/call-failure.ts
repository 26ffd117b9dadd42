/**
 * @module What a failed model call reads as: the error class of a failure thrown while reading a stream or
 * body, the timeout of a stream's first event, the cancel before any answer, and the retry hint a client
 * gets with a rate limit or overload. Used by llm/call.ts, llm/call-stream.ts and the gateway.
 */
import type { Adapter } from '../adapters/adapter.ts';
import type { UpstreamFailure } from '../adapters/upstream-error.ts';
import type { ErrorClass } from '../events/catalog.ts';
import { isSvcError } from '../lib/errors.ts';
import { jsonSyntaxReason } from '../lib/json-syntax.ts';
import { type RetryPolicy, resolveClientRetryHint } from './retry.ts';
import { headerValue, type UpstreamResponse } from './upstream.ts';

/** The error class of a failure thrown while reading a stream or body (transport, or an in-stream error). */
export function classifyReadFailure(adapter: Adapter, err: unknown, signal: AbortSignal): UpstreamFailure {
  if (isSvcError(err)) {
    const cls = (err.details?.error_class as ErrorClass | undefined) ?? 'server_error';
    return {
      error_class: cls,
      code: err.code,
      status: null,
      message: err.message,
      retryable: false,
    };
  }
  if (err instanceof SyntaxError) {
    // a frame or body that is not valid JSON is the upstream's fault, not the transport's
    return {
      error_class: 'server_error',
      code: 'upstream_error',
      status: null,
      // V8's reason without the excerpt it quotes of the answer, which holds the conversation's text
      message: `the upstream sent data that is not valid JSON: ${jsonSyntaxReason(err)}`,
      retryable: false,
    };
  }
  const f = adapter.classifyNetworkError(err);
  return signal.aborted ? { ...f, error_class: 'cancelled' } : f;
}

/** A stream head that came in time, but whose first event did not before the call's total time ran out. */
export function firstEventTimeout(): Error {
  const err = new Error(
    'the provider sent no event of its stream in time (SVC_GATEWAY_UPSTREAM_TIMEOUT_MS, all attempts together)',
  );
  err.name = 'TimeoutError';
  return err;
}

/** The agent's cancel before any answer (spec 2 cancellation table). */
export const CANCELLED_BEFORE_ANSWER: UpstreamFailure = {
  error_class: 'cancelled',
  code: 'upstream_error',
  status: null,
  message: 'the call was cancelled before the model answered',
  retryable: false,
};

/** A rate limit or overload the client may retry always tells it how long to wait (wire-formats §4). */
export function withClientHint(policy: RetryPolicy, f: UpstreamFailure, attempts: number): UpstreamFailure {
  if (
    !f.retryable ||
    f.retry_after_ms !== undefined ||
    (f.error_class !== 'rate_limit' && f.error_class !== 'overloaded')
  )
    return f;
  return { ...f, retry_after_ms: resolveClientRetryHint(policy, attempts) };
}

/**
 * A 2xx answer to a stream request whose body ended without a single event (an OpenAI-compatible server
 * that ignored stream: true, a proxy's own page): it failed before the first byte, like an error event.
 */
export function noEventStream(res: UpstreamResponse): UpstreamFailure {
  const type = headerValue(res.headers['content-type']) ?? 'no content-type';
  return {
    error_class: 'server_error',
    code: 'upstream_error',
    status: res.status,
    message: `the provider answered the stream request with no event stream (HTTP ${res.status}, ${type})`,
    retryable: true,
  };
}

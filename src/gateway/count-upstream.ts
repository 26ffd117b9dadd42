/**
 * @module The provider's own token count (POST /v1/messages/count_tokens on the Anthropic wire), asked as a
 * call asks for its answer (DECISIONS §4): a 429, 5xx, 529, connection error or timeout is retried up to
 * SVC_GATEWAY_MAX_RETRIES times within the call's total time (SVC_GATEWAY_UPSTREAM_TIMEOUT_MS), the
 * provider's hint honoured up to 30 s and its `x-should-retry: false` obeyed, out of the retry budget the
 * calls share; what is left is answered as a call's failure is, with the client's retry hint. A stopping
 * gateway makes no further attempt. No event is written.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Adapter, UpstreamCall } from '../adapters/adapter.ts';
import { toSvcError, type UpstreamFailure } from '../adapters/upstream-error.ts';
import { isSvcError, SvcError } from '../lib/errors.ts';
import type { LlmCallDeps } from '../llm/call.ts';
import { withClientHint } from '../llm/call-failure.ts';
import { resolveRetryDelay } from '../llm/retry.ts';
import { headerValue, readUpstreamText } from '../llm/upstream.ts';

/** Longest count body read. */
const COUNT_BODY_MAX_BYTES = 1024 * 1024;

/**
 * The text of the provider's 2xx answer to `call`. Throws the gateway's SvcError for a failure it gave up
 * on (or the stop's `service_shutting_down`), and what the transport threw once `signal` aborted.
 */
export async function askProviderCount(
  llm: LlmCallDeps,
  adapter: Adapter,
  call: UpstreamCall,
  signal: AbortSignal,
): Promise<string> {
  const deadline = llm.totalTimeoutMs === undefined ? undefined : performance.now() + llm.totalTimeoutMs;
  const leftMs = () =>
    deadline === undefined ? undefined : Math.max(1, Math.ceil(deadline - performance.now()));
  llm.retryBudget.recordRequest();
  for (let attempts = 1; ; attempts++) {
    let failure: UpstreamFailure;
    try {
      const res = await llm.upstream.send({ ...call, signal, headersTimeoutMs: leftMs() });
      const text = await readUpstreamText(res, COUNT_BODY_MAX_BYTES, leftMs());
      if (res.status >= 200 && res.status < 300) return text;
      const header = (name: string) => headerValue(res.headers[name]);
      failure = adapter.classifyResponse(res.status, header, text);
    } catch (err) {
      // the client left, the stop cut the count off, or the body is past its cap: nothing to retry
      if (signal.aborted || isSvcError(err)) throw err;
      failure = adapter.classifyNetworkError(err);
    }
    const delay = failure.retryable
      ? resolveRetryDelay(llm.retryPolicy, attempts, failure.retry_after_ms)
      : undefined;
    const outOfTime = delay !== undefined && deadline !== undefined && performance.now() + delay >= deadline;
    if (delay === undefined || outOfTime || !llm.retryBudget.tryAcquire())
      throw toSvcError(withClientHint(llm.retryPolicy, failure, attempts));
    await backoff(llm, delay, signal);
  }
}

// --- internal ---

/** Waits `ms`; a stop that begins meanwhile ends the count as the stop ends a call's backoff. */
async function backoff(llm: LlmCallDeps, ms: number, signal: AbortSignal): Promise<void> {
  const { stopping } = llm;
  const stopped = () => {
    const reason = stopping?.reason;
    return isSvcError(reason) ? reason : new SvcError('service_shutting_down');
  };
  if (stopping?.aborted) throw stopped();
  const until = stopping ? AbortSignal.any([signal, stopping]) : signal;
  try {
    await (llm.sleep ?? ((wait, on) => delay(wait, undefined, { signal: on })))(ms, until);
  } catch (err) {
    if (signal.aborted) throw err;
    throw stopped();
  }
}

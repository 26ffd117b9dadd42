/**
 * @module One model call: publishes llm.call_started, sends the upstream request with the retry policy of
 * DECISIONS §4 until a 2xx head arrives, and for a stream its first event that is not an error (never
 * retrying once a byte went to the client: the caller only gets the body after this returns), and closes the call with exactly one llm.call_completed (priced from
 * the routed model's table; `cancelled` when the client left) or llm.call_failed. Used by the gateway
 * pipeline and, later, the agent loop.
 */
import type { Adapter, EmbeddedError, HeaderGetter, UpstreamCall } from '../adapters/adapter.ts';
import { toSvcError, type UpstreamFailure } from '../adapters/upstream-error.ts';
import { type CanonicalUsage, emptyUsage, type StopReason } from '../canonical/response.ts';
import type { Bus, Published } from '../events/bus.ts';
import type { CallActor, CallAttribution } from '../events/catalog.ts';
import { type Decimal, ZERO } from '../lib/decimal.ts';
import { isSvcError, type SvcError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import type { ModelEntry } from '../models/model-schema.ts';
import { type CallCost, priceCall } from '../models/pricing.ts';
import type { ModelRegistry } from '../models/registry.ts';
import { type CallBase, completeCall, spentFields } from './call-close.ts';
import {
  CANCELLED_BEFORE_ANSWER,
  classifyReadFailure,
  firstEventTimeout,
  noEventStream,
  withClientHint,
} from './call-failure.ts';
import { parseWholeBody } from './cut-short.ts';
import { untilFirstEvent } from './first-event-deadline.ts';
import { resolvePartialUsage } from './partial-usage.ts';
import { type RetryBudget, type RetryPolicy, resolveRetryDelay } from './retry.ts';
import { PEEK_MAX_WAIT_MS, peekFirstEvent, preamblePeekBytes } from './stream-start.ts';
import {
  DEFAULT_UPSTREAM_LIMITS,
  headerValue,
  readUpstreamText,
  type Upstream,
  type UpstreamResponse,
} from './upstream.ts';
import { addUsage } from './usage-sum.ts';

export interface LlmCallDeps {
  bus: Bus;
  clock: Clock;
  log: Logger;
  upstream: Upstream;
  registry: ModelRegistry;
  retryPolicy: RetryPolicy;
  retryBudget: RetryBudget;
  /**
   * All attempts of one call together, backoff included, until the response head (a stream) or the whole
   * body (not a stream): SVC_GATEWAY_UPSTREAM_TIMEOUT_MS, DECISIONS §4's "600 s total". None when absent.
   */
  totalTimeoutMs?: number;
  /** Waits `ms` or until `signal` aborts (injected by tests). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * Aborted when the server's stop begins, its reason an SvcError saying so: a call then makes no further
   * attempt (one waiting out a backoff stops waiting) and ends cancelled with that reason, not holding the stop.
   */
  stopping?: AbortSignal;
}

export interface LlmCallInput {
  adapter: Adapter;
  /** The routed model (prices, provider). */
  model: ModelEntry;
  /** The request to send; the same bytes on every attempt. */
  call: UpstreamCall;
  attribution: CallAttribution;
  stream: boolean;
  turnId: string | null;
  sessionId?: string | null;
  /** Stamped on llm.call_*; the gateway when absent. */
  actor?: CallActor;
  /** Aborts when the client is gone; stops waiting, retrying and reading at once. */
  signal: AbortSignal;
  /** Non-streaming: read the whole body (at most this many bytes) within the attempt, so it is retried too. */
  bodyMaxBytes?: number;
  /**
   * Non-streaming, with `bodyMaxBytes`: the error a 2xx body holds in place of its answer (OpenRouter's 200
   * with `error`), which then fails the attempt like the HTTP answer of its status.
   */
  classifyBody?: (body: unknown, headers: HeaderGetter) => EmbeddedError | null;
  /** The request's input-token estimate, billed for a body lost after the provider answered (0: none). */
  inputTokensEstimate?: number;
  /** The SSE event limit (SVC_GATEWAY_MAX_SSE_LINE_BYTES), which bounds the stream-start peek's preamble. */
  sseEventMaxBytes?: number;
}

export interface CompleteInput {
  usage: CanonicalUsage;
  stopReason: StopReason | string | null;
  /** The client went away: error_class `cancelled` with the usage seen so far. */
  cancelled?: boolean;
  ttftMs?: number | null;
}

/** A call whose upstream answered 2xx: read `response.body`, then `complete` or `fail` exactly once. */
export interface OpenLlmCall {
  readonly response: UpstreamResponse;
  /** The whole body, when the call was opened with `bodyMaxBytes`. */
  readonly text?: string;
  /** `text` parsed (undefined when it is no JSON: the decoder's 502 to report). */
  readonly json?: unknown;
  readonly attempts: number;
  /** Milliseconds since the call started. */
  elapsedMs(): number;
  complete(input: CompleteInput): { published: Published; cost: CallCost };
  /** `spent`: usage the caller already consumed (an agent turn cancelled mid-stream), priced on the event. */
  fail(failure: UpstreamFailure, spent?: CanonicalUsage): Published;
}

/** Thrown by `openLlmCall` after llm.call_failed was published. */
export class LlmCallFailed extends Error {
  readonly failure: UpstreamFailure;
  readonly published: Published;
  /** What the provider billed although no answer arrived (bodies lost after a 2xx head), priced on the event. */
  readonly spent: CanonicalUsage | undefined;
  /** `spent` priced, as on the event (zero without it): what the caller's budget and turn count. */
  readonly cost: Decimal;
  constructor(failure: UpstreamFailure, published: Published, spent?: CanonicalUsage, cost: Decimal = ZERO) {
    super(failure.message);
    this.name = 'LlmCallFailed';
    this.failure = failure;
    this.published = published;
    this.spent = spent;
    this.cost = cost;
  }
  /** The gateway's answer for this failure (DECISIONS §4 table). */
  toSvcError(): SvcError {
    return toSvcError(this.failure);
  }
}

export async function openLlmCall(deps: LlmCallDeps, input: LlmCallInput): Promise<OpenLlmCall> {
  const startedMs = performance.now();
  const elapsedMs = () => Math.round((performance.now() - startedMs) * 1000) / 1000;
  const deadlineMs = deps.totalTimeoutMs === undefined ? undefined : startedMs + deps.totalTimeoutMs;
  /** What is left of the call's total time (undefined: no limit); a retry is never started past it. */
  const leftMs = () =>
    deadlineMs === undefined ? undefined : Math.max(1, Math.ceil(deadlineMs - performance.now()));
  const base: CallBase = {
    actor: input.actor ?? 'gateway',
    turn_id: input.turnId,
    session_id: input.sessionId ?? null,
  };
  const started = deps.bus.publish({
    ...base,
    type: 'llm.call_started',
    payload: { ...input.attribution, stream: input.stream, attempt: 1 },
  });
  let attempts = 0;
  let closed = false;
  /**
   * Attempts whose provider answered 2xx but whose body was lost on the way (reset, timeout, size cap): the
   * provider billed them all the same, so their estimated usage is on the call's closing event.
   */
  let lost: CanonicalUsage | undefined;
  /** The call's failure, closed with `published`; what was lost on the way is on it, priced as on the event. */
  const failed = (f: UpstreamFailure, published: Published) =>
    new LlmCallFailed(
      f,
      published,
      lost,
      lost ? priceCall(deps.registry, input.model.id, lost, undefined, input.call.serviceTier).cost : ZERO,
    );

  const fail = (failure: UpstreamFailure, spent?: CanonicalUsage): Published => {
    closed = true;
    return deps.bus.publish({
      ...base,
      type: 'llm.call_failed',
      parent_event_id: started.event.id,
      payload: {
        ...input.attribution,
        error_class: failure.error_class,
        message: failure.message,
        status: failure.status,
        latency_ms: elapsedMs(),
        attempts,
        code: failure.code,
        ...(failure.upstream_type ? { upstream_type: failure.upstream_type } : {}),
        ...(spent ? spentFields(deps, input.model.id, spent, input.call.serviceTier) : {}),
      },
    });
  };

  deps.retryBudget.recordRequest();
  for (;;) {
    attempts++;
    let failure: UpstreamFailure;
    /** The attempt waited for the response head all the call's time left (headersTimeoutMs: leftMs()). */
    let headWaitedOut = false;
    try {
      let res = await deps.upstream.send({ ...input.call, signal: input.signal, headersTimeoutMs: leftMs() });
      const opened = res.status >= 200 && res.status < 300;
      // a stream whose first event is an error failed before its first byte: retried like an HTTP error
      let early: UpstreamFailure | null = null;
      if (opened && input.stream) {
        const preamble = input.adapter.isStreamPreamble;
        // the provider answered and is reading the prompt when the client leaves, or the stream breaks or
        // falls silent, before its first event: it bills that input, like a non-streaming body lost on the way
        const cut = (err: unknown): never => {
          lost = addUsage(lost, resolvePartialUsage(emptyUsage(), input.inputTokensEstimate ?? 0, 0));
          res.body.on('error', ignore).destroy(); // nothing reads it now: its error must not go unhandled
          throw err;
        };
        const left = leftMs();
        const peeked = await peekFirstEvent(
          res.body,
          undefined,
          Math.min(PEEK_MAX_WAIT_MS, left ?? PEEK_MAX_WAIT_MS),
          preamble,
          // the preamble repeats the request's instructions and tools: its bound follows the request's size
          preamble
            ? preamblePeekBytes(
                Buffer.byteLength(input.call.body),
                input.sseEventMaxBytes ?? DEFAULT_UPSTREAM_LIMITS.maxSseLineBytes,
              )
            : undefined,
          input.adapter.streamStartFollows,
        ).catch(cut);
        // an abort destroys the body, which can read as its end rather than as an error
        if (peeked.first === null && input.signal.aborted) cut(input.signal.reason);
        // the call's total time covers the head and its first event: spent waiting for that event, the call is
        // a timeout, never a 200 whose stream then falls silent (the 10 s look alone sends the head on)
        if (peeked.waitedOut && left !== undefined && left < PEEK_MAX_WAIT_MS) cut(firstEventTimeout());
        // a head sent on before its first event (keep-alive comments, the look gave up): the total time bounds it
        const late = peeked.first === null && left !== undefined;
        res = { ...res, body: late ? untilFirstEvent(peeked.body, leftMs() ?? 0) : peeked.body };
        const opening =
          peeked.first !== null
            ? input.adapter.classifyStreamStart(
                peeked.first,
                (name) => headerValue(res.headers[name]),
                peeked.next,
              )
            : null;
        // the usage a failed first event states (the prompt it read) is billed, as a failed 200 body's is
        if (opening?.usage) lost = addUsage(lost, opening.usage);
        early = opening?.failure ?? (peeked.first === null && peeked.noEvents ? noEventStream(res) : null);
        if (early === null && peeked.unreadable) {
          // a frame that is not JSON before anything reached the client: a 502 as for such a 200 body (not
          // retried, the upstream's fault), not a 200 whose stream is only an error frame; it read the prompt
          lost = addUsage(lost, resolvePartialUsage(emptyUsage(), input.inputTokensEstimate ?? 0, 0));
          early = classifyReadFailure(input.adapter, peeked.unreadable, input.signal);
        }
      }
      let text: string | undefined;
      let json: unknown;
      if (opened && early === null) {
        // a body lost on the way is a failure before the first byte reached the client: retried below
        if (!input.stream && input.bodyMaxBytes !== undefined) {
          try {
            text = await readUpstreamText(res, input.bodyMaxBytes, leftMs());
            // ended cleanly but before its JSON did (a chunked body closed early): lost as a reset loses it
            json = parseWholeBody(text);
          } catch (err) {
            lost = addUsage(lost, resolvePartialUsage(emptyUsage(), input.inputTokensEstimate ?? 0, 0));
            throw err;
          }
        }
        // an error the provider put in its 200 body failed before the first byte too: retried like its status
        const embedded =
          json === undefined || input.classifyBody === undefined
            ? null
            : input.classifyBody(json, (name) => headerValue(res.headers[name]));
        if (embedded?.usage) lost = addUsage(lost, embedded.usage);
        early = embedded?.failure ?? null;
      }
      if (opened && early === null) {
        // until its reader starts (the client's first pull), an upstream reset or the client's abort must
        // not surface as an unhandled 'error' of the body; the reader still sees the error itself
        res.body.on('error', ignore);
        return {
          response: res,
          text,
          json,
          attempts,
          elapsedMs,
          complete: (c) => {
            if (closed) throw new Error('llm call already closed');
            closed = true;
            const usage = lost ? addUsage(lost, c.usage) : c.usage;
            return completeCall(deps, input, base, started.event.id, attempts, elapsedMs(), { ...c, usage });
          },
          fail: (f, spent) => {
            if (closed) throw new Error('llm call already closed');
            return fail(f, spent);
          },
        };
      }
      if (early !== null) {
        // nothing else reads this body: its destroy must not surface as an unhandled 'error'
        res.body.on('error', ignore).destroy();
        failure = early;
      } else {
        // an error body is read for its message only, never buffered whole (issue 17)
        const text = await readUpstreamText(res, ERROR_BODY_MAX_BYTES).catch(() => '');
        const header = (name: string) => headerValue(res.headers[name]);
        failure = input.adapter.classifyResponse(res.status, header, text);
      }
    } catch (err) {
      headWaitedOut =
        deadlineMs !== undefined && (err as { code?: unknown })?.code === 'UND_ERR_HEADERS_TIMEOUT';
      failure = input.signal.aborted
        ? { ...input.adapter.classifyNetworkError(err), error_class: 'cancelled', retryable: false }
        : isSvcError(err)
          ? // the body is past the size cap: another attempt would fetch it again
            { ...classifyReadFailure(input.adapter, err, input.signal), retryable: false }
          : input.adapter.classifyNetworkError(err);
    }
    if (failure.error_class === 'cancelled' || input.signal.aborted) throw cancelledCall(failure);
    const delay = failure.retryable
      ? resolveRetryDelay(deps.retryPolicy, attempts, failure.retry_after_ms)
      : undefined;
    // no retry that could not get its answer within the call's total time (a hang used it all up)
    // a head waited for past the time left spent the call's time, however early undici's coarse timer (it
    // counts waits of a second or more in half-second ticks) fired: a hang is one attempt
    const outOfTime =
      delay !== undefined &&
      deadlineMs !== undefined &&
      (headWaitedOut || performance.now() + delay >= deadlineMs);
    if (delay === undefined || outOfTime || !deps.retryBudget.tryAcquire()) {
      throw failed(withClientHint(deps.retryPolicy, failure, attempts), fail(failure, lost));
    }
    deps.log.debug('retrying upstream call', {
      turn_id: input.turnId,
      provider: input.adapter.name,
      model: input.model.id,
      error_class: failure.error_class,
      status: failure.status,
      attempt: attempts,
      delay_ms: delay,
    });
    const { stopping } = deps;
    if (stopping?.aborted) throw cancelledCall(failure, stopping.reason);
    try {
      await (deps.sleep ?? sleep)(delay, stopping ? AbortSignal.any([input.signal, stopping]) : input.signal);
    } catch {
      throw cancelledCall(failure, input.signal.aborted || !stopping ? input.signal.reason : stopping.reason);
    }
  }

  /**
   * The call ended by its signal (or the stop) before any answer. A caller that says why (an SvcError as the
   * abort reason: the gateway's stop, `service_shutting_down`) gets llm.call_failed `cancelled` with that code and message;
   * otherwise the caller left (cancelledBeforeAnswer).
   */
  function cancelledCall(failure: UpstreamFailure, reason: unknown = input.signal.reason): LlmCallFailed {
    if (!isSvcError(reason)) return failed({ ...failure, error_class: 'cancelled' }, cancelledBeforeAnswer());
    const named: UpstreamFailure = {
      error_class: 'cancelled',
      code: reason.code,
      status: null,
      message: reason.message,
      retryable: false,
    };
    return failed(named, fail(named, lost));
  }

  /**
   * The caller left before any answer. A gateway client's cancel is a completed call with no usage (spec 1);
   * an agent turn's is llm.call_failed `cancelled` (spec 2 cancellation table), priced at zero, unless bodies
   * the provider answered were lost on the way (billed all the same).
   */
  function cancelledBeforeAnswer(): Published {
    if (base.actor === 'agent') return fail(CANCELLED_BEFORE_ANSWER, lost ?? emptyUsage());
    closed = true;
    return completeCall(deps, input, base, started.event.id, attempts, elapsedMs(), {
      usage: lost ?? emptyUsage(),
      stopReason: null,
      cancelled: true,
    }).published;
  }
}

function ignore(): void {}

// --- internal ---

/** Longest non-2xx body read for its error message; past it the failure is classified by status alone. */
const ERROR_BODY_MAX_BYTES = 1024 * 1024;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

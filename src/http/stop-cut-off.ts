/**
 * @module What a stop does to the responses still open at its deadline (or a second signal): marks them as
 * cut off by the stop (the log says so, not "client disconnected"), and lets those that end themselves (a
 * gateway stream: its error frame; a request whose answer has not begun: its 503; and their calls' closing
 * events) do so before their connections close.
 */
import type { ServerResponse } from 'node:http';
import { SvcError } from '../lib/errors.ts';

/** Responses whose connections a stop closed before they finished (its deadline or a second signal). */
const cutOffByStop = new WeakSet<object>();

/** Whether a stop, not the client, closed this response's connection (`c.env.outgoing`) before it finished. */
export function wasCutOffByStop(res: object | undefined): boolean {
  return res !== undefined && cutOffByStop.has(res);
}

/**
 * The responses that end themselves when a stop cuts them off: a stream's controller (see stopCutOffSignal),
 * or what a request not yet answered does (see untilAnswered; a no-op once its answer began).
 */
const stopCutOffs = new WeakMap<object, AbortController | (() => void)>();

/** A request whose answer began: the stop waits for it to close, and it has nothing more to do. */
const ANSWERED = () => {};

/** How long a cut-off response that ends itself (a stream's error frame) has before its connection is closed. */
export const CUT_OFF_ENDING_MS = 2_000;

/**
 * A signal aborted when a stop cuts this response (`c.env.outgoing`) off (the drain deadline, a second
 * signal): a stream that listens sends its error frame, records its end and closes, and the stop waits up to
 * CUT_OFF_ENDING_MS for that before it closes the connection.
 */
export function stopCutOffSignal(res: object | undefined): AbortSignal | undefined {
  if (res === undefined) return undefined;
  let controller = stopCutOffs.get(res);
  if (!(controller instanceof AbortController)) {
    controller = new AbortController();
    stopCutOffs.set(res, controller);
  }
  return controller.signal;
}

/**
 * Why the stop cut a call off (the abort reason of its signal, a stream's failure): `service_shutting_down`,
 * the gateway's doing and not the provider's, so the call is recorded as cancelled (`details.error_class`).
 */
export function stopCutOffError(what: 'stream' | 'request'): SvcError {
  return new SvcError('service_shutting_down', {
    message:
      what === 'stream'
        ? 'The gateway is shutting down and cut this stream off before it finished; send the request again.'
        : 'The gateway is shutting down and cut this request off before its answer began; send the request again.',
    details: { error_class: 'cancelled' },
  });
}

/**
 * The answer to a request the stop cut off before its answer began (`reason`: its signal's, stopCutOffError's):
 * 503 `service_shutting_down` with that message, which the SDKs retry.
 */
export function cutOffAnswer(reason: unknown): SvcError {
  const message = reason instanceof Error ? reason.message : undefined;
  return new SvcError('service_shutting_down', { message });
}

/** A request's signal until its answer begins (see untilAnswered). */
export interface BeforeAnswer {
  /**
   * Aborted when the client leaves (with its reason), or when the stop cuts the response off before
   * `answered()` (with stopCutOffError('request')): what the call runs under.
   */
  readonly signal: AbortSignal;
  /** Whether the stop cut the response off before its answer began. */
  readonly cut: boolean;
  /** The answer begins: a cut-off from now on is the answer's own to handle (a stream's error frame). */
  answered(): void;
}

/**
 * The signal a request's upstream call runs under until its answer begins: the client's, and the stop's
 * cut-off (the stop then waits up to CUT_OFF_ENDING_MS for the request's own answer: the gateway's 503).
 */
export function untilAnswered(res: object | undefined, client: AbortSignal): BeforeAnswer {
  if (res === undefined) return { signal: client, cut: false, answered() {} };
  // the stop calls onStop itself: no controller of its own and no listener on it (one request, one controller)
  const controller = new AbortController();
  // `cut` is a data property the stop sets, never a getter: an object literal with a per-call getter is kept
  // in dictionary mode, and everything its closures reach then outlived the young generation's collections
  // (1.6 against 0.4 KiB a request promoted to the old generation: node test/bench/request-counts.ts, OpenAI
  // same wire, c=1; the running call object of 428ee0d did the same)
  const handle: { -readonly [K in keyof BeforeAnswer]: BeforeAnswer[K] } = {
    signal: controller.signal,
    cut: false,
    answered: () => {
      if (stopCutOffs.get(res) === onStop) stopCutOffs.set(res, ANSWERED);
    },
  };
  const onClient = () => controller.abort(client.reason);
  const onStop = () => {
    if (controller.signal.aborted) return;
    handle.cut = true;
    controller.abort(stopCutOffError('request'));
  };
  if (client.aborted) onClient();
  else client.addEventListener('abort', onClient, { once: true });
  stopCutOffs.set(res, onStop);
  return handle;
}

/**
 * Marks the responses still open as cut off by the stop and tells those that end themselves (streams: their
 * error frame); resolves once those have closed, or after CUT_OFF_ENDING_MS.
 */
export async function cutOff(open: ReadonlySet<ServerResponse>): Promise<void> {
  const ending: ServerResponse[] = [];
  for (const res of open) {
    cutOffByStop.add(res);
    const end = stopCutOffs.get(res);
    if (end === undefined) continue;
    ending.push(res);
    if (end instanceof AbortController) end.abort();
    else end();
  }
  if (ending.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(ending.map((res) => res.closed || new Promise((resolve) => res.once('close', resolve)))),
    new Promise((resolve) => {
      timer = setTimeout(resolve, CUT_OFF_ENDING_MS);
    }),
  ]);
  clearTimeout(timer);
}

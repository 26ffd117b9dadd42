/**
 * @module What a stop does to the responses still open at its deadline (or a second signal): marks them as
 * cut off by the stop (the log says so, not "client disconnected"), and lets those that end themselves (a
 * gateway stream: its error frame and its call's closing events) do so before their connections close.
 */
import type { ServerResponse } from 'node:http';

/** Responses whose connections a stop closed before they finished (its deadline or a second signal). */
const cutOffByStop = new WeakSet<object>();

/** Whether a stop, not the client, closed this response's connection (`c.env.outgoing`) before it finished. */
export function wasCutOffByStop(res: object | undefined): boolean {
  return res !== undefined && cutOffByStop.has(res);
}

/** The signals of responses that end themselves when a stop cuts them off (see stopCutOffSignal). */
const stopCutOffs = new WeakMap<object, AbortController>();

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
  if (controller === undefined) {
    controller = new AbortController();
    stopCutOffs.set(res, controller);
  }
  return controller.signal;
}

/**
 * Marks the responses still open as cut off by the stop and tells those that end themselves (streams: their
 * error frame); resolves once those have closed, or after CUT_OFF_ENDING_MS.
 */
export async function cutOff(open: ReadonlySet<ServerResponse>): Promise<void> {
  const ending: ServerResponse[] = [];
  for (const res of open) {
    cutOffByStop.add(res);
    const controller = stopCutOffs.get(res);
    if (controller === undefined) continue;
    ending.push(res);
    controller.abort();
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

/**
 * WebSocket stream clients for `npm run bench:ws`, run in a worker thread so their parsing does not share
 * the event loop of the timing relay. Each client subscribes with preset:chat and stamps every text.delta
 * with the process's monotonic clock (relative to the base the main thread sent); a `paused` client never
 * reads its socket. Posts `ready` once every client is subscribed, then one result per client.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import WebSocket from 'ws';

export interface ClientsInput {
  urls: string[];
  /** Clients (by index) that stop reading right after subscribing. */
  paused: number[];
  /** process.hrtime.bigint() of the main thread's clock origin, as a string. */
  baseNs: string;
  /** Deltas the turn will stream. */
  deltas: number;
}

export interface ClientResult {
  /** Receipt time (ms since the base) of delta i; NaN when it never came. */
  recvMs: Float64Array;
  /** Every event frame received. */
  events: number;
  closeCode: number | null;
  paused: boolean;
}

const input = workerData as ClientsInput;
// how late this thread's own event loop ran: a stall here shows up as latency the server did not add
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const base = BigInt(input.baseNs);
const now = () => Number(process.hrtime.bigint() - base) / 1e6;
const DELTA = Buffer.from('"type":"text.delta"');
const WORD = Buffer.from('"text":"w');
const END = [Buffer.from('"type":"turn.completed"'), Buffer.from('"type":"turn.cancelled"')];

/** The delta's index from its bytes (`"text":"w123…`), without decoding the frame. */
function wordIndex(data: Buffer): number {
  let i = data.indexOf(WORD);
  if (i < 0) return -1;
  i += WORD.length;
  let n = 0;
  for (let c = data[i]; c >= 48 && c <= 57; c = data[++i]) n = n * 10 + c - 48;
  return n;
}

const pausedSockets: WebSocket[] = [];
// a paused client is let go once the readers are done (the main thread says so)
parentPort!.on('message', (m: { type: string }) => {
  if (m.type !== 'release') return;
  for (const ws of pausedSockets) {
    ws.resume();
    setTimeout(() => ws.terminate(), 2000).unref();
  }
});

const results = await Promise.all(
  input.urls.map(
    (url, i) =>
      new Promise<ClientResult>((resolve) => {
        const paused = input.paused.includes(i);
        const recvMs = new Float64Array(input.deltas).fill(Number.NaN);
        const result: ClientResult = { recvMs, events: 0, closeCode: null, paused };
        const ws = new WebSocket(url, { skipUTF8Validation: true });
        let acked = false;
        ws.on('open', () => ws.send(JSON.stringify({ type: 'subscribe', filter: 'preset:chat' })));
        ws.on('message', (data: Buffer) => {
          const t = now();
          if (!acked) {
            acked = true;
            if (paused) ws.pause();
            parentPort!.postMessage({ type: 'subscribed' });
            return;
          }
          result.events++;
          if (data.indexOf(DELTA) >= 0) {
            const i = wordIndex(data);
            if (i >= 0 && i < recvMs.length) recvMs[i] = t;
          } else if (END.some((b) => data.indexOf(b) >= 0)) ws.close();
        });
        ws.on('close', (code) => {
          if (!acked) parentPort!.postMessage({ type: 'failed' });
          result.closeCode = code;
          resolve(result);
        });
        ws.on('error', () => {});
        if (paused) pausedSockets.push(ws);
      }),
  ),
);
loopDelay.disable();
parentPort!.postMessage(
  {
    type: 'results',
    results,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    loopDelayMaxMs: loopDelay.max / 1e6,
  },
  results.map((r) => r.recvMs.buffer as ArrayBuffer),
);
parentPort!.close(); // the release listener would keep this thread alive

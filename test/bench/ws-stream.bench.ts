/**
 * `npm run bench:ws`: one turn streaming 5,000 text deltas from the fake provider through the built
 * `svc serve` to 1, 10 and 100 WebSocket clients. A relay between the server and the fake stamps each delta
 * as it is written to the server; clients (worker threads) stamp it on arrival, on the same monotonic clock:
 * the difference is the latency the server adds (p50/p99). Also: server CPU per delivered event and
 * events/s with every delta sent at once, and 10 readers beside one client that never reads (its close,
 * the readers' latency, the server's RSS). The server runs alone on core 1, everything else on core 0.
 * Usage: npm run bench:ws [-- --deltas 5000] [--out ws.json]
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { startFakeProvider } from '../fake-provider/server.ts';
import { isolatedEnv, makeTempDir, ROOT, startSvc } from '../helpers/svc.ts';
import { cpuMsOf, machineBusyMs, pinToCore, rssKbOf, waitForQuiet } from './proc.ts';
import type { ClientResult } from './ws-clients.ts';

const { values: flags } = parseArgs({
  options: { deltas: { type: 'string', default: '5000' }, out: { type: 'string' } },
});
const DELTAS = Number(flags.deltas);
const baseNs = process.hrtime.bigint();
const now = () => Number(process.hrtime.bigint() - baseNs) / 1e6;

// --- the fake provider behind a timing relay, on core 0 with this process ---
execFileSync('taskset', ['-a', '-c', '-p', '0', String(process.pid)], { stdio: 'ignore' });
const fake = await startFakeProvider();
let sentMs = new Float64Array(DELTAS);
const relay = createServer((req, res) => void forward(req, res));
await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
const relayUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;

const tmp = makeTempDir('svc-ws-bench-');
const env = isolatedEnv(tmp.dir, {
  SVC_DB_PATH: `${tmp.dir}/svc.db`,
  ANTHROPIC_API_KEY: 'sk-ant-bench',
  ANTHROPIC_BASE_URL: relayUrl,
});
const svc = await startSvc(['serve', '--port', '{port}'], { env, readyPath: '/health' });
const pid = svc.child.pid!;
pinToCore(pid, 1);
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${svc.url}${path}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  return res.json() as Promise<any>;
};

interface Row {
  scenario: string;
  clients: number;
  p50Ms: number | null;
  p99Ms: number | null;
  delivered: number;
  eventsPerS: number;
  cpuUsPerEvent: number;
  rssMaxMiB: number;
  /** Worst p99 / max event-loop delay of the client threads (ms). */
  clientLoopP99Ms: number;
  clientLoopMaxMs: number;
  /** Server CPU over the window, % of its core. */
  serverCpuPct: number;
  /** CPU used by processes that are not the server or this bench over the window, % of one core. */
  foreignPct: number;
  note: string;
}
const rows: Row[] = [];

try {
  await run('warm-up', 10, { dripMs: 0 });
  rows.length = 0;
  await run('paced (1 ms drip)', 1, { dripMs: 1 });
  await run('paced (1 ms drip)', 10, { dripMs: 1 });
  await run('paced (1 ms drip)', 100, { dripMs: 1 });
  // a fast model's rate (about 200 deltas/s) rather than 1,000/s
  await run('paced (5 ms drip)', 100, { dripMs: 5 });
  await run('burst', 1, { dripMs: 0 });
  await run('burst', 100, { dripMs: 0 });
  // enough bytes (about 10 MB) that a client that does not read fills the kernel buffers and its queue
  await run('paced, 2 KiB deltas', 10, { dripMs: 1, pad: 2048 });
  await run('paced, 2 KiB deltas + 1 client not reading', 11, { dripMs: 1, pad: 2048, paused: [10] });
} finally {
  await svc.stop();
  relay.close();
  await fake.close();
  tmp.cleanup();
}

printRows();
if (flags.out) writeFileSync(flags.out, `${JSON.stringify({ deltas: DELTAS, rows }, null, 2)}\n`);

// --- internal ---

async function run(
  scenario: string,
  clients: number,
  opts: { dripMs: number; pad?: number; paused?: number[] },
): Promise<void> {
  const sid = (await api('POST', '/sessions', { workspace_path: tmp.dir })).id as string;
  const urls: string[] = [];
  for (let i = 0; i < clients; i++) urls.push((await api('GET', `/sessions/${sid}`)).ws_url);
  process.stderr.write(`${scenario}, ${clients} clients: start at ${(now() / 1000).toFixed(1)} s\n`);
  const workers = spread(urls, opts.paused ?? []);
  await Promise.all(workers.map((w) => w.subscribed));
  const pad = opts.pad ? 'x'.repeat(opts.pad) : '';
  fake.script([
    { text: Array.from({ length: DELTAS }, (_, i) => `w${i}${pad}`).join(' '), dripMs: opts.dripMs },
  ]);
  sentMs = new Float64Array(DELTAS).fill(Number.NaN);
  await waitForQuiet();
  const cpu0 = cpuMsOf(pid);
  const own0 = cpuMsOf(process.pid);
  const busy0 = machineBusyMs();
  const rss0 = rssKbOf(pid);
  let rssMax = rss0;
  const sampler = setInterval(() => {
    rssMax = Math.max(rssMax, rssKbOf(pid));
  }, 50);
  const t0 = now();
  await api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'stream' }] });
  const readers = workers.filter((w) => !w.allPaused);
  const readerResults = (await Promise.all(readers.map((w) => w.results))).flat();
  const t1 = now();
  const cpu1 = cpuMsOf(pid);
  const foreignMs = machineBusyMs() - busy0 - (cpu1 - cpu0) - (cpuMsOf(process.pid) - own0);
  for (const w of workers) w.worker.postMessage({ type: 'release' });
  const all = (await Promise.all(workers.map((w) => w.results))).flat();
  clearInterval(sampler);
  const loops = await Promise.all(workers.filter((w) => !w.allPaused).map((w) => w.loop));
  const reading = all.filter((r) => !r.paused);
  const latencies: number[] = [];
  for (const r of reading)
    for (let i = 0; i < DELTAS; i++) if (!Number.isNaN(r.recvMs[i])) latencies.push(r.recvMs[i] - sentMs[i]);
  latencies.sort((a, b) => a - b);
  const delivered = all.reduce((n, r) => n + r.events, 0);
  const slow = all.filter((r) => r.paused);
  const missing = reading.reduce((n, r) => n + r.recvMs.filter(Number.isNaN).length, 0);
  rows.push({
    scenario,
    clients,
    p50Ms: opts.dripMs > 0 ? quantile(latencies, 0.5) : null,
    p99Ms: opts.dripMs > 0 ? quantile(latencies, 0.99) : null,
    delivered,
    eventsPerS: Math.round(delivered / ((t1 - t0) / 1000)),
    cpuUsPerEvent:
      ((cpu1 - cpu0) * 1000) /
      Math.max(
        1,
        readerResults.reduce((n, r) => n + r.events, 0),
      ),
    rssMaxMiB: (rssMax - rss0) / 1024,
    clientLoopP99Ms: Math.max(...loops.map((l) => l.p99)),
    clientLoopMaxMs: Math.max(...loops.map((l) => l.max)),
    serverCpuPct: ((cpu1 - cpu0) / (t1 - t0)) * 100,
    foreignPct: Math.max(0, (foreignMs / (t1 - t0)) * 100),
    note: [
      missing > 0 ? `${missing} deltas missing at readers` : '',
      ...slow.map((r) => `not-reading client closed ${r.closeCode} after ${r.events} events`),
    ]
      .filter(Boolean)
      .join('; '),
  });
  process.stderr.write(`${scenario}, ${clients} clients: done at ${(now() / 1000).toFixed(1)} s\n`);
}

interface ClientGroup {
  worker: Worker;
  allPaused: boolean;
  subscribed: Promise<void>;
  results: Promise<ClientResult[]>;
  /** The worker's own event-loop delay while it ran (ms): client-side stalls, not the server's. */
  loop: Promise<{ p99: number; max: number }>;
}

/** Reading clients in up to 4 worker threads; clients that never read in one more of their own. */
function spread(urls: string[], paused: number[]): ClientGroup[] {
  const readers = urls.filter((_, i) => !paused.includes(i));
  const idle = urls.filter((_, i) => paused.includes(i));
  const groups = Math.min(4, readers.length);
  const out: ClientGroup[] = [];
  for (let g = 0; g < groups; g++)
    out.push(
      group(
        readers.filter((_, i) => i % groups === g),
        false,
      ),
    );
  if (idle.length > 0) out.push(group(idle, true));
  return out;
}

function group(urls: string[], allPaused: boolean): ClientGroup {
  const worker = new Worker(`${ROOT}/test/bench/ws-clients.ts`, {
    workerData: {
      urls,
      paused: allPaused ? urls.map((_, i) => i) : [],
      baseNs: String(baseNs),
      deltas: DELTAS,
    },
  });
  let left = urls.length;
  let ready: () => void = () => {};
  let failed: (err: Error) => void = () => {};
  const subscribed = new Promise<void>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  let loopOf: (l: { p99: number; max: number }) => void = () => {};
  const loop = new Promise<{ p99: number; max: number }>((r) => {
    loopOf = r;
  });
  const results = new Promise<ClientResult[]>((resolve, reject) => {
    worker.on(
      'message',
      (m: { type: string; results?: ClientResult[]; loopDelayP99Ms?: number; loopDelayMaxMs?: number }) => {
        if (m.type === 'subscribed' && --left === 0) ready();
        if (m.type === 'failed') failed(new Error('a client could not subscribe'));
        if (m.type === 'results') {
          loopOf({ p99: m.loopDelayP99Ms ?? 0, max: m.loopDelayMaxMs ?? 0 });
          resolve(m.results!);
        }
      },
    );
    const fail = (err: Error) => {
      failed(err);
      reject(err);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`client worker exited with ${code}`)));
  });
  return { worker, allPaused, subscribed, results, loop };
}

/** Forwards one request to the fake, stamping each text delta as it is written to the server. */
async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
  ) as Record<string, string>;
  const upstream = await fetch(`${fake.url}${req.url}`, {
    method: req.method,
    headers,
    body: Buffer.concat(chunks),
  });
  res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
  const WORD = /"text_delta","text":"w(\d+)/g;
  for await (const chunk of upstream.body as unknown as AsyncIterable<Uint8Array>) {
    const text = Buffer.from(chunk).toString();
    const t = now();
    for (const m of text.matchAll(WORD)) sentMs[Number(m[1])] = t;
    res.write(chunk);
  }
  res.end();
}

function quantile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function printRows(): void {
  const f = (n: number | null, d = 2) => (n === null ? '—' : n.toFixed(d));
  const lines = [
    `svc serve WebSocket stream: ${DELTAS} text deltas per turn (server on core 1, fake, relay and clients on core 0)`,
    '',
    '| scenario | clients | added p50 ms | added p99 ms | client loop delay p99 / max ms | events delivered | events/s | server CPU µs/event | server CPU % | server RSS +MiB | foreign CPU % | note |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.clients} | ${f(r.p50Ms)} | ${f(r.p99Ms)} | ${f(r.clientLoopP99Ms, 1)} / ${f(r.clientLoopMaxMs, 1)} | ${r.delivered} | ${r.eventsPerS} | ${f(r.cpuUsPerEvent, 1)} | ${f(r.serverCpuPct, 0)} | ${f(r.rssMaxMiB, 1)} | ${f(r.foreignPct, 0)} | ${r.note} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

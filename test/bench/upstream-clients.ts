/**
 * Micro-benchmark of the gateway's upstream client choice: the same non-streaming call to the fake made
 * with undici.request over a pooled Agent (what src/llm/upstream.ts uses), Node's global fetch, and
 * undici.fetch over the same Agent. Each client's process CPU per request and requests/s are measured
 * in a child process of its own (pinned by the caller), in alternating rounds.
 * Child usage: node test/bench/upstream-clients.ts <upstream-origin> <requests> <rounds>
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent, request, fetch as undiciFetch } from 'undici';
import { benchRequest } from './requests.ts';

export const CLIENTS = ['undici.request', 'fetch (global)', 'undici.fetch'] as const;
export type ClientName = (typeof CLIENTS)[number];

export interface ClientFigures {
  client: ClientName;
  concurrency: number;
  /** Median over rounds. */
  cpuUsPerReq: number;
  rps: number;
}

/** Runs the comparison in a child pinned to `core`; resolves with one row per client and concurrency. */
export function compareUpstreamClients(
  upstream: string,
  core: number,
  requests: number,
  rounds: number,
): Promise<ClientFigures[]> {
  const args = ['-c', String(core), process.execPath, fileURLToPath(import.meta.url)];
  return new Promise((resolve, reject) => {
    execFile(
      'taskset',
      [...args, upstream, String(requests), String(rounds)],
      { maxBuffer: 1 << 20 },
      (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout) as ClientFigures[])),
    );
  });
}

// --- internal ---

const CONCURRENCIES = [1, 16];

type Send = () => Promise<void>;

function clientsFor(upstream: string): Record<ClientName, Send> {
  const req = benchRequest('openai', 'sk-bench');
  const url = `${upstream}${req.path}`;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 });
  const init = { method: 'POST', headers: req.headers, body: req.body };
  const check = (status: number) => {
    if (status !== 200) throw new Error(`upstream answered ${status}`);
  };
  return {
    'undici.request': async () => {
      const res = await request(url, { ...init, dispatcher: agent });
      await res.body.text();
      check(res.statusCode);
    },
    'fetch (global)': async () => {
      const res = await fetch(url, init);
      await res.text();
      check(res.status);
    },
    'undici.fetch': async () => {
      const res = await undiciFetch(url, { ...init, dispatcher: agent });
      await res.text();
      check(res.status);
    },
  };
}

async function measure(send: Send, requests: number, concurrency: number) {
  let left = requests;
  const worker = async () => {
    while (left-- > 0) await send();
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { cpuUsPerReq: (cpu.user + cpu.system) / requests, rps: (requests * 1000) / wallMs };
}

async function main(upstream: string, requests: number, rounds: number): Promise<ClientFigures[]> {
  const clients = clientsFor(upstream);
  for (const name of CLIENTS) await measure(clients[name], Math.ceil(requests / 4), 16); // warm-up
  const rows: ClientFigures[] = [];
  for (const concurrency of CONCURRENCIES) {
    const runs = new Map<ClientName, Array<{ cpuUsPerReq: number; rps: number }>>();
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 ? [...CLIENTS].reverse() : CLIENTS) {
        const list = runs.get(name) ?? [];
        list.push(await measure(clients[name], requests, concurrency));
        runs.set(name, list);
      }
    }
    for (const name of CLIENTS) {
      const list = runs.get(name)!;
      rows.push({
        client: name,
        concurrency,
        cpuUsPerReq: median(list.map((r) => r.cpuUsPerReq)),
        rps: median(list.map((r) => r.rps)),
      });
    }
  }
  return rows;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

if (import.meta.main) {
  const [upstream, requests, rounds] = process.argv.slice(2);
  const rows = await main(upstream, Number(requests), Number(rounds));
  process.stdout.write(`${JSON.stringify(rows)}\n`);
  process.exit(0);
}

/**
 * Closed-loop load with autocannon (in the bench process, pinned with it to the load core) and the
 * figures the benchmark reports: requests/s, latency percentiles at sub-millisecond resolution (taken
 * from autocannon's per-response times, not its integer-millisecond histogram), and the server's CPU
 * time per completed request read from /proc before and after the measured window.
 */
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { cpuMsOf, machineBusyMs } from './proc.ts';
import type { BenchRequest } from './requests.ts';

export interface LoadOptions {
  url: string;
  /** One request, or a sequence each connection cycles through. */
  request: BenchRequest | BenchRequest[];
  connections: number;
  durationS: number;
  /** Discarded load first (JIT, connection pools). */
  warmupS: number;
  /** The server under test: its CPU time is divided by completed requests. */
  serverPid: number;
  /** Our other processes (the bench itself, the fake upstream): busy time beyond these is foreign. */
  otherPids: number[];
  /** Stop after this many requests instead of after `durationS` (the measured window only). */
  amount?: number;
  /** Requests per second over all connections (soak); unlimited when absent. */
  overallRate?: number;
  /** Awaited between the warm-up and the measured window (e.g. waiting for a quiet machine). */
  beforeMeasure?: () => Promise<unknown>;
}

export interface LoadResult {
  /** Responses with a 2xx status in the measured window. */
  ok: number;
  /** Non-2xx responses plus socket errors and timeouts. */
  failed: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  cpuMsPerReq: number;
  /** Server CPU time over wall time (100 = one core saturated). */
  serverCpuPct: number;
  /** Busy time of processes that are not ours over wall time, in % of one core (other work on the box). */
  foreignCpuPct: number;
}

/** Warms up, then measures `durationS` of closed-loop load. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.warmupS > 0) await cannon(options, options.warmupS, undefined, () => {});
  await options.beforeMeasure?.();
  const latencies: number[] = [];
  let failed = 0;
  const pids = [...new Set([process.pid, ...options.otherPids])].filter((p) => p !== options.serverPid);
  const cpu0 = cpuMsOf(options.serverPid);
  const others0 = sum(pids.map(cpuMsOf));
  const busy0 = machineBusyMs();
  const t0 = performance.now();
  const result = await cannon(options, options.durationS, options.amount, (status, ms) => {
    if (status >= 200 && status < 300) latencies.push(ms);
    else failed++;
  });
  const wallMs = performance.now() - t0;
  const cpuMs = cpuMsOf(options.serverPid) - cpu0;
  const othersMs = sum(pids.map(cpuMsOf)) - others0;
  const busyMs = machineBusyMs() - busy0;
  latencies.sort((a, b) => a - b);
  const ok = latencies.length;
  return {
    ok,
    failed: failed + result.errors + result.timeouts,
    rps: (ok * 1000) / wallMs,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    meanMs: ok ? sum(latencies) / ok : Number.NaN,
    cpuMsPerReq: ok ? cpuMs / ok : Number.NaN,
    serverCpuPct: (cpuMs / wallMs) * 100,
    foreignCpuPct: Math.max(0, ((busyMs - cpuMs - othersMs) / wallMs) * 100),
  };
}

/** The value at quantile `q` of an ascending array (nearest rank). */
export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

// --- internal ---

interface CannonResult {
  errors: number;
  timeouts: number;
}

type Autocannon = (
  opts: Record<string, unknown>,
  done: (err: Error | null, result: CannonResult) => void,
) => EventEmitter;

// autocannon ships no types and the project has no @types/autocannon: load it through require.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

function cannon(
  options: LoadOptions,
  durationS: number,
  amount: number | undefined,
  onResponse: (status: number, ms: number) => void,
): Promise<CannonResult> {
  const requests = Array.isArray(options.request) ? options.request : [options.request];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        // autocannon ignores `duration` when `amount` is set
        ...(amount ? { amount } : { duration: durationS }),
        sampleInt: 100, // autocannon stops at its next sample tick: keep that close to `duration`
        requests,
        ...(options.overallRate ? { overallRate: options.overallRate } : {}),
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) =>
      onResponse(status, ms),
    );
  });
}

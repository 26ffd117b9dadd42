/**
 * Memory after many requests: a fresh gateway takes `requests` requests (every shape, streaming and not,
 * closed loop) while its RSS is sampled from /proc/<pid>/status; also the largest WAL seen and the
 * permission bits of the store files it created.
 */
import { runLoad } from '../load.ts';
import { rssKbOf } from '../proc.ts';
import type { BenchGateway, GatewayHome } from '../processes.ts';
import { benchRequest, SHAPES } from '../requests.ts';
import { storeModes, walMiB } from './store-checks.ts';

export interface RssResult {
  requests: number;
  ok: number;
  failed: number;
  rps: number;
  startMiB: number;
  peakMiB: number;
  endMiB: number;
  maxWalMiB: number;
  /** e.g. `{ 'svc.db': '0644', 'svc.db-wal': '0644', … }`. */
  storeModes: Record<string, string>;
}

export async function runRss(
  gw: BenchGateway,
  home: GatewayHome,
  otherPids: number[],
  options: { requests: number; connections: number },
): Promise<RssResult> {
  const requests = SHAPES.flatMap((shape) => [
    benchRequest(shape, gw.token),
    benchRequest(shape, gw.token, { stream: true }),
  ]);
  const mib = () => Math.round((rssKbOf(gw.pid) / 1024) * 10) / 10;
  const startMiB = mib();
  let peakMiB = startMiB;
  let maxWal = 0;
  const timer = setInterval(() => {
    peakMiB = Math.max(peakMiB, mib());
    maxWal = Math.max(maxWal, walMiB(home.files.db));
  }, 250);
  try {
    const load = await runLoad({
      url: gw.url,
      request: requests,
      connections: options.connections,
      durationS: 3600,
      amount: options.requests,
      warmupS: 0,
      serverPid: gw.pid,
      otherPids,
    });
    const endMiB = mib();
    return {
      requests: options.requests,
      ok: load.ok,
      failed: load.failed,
      rps: Math.round(load.rps),
      startMiB,
      peakMiB: Math.max(peakMiB, endMiB),
      endMiB,
      maxWalMiB: Math.round(Math.max(maxWal, walMiB(home.files.db)) * 10) / 10,
      storeModes: storeModes(home.files.db),
    };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Memory soak: drives a fresh gateway at a moderate fixed rate with a mix of the benchmark's requests
 * (each shape, streaming and not) and samples its RSS from /proc at a fixed interval.
 */
import { runLoad } from './load.ts';
import { rssKbOf } from './proc.ts';
import type { BenchGateway } from './processes.ts';
import { benchRequest, SHAPES } from './requests.ts';

export interface SoakResult {
  seconds: number;
  rate: number;
  ok: number;
  failed: number;
  /** RSS before any load, in MiB. */
  idleMiB: number;
  /** After the first tenth of the soak (warm: pools, JIT, caches), in MiB. */
  warmMiB: number;
  endMiB: number;
  maxMiB: number;
  /** End minus the sample at half time: growth once warm, the leak indicator. */
  secondHalfGrowthMiB: number;
  samples: Array<{ t: number; rssMiB: number }>;
}

export async function runSoak(
  gw: BenchGateway,
  otherPids: number[],
  options: { seconds: number; rate: number; intervalS: number },
): Promise<SoakResult> {
  const requests = SHAPES.flatMap((shape) => [
    benchRequest(shape, gw.token),
    benchRequest(shape, gw.token, { stream: true }),
  ]);
  const mib = () => Math.round((rssKbOf(gw.pid) / 1024) * 10) / 10;
  const t0 = performance.now();
  const samples = [{ t: 0, rssMiB: mib() }];
  const timer = setInterval(
    () => samples.push({ t: Math.round((performance.now() - t0) / 100) / 10, rssMiB: mib() }),
    options.intervalS * 1000,
  );
  try {
    const load = await runLoad({
      url: gw.url,
      request: requests,
      connections: 16,
      durationS: options.seconds,
      warmupS: 0,
      serverPid: gw.pid,
      otherPids,
      overallRate: options.rate,
    });
    samples.push({ t: Math.round((performance.now() - t0) / 100) / 10, rssMiB: mib() });
    const warm = samples.find((s) => s.t >= options.seconds / 10) ?? samples[samples.length - 1];
    const half = samples.find((s) => s.t >= options.seconds / 2) ?? samples[samples.length - 1];
    const end = samples[samples.length - 1].rssMiB;
    return {
      seconds: options.seconds,
      rate: options.rate,
      ok: load.ok,
      failed: load.failed,
      idleMiB: samples[0].rssMiB,
      warmMiB: warm.rssMiB,
      endMiB: end,
      maxMiB: Math.max(...samples.map((s) => s.rssMiB)),
      secondHalfGrowthMiB: Math.round((end - half.rssMiB) * 10) / 10,
      samples,
    };
  } finally {
    clearInterval(timer);
  }
}

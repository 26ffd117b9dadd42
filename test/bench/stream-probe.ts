/**
 * Streaming latency as a client sees it, one stream at a time over a keep-alive connection: time from
 * the request's start to the first body byte (TTFB), and the mean gap between body chunks. The fake's
 * `drip` directive spaces its SSE frames so each arrives as its own chunk.
 */
import { Agent, request } from 'undici';
import { percentile, sum } from './load.ts';
import type { BenchRequest } from './requests.ts';

export interface StreamResult {
  streams: number;
  failed: number;
  ttfbP50Ms: number;
  ttfbMeanMs: number;
  /** Time from the request's start to the last body byte. */
  lastByteP50Ms: number;
  /** Mean over streams of each stream's mean gap between consecutive body chunks. */
  gapMeanMs: number;
  chunksMean: number;
}

/** Sequential streams for `durationS` after `warmupS` of discarded ones. */
export async function runStreamProbe(
  url: string,
  req: BenchRequest,
  durationS: number,
  warmupS: number,
  beforeMeasure?: () => Promise<unknown>,
): Promise<StreamResult> {
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 1 });
  try {
    await streamFor(agent, url, req, warmupS);
    await beforeMeasure?.();
    return summarize(await streamFor(agent, url, req, durationS));
  } finally {
    await agent.close();
  }
}

// --- internal ---

interface OneStream {
  ok: boolean;
  ttfbMs: number;
  lastMs: number;
  gapMs: number;
  chunks: number;
}

async function streamFor(agent: Agent, url: string, req: BenchRequest, durationS: number) {
  const out: OneStream[] = [];
  const end = performance.now() + durationS * 1000;
  while (performance.now() < end) out.push(await oneStream(agent, url, req));
  return out;
}

async function oneStream(agent: Agent, url: string, req: BenchRequest): Promise<OneStream> {
  const start = performance.now();
  const res = await request(`${url}${req.path}`, {
    method: req.method,
    headers: req.headers,
    body: req.body,
    dispatcher: agent,
  });
  let first = 0;
  let last = 0;
  let chunks = 0;
  for await (const _chunk of res.body) {
    last = performance.now();
    if (chunks === 0) first = last;
    chunks++;
  }
  return {
    ok: res.statusCode === 200 && chunks > 0,
    ttfbMs: first - start,
    lastMs: last - start,
    gapMs: chunks > 1 ? (last - first) / (chunks - 1) : Number.NaN,
    chunks,
  };
}

function summarize(all: OneStream[]): StreamResult {
  const ok = all.filter((s) => s.ok);
  const ttfb = ok.map((s) => s.ttfbMs).sort((a, b) => a - b);
  const gaps = ok.map((s) => s.gapMs).filter((g) => !Number.isNaN(g));
  return {
    streams: ok.length,
    failed: all.length - ok.length,
    ttfbP50Ms: percentile(ttfb, 0.5),
    ttfbMeanMs: ok.length ? sum(ttfb) / ok.length : Number.NaN,
    lastByteP50Ms: percentile(
      ok.map((s) => s.lastMs).sort((a, b) => a - b),
      0.5,
    ),
    gapMeanMs: gaps.length ? sum(gaps) / gaps.length : Number.NaN,
    chunksMean: ok.length ? sum(ok.map((s) => s.chunks)) / ok.length : Number.NaN,
  };
}

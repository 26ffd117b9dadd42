/**
 * The gateway benchmark's results: the rows measured, the figures derived from them (overhead against
 * the fake, CPU against the passthrough, and the budget checks), and their rendering as text tables.
 */
import type { ProfileSummary } from './cpu-profile.ts';
import type { LoadResult } from './load.ts';
import type { Shape } from './requests.ts';
import type { SoakResult } from './soak.ts';
import type { StreamResult } from './stream-probe.ts';
import type { ClientFigures } from './upstream-clients.ts';

export const TARGETS = {
  a: '(a) fake',
  b: '(b) passthrough',
  h: '(h) Hono passthrough',
  c: '(c) svc gateway',
} as const;
export type TargetId = keyof typeof TARGETS;

/** Budgets from the performance brief; exceeding one calls for a profile. */
export const BUDGETS = { cpuRatioCB: 2, addedP50C1Ms: 0.4, addedTtfbMs: 1 } as const;

export interface LoadRow extends LoadResult {
  shape: Shape;
  concurrency: number;
  target: TargetId;
}

export interface StreamRow extends StreamResult {
  shape: Shape;
  target: TargetId;
}

export interface Derived {
  /** p50 at concurrency 1 minus the fake's, per shape and target (b, c). */
  addedP50C1Ms: Array<{ shape: Shape; target: TargetId; ms: number }>;
  /** TTFB p50 minus the fake's, per shape and target (b, c). */
  addedTtfbMs: Array<{ shape: Shape; target: TargetId; ms: number }>;
  /** The gateway's own share: (c) minus (b), p50 at c=1 and TTFB p50, per shape. */
  gatewayOverPassthroughMs: Array<{ shape: Shape; p50C1: number; ttfb: number }>;
  /** CPU per request of (c) over (b), per shape and concurrency. */
  cpuRatioCB: Array<{ shape: Shape; concurrency: number; ratio: number }>;
  /** CPU per request of (c) over (h), the same floor on the gateway's framework (no budget). */
  cpuRatioCH: Array<{ shape: Shape; concurrency: number; ratio: number }>;
  /** Budgets exceeded, as sentences. */
  overBudget: string[];
}

export function derive(load: LoadRow[], streams: StreamRow[]): Derived {
  const addedP50C1Ms = load
    .filter((r) => r.concurrency === 1 && r.target !== 'a')
    .map((r) => ({
      shape: r.shape,
      target: r.target,
      ms: r.p50Ms - (loadOf(load, r, 'a')?.p50Ms ?? Number.NaN),
    }));
  const addedTtfbMs = streams
    .filter((r) => r.target !== 'a')
    .map((r) => ({
      shape: r.shape,
      target: r.target,
      ms: r.ttfbP50Ms - (streamOf(streams, r, 'a')?.ttfbP50Ms ?? Number.NaN),
    }));
  const cpuRatioTo = (floor: TargetId) =>
    load
      .filter((r) => r.target === 'c')
      .map((r) => ({
        shape: r.shape,
        concurrency: r.concurrency,
        ratio: r.cpuMsPerReq / (loadOf(load, r, floor)?.cpuMsPerReq ?? Number.NaN),
      }));
  const cpuRatioCB = cpuRatioTo('b');
  const cpuRatioCH = cpuRatioTo('h');
  const gatewayOverPassthroughMs = [...new Set(load.map((r) => r.shape))].map((shape) => {
    const p50 = (t: TargetId) =>
      load.find((r) => r.shape === shape && r.concurrency === 1 && r.target === t)?.p50Ms;
    const ttfb = (t: TargetId) => streams.find((r) => r.shape === shape && r.target === t)?.ttfbP50Ms;
    return {
      shape,
      p50C1: (p50('c') ?? Number.NaN) - (p50('b') ?? Number.NaN),
      ttfb: (ttfb('c') ?? Number.NaN) - (ttfb('b') ?? Number.NaN),
    };
  });
  const overBudget = [
    ...cpuRatioCB
      .filter((d) => d.ratio > BUDGETS.cpuRatioCB)
      .map(
        (d) =>
          `CPU/request (c)/(b) ${d.shape} c=${d.concurrency}: ${fmt(d.ratio, 2)}× > ${BUDGETS.cpuRatioCB}×`,
      ),
    ...addedP50C1Ms
      .filter((d) => d.target === 'c' && d.ms > BUDGETS.addedP50C1Ms)
      .map((d) => `added p50 c=1 ${d.shape}: ${fmt(d.ms, 3)} ms > ${BUDGETS.addedP50C1Ms} ms`),
    ...addedTtfbMs
      .filter((d) => d.target === 'c' && d.ms > BUDGETS.addedTtfbMs)
      .map((d) => `added TTFB ${d.shape}: ${fmt(d.ms, 3)} ms > ${BUDGETS.addedTtfbMs} ms`),
  ];
  return { addedP50C1Ms, addedTtfbMs, gatewayOverPassthroughMs, cpuRatioCB, cpuRatioCH, overBudget };
}

export function renderLoad(rows: LoadRow[]): string {
  return table(
    [
      'scenario',
      'target',
      'req/s',
      'p50 ms',
      'p99 ms',
      'CPU ms/req',
      'srv CPU',
      'rps ×(a)',
      'CPU ×(a)',
      'CPU ×(b)',
      '+p50 vs (a)',
      'fail',
      'foreign',
    ],
    rows.map((r) => {
      const a = loadOf(rows, r, 'a');
      const b = loadOf(rows, r, 'b');
      return [
        `${r.shape} c=${r.concurrency}`,
        TARGETS[r.target],
        fmt(r.rps, 0),
        fmt(r.p50Ms, 3),
        fmt(r.p99Ms, 3),
        fmt(r.cpuMsPerReq, 3),
        `${fmt(r.serverCpuPct, 0)}%`,
        a ? fmt(r.rps / a.rps, 2) : '',
        a ? fmt(r.cpuMsPerReq / a.cpuMsPerReq, 2) : '',
        b && r.target !== 'a' ? fmt(r.cpuMsPerReq / b.cpuMsPerReq, 2) : '',
        a && r.target !== 'a' ? signed(r.p50Ms - a.p50Ms, 3) : '',
        String(r.failed),
        `${fmt(r.foreignCpuPct, 0)}%`,
      ];
    }),
  );
}

export function renderStreams(rows: StreamRow[], dripMs: number): string {
  return table(
    [
      `stream (drip ${dripMs} ms)`,
      'target',
      'streams',
      'TTFB p50',
      'TTFB mean',
      'gap mean',
      'chunks',
      'last byte p50',
      '+TTFB vs (a)',
      '+gap vs (a)',
      '+last vs (a)',
      'fail',
    ],
    rows.map((r) => {
      const a = streamOf(rows, r, 'a');
      return [
        r.shape,
        TARGETS[r.target],
        String(r.streams),
        fmt(r.ttfbP50Ms, 3),
        fmt(r.ttfbMeanMs, 3),
        fmt(r.gapMeanMs, 3),
        fmt(r.chunksMean, 1),
        fmt(r.lastByteP50Ms, 3),
        a && r.target !== 'a' ? signed(r.ttfbP50Ms - a.ttfbP50Ms, 3) : '',
        a && r.target !== 'a' ? signed(r.gapMeanMs - a.gapMeanMs, 3) : '',
        a && r.target !== 'a' ? signed(r.lastByteP50Ms - a.lastByteP50Ms, 3) : '',
        String(r.failed),
      ];
    }),
  );
}

export function renderDerived(d: Derived): string {
  const lines = [
    `added p50 at c=1 vs (a), ms: ${d.addedP50C1Ms.map((x) => `${x.shape} ${x.target}=${signed(x.ms, 3)}`).join('  ')}`,
    `added TTFB p50 vs (a), ms:   ${d.addedTtfbMs.map((x) => `${x.shape} ${x.target}=${signed(x.ms, 3)}`).join('  ')}`,
    `(c) − (b), ms:               ${d.gatewayOverPassthroughMs.map((x) => `${x.shape} p50@c=1=${signed(x.p50C1, 3)} TTFB=${signed(x.ttfb, 3)}`).join('  ')}`,
    `CPU/request ratio (c)/(b):   ${d.cpuRatioCB.map((x) => `${x.shape} c=${x.concurrency}=${fmt(x.ratio, 2)}×`).join('  ')}`,
    `CPU/request ratio (c)/(h):   ${d.cpuRatioCH.map((x) => `${x.shape} c=${x.concurrency}=${fmt(x.ratio, 2)}×`).join('  ')}`,
    d.overBudget.length
      ? `OVER BUDGET: ${d.overBudget.join('; ')}`
      : `within budget (CPU ≤ ${BUDGETS.cpuRatioCB}× (b), +p50 ≤ ${BUDGETS.addedP50C1Ms} ms, +TTFB ≤ ${BUDGETS.addedTtfbMs} ms)`,
  ];
  return lines.join('\n');
}

export function renderClients(rows: ClientFigures[]): string {
  const fastest = (c: number) =>
    rows.filter((r) => r.concurrency === c).sort((x, y) => x.cpuUsPerReq - y.cpuUsPerReq)[0];
  const out = table(
    ['upstream client', 'concurrency', 'CPU µs/req', 'req/s', 'CPU ×best'],
    rows.map((r) => [
      r.client,
      String(r.concurrency),
      fmt(r.cpuUsPerReq, 1),
      fmt(r.rps, 0),
      fmt(r.cpuUsPerReq / fastest(r.concurrency).cpuUsPerReq, 2),
    ]),
  );
  const verdict = [...new Set(rows.map((r) => r.concurrency))]
    .map((c) => `c=${c}: ${fastest(c).client} uses the least CPU per request`)
    .join('; ');
  return `${out}\n${verdict}`;
}

export function renderSoak(s: SoakResult): string {
  return [
    `soak ${s.seconds} s at ${s.rate} req/s (16 connections, 6 request kinds): ${s.ok} ok, ${s.failed} failed`,
    `RSS MiB: idle ${s.idleMiB}, warm ${s.warmMiB}, end ${s.endMiB}, max ${s.maxMiB} (end − warm ${signed(s.endMiB - s.warmMiB, 1)}; second half ${signed(s.secondHalfGrowthMiB, 1)})`,
    `samples: ${s.samples.map((x) => `${x.t}s=${x.rssMiB}`).join(' ')}`,
  ].join('\n');
}

export function renderProfile(p: ProfileSummary): string {
  const list = (title: string, lines: ProfileSummary['owners']) =>
    [`${title}:`, ...lines.map((l) => `  ${fmt(l.pct, 1).padStart(5)}%  ${l.frame}`)].join('\n');
  return [
    `${p.busySamples} busy samples in the measured window (idle ${p.idlePct}% not counted); % of busy samples`,
    list('self time by owner', p.owners),
    list('charged to the nearest src/ file or package on the stack', p.ownersAttributed),
    list('self time in src/ functions', p.srcSelf),
    list(
      'charged to the innermost src/ function on the stack (its dependency, node and native calls included)',
      p.srcAttributed,
    ),
    list('inclusive time of src/ functions', p.srcTotal),
    list('self time, all frames', p.allSelf),
  ].join('\n');
}

export function fmt(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '–';
}

// --- internal ---

/** The row of target `t` in the same scenario as `r`. */
function loadOf(rows: LoadRow[], r: LoadRow, t: TargetId): LoadRow | undefined {
  return rows.find((x) => x.shape === r.shape && x.concurrency === r.concurrency && x.target === t);
}

function streamOf(rows: StreamRow[], r: StreamRow, t: TargetId): StreamRow | undefined {
  return rows.find((x) => x.shape === r.shape && x.target === t);
}

function signed(n: number, digits: number): string {
  return Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${n.toFixed(digits)}` : '–';
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

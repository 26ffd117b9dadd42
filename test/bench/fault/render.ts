/** The fault probe's results as compact text tables (one per part) and its one-line-per-part summary. */
import type { CapResult } from './cap-overshoot.ts';
import { countProblems, type HostileResult } from './hostile.ts';
import type { KillRound } from './kill-rounds.ts';
import type { RssResult } from './rss.ts';
import type { SlowResult } from './slow-clients.ts';
import type { FaultResult, RetryResult } from './upstream-faults.ts';

export function renderKill(rounds: KillRound[]): string {
  const total = (f: (r: KillRound) => number) => String(rounds.reduce((a, r) => a + f(r), 0));
  const ok = rounds.filter((r) => r.integrity === 'ok').length;
  return table(
    [
      'round',
      'answered',
      'without call_completed',
      'integrity',
      'open call_started',
      'named by gap_detected',
      'gap events',
      'open after restart',
      'max WAL MiB',
    ],
    [
      ...rounds.map((r) => [
        String(r.round),
        String(r.answered),
        String(r.answeredWithoutEvent),
        r.integrity,
        String(r.openCalls),
        String(r.namedByGap),
        String(r.gapEvents),
        String(r.openAfterRestart),
        r.maxWalMiB.toFixed(1),
      ]),
      [
        'total',
        total((r) => r.answered),
        total((r) => r.answeredWithoutEvent),
        `${ok}/${rounds.length} ok`,
        total((r) => r.openCalls),
        total((r) => r.namedByGap),
        total((r) => r.gapEvents),
        total((r) => r.openAfterRestart),
        Math.max(...rounds.map((r) => r.maxWalMiB)).toFixed(1),
      ],
    ],
  );
}

export function renderHostile(results: HostileResult[]): string {
  const c = countProblems(results);
  const head =
    `${results.length} requests, ${c.total} undocumented answers ` +
    `(5xx ${c['5xx']}, wrong status/code ${c['wrong status/code']}, wrong body shape ${c['wrong body shape']}, ` +
    `broken 200 ${c['broken 200']}, no answer ${c['no answer']})`;
  const bad = results.filter((r) => r.problem);
  if (bad.length === 0) return head;
  const rows = bad.map((r) => [r.name, r.shape, r.got, r.expect.join(' | '), r.problem ?? '']);
  return `${head}\n${table(['case', 'path', 'got', 'allowed', 'problem'], rows)}`;
}

export function renderCap(results: CapResult[], concurrent: number, callsPerCap: number): string {
  const rows = results.map((r) => [
    r.shape,
    usd(r.billedPerCallUsd),
    usd(r.capUsd),
    `${r.answered200}/${concurrent}`,
    String(r.refused429),
    String(r.other),
    usd(r.spendUsd),
    `${(r.spendUsd / r.capUsd).toFixed(2)}×`,
    `${r.overshootPct.toFixed(0)}%`,
  ]);
  const title = `${concurrent} concurrent calls (half streaming), daily cap = ${callsPerCap} × the billed cost of one call`;
  return `${title}\n${table(['shape', 'billed/call', 'cap', 'answered', '429 quota', 'other', 'spend', 'spend/cap', 'overshoot'], rows)}`;
}

export function renderRss(r: RssResult): string {
  const modes = Object.entries(r.storeModes)
    .map(([f, m]) => `${f} ${m}`)
    .join(', ');
  return [
    `${r.requests} requests (6 kinds, closed loop): ${r.ok} ok, ${r.failed} failed, ${r.rps} req/s`,
    `RSS MiB: start ${r.startMiB}, peak ${r.peakMiB}, end ${r.endMiB}; largest WAL ${r.maxWalMiB.toFixed(1)} MiB`,
    `store file modes: ${modes}`,
  ].join('\n');
}

export function renderSlow(results: SlowResult[]): string {
  return table(
    ['slow client', 'outcome', 'after s'],
    results.map((r) => [r.name, r.outcome === 'open' ? 'still open (cap)' : r.outcome, r.seconds.toFixed(1)]),
  );
}

export function renderFaults(faults: FaultResult[], retries: RetryResult[]): string {
  const a = table(
    [
      'upstream fault',
      'client got',
      'closing event',
      'error_class',
      'cost',
      'silent success',
      'seconds',
      '+RSS MiB',
    ],
    faults.map((f) => [
      f.name,
      f.got,
      f.closing.type,
      f.closing.errorClass ?? '–',
      f.closing.costUsd ?? '–',
      f.silentSuccess ? 'YES' : 'no',
      f.seconds.toFixed(1),
      f.growthMiB.toFixed(0),
    ]),
  );
  const b = table(
    ['always failing upstream', 'SDK (default retries)', 'SDK saw', 'upstream calls', 'seconds'],
    retries.map((r) => [r.name, r.sdk, r.outcome, String(r.upstreamCalls), r.seconds.toFixed(1)]),
  );
  return `${a}\n\n${b}`;
}

/** Columns whose cells are all figures are right-aligned, text columns left-aligned. */
export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = head.map((_, i) => rows.every((r) => FIGURE.test(r[i] ?? '')));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

// --- internal ---

const FIGURE = /^(?:[-+]?[\d.,]+[×%]?|\d+\/\d+|–)$/;

function usd(n: number): string {
  return n.toFixed(6);
}

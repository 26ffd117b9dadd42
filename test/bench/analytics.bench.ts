/**
 * Analytics benchmark: `npm run bench:analytics [-- --calls N] [--db FILE] [--runs 5] [--out FILE]`.
 * Seeds (or reuses, with --db of an existing file) a store of N llm.call_completed events over 30 days
 * with their route.decided events (analytics/seed.ts), starts the built `svc serve` on it, and times
 * every /analytics endpoint over the last 7 days (p50 of --runs after one warm-up), group_by=day over 30
 * days, and the HTTP export of the heavy user (~200,000 rows) with the server's RSS sampled from /proc.
 * Not a test: it prints figures against the targets of issue 12. See test/bench/README.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { formatUs } from '#src/lib/time.ts';
import { ensureBuilt, freePort, isolatedEnv, makeTempDir, SVC_BIN } from '../helpers/svc.ts';
import { DAY_US, seedAnalyticsStore } from './analytics/seed.ts';
import { cpuMsOf, rssKbOf } from './proc.ts';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000000' },
    db: { type: 'string' },
    runs: { type: 'string', default: '5' },
    out: { type: 'string' },
  },
});
const CALLS = Number(args.calls);
const RUNS = Number(args.runs);
/** The dataset ends at this UTC midnight (fixed, so a reused store means the same windows). */
const END_US = Date.UTC(2026, 10, 1) * 1000;

const TARGET_MS = 300;
const TARGET_DAY_30_MS = 500;
const TARGET_EXPORT_RSS_MB = 50;

interface Timing {
  name: string;
  p50: number;
  max: number;
  /** The server's CPU time per request (utime + stime over the timed runs): wall time minus the box's load. */
  cpu: number;
  target: number;
  bytes: number;
}

async function main(): Promise<void> {
  ensureBuilt();
  const tmp = makeTempDir('svc-analytics-bench-');
  const db = args.db ? resolve(args.db) : join(tmp.dir, 'svc.db');
  if (!existsSync(db)) {
    process.stderr.write(`seeding ${CALLS.toLocaleString('en-US')} calls into ${db} …\n`);
    const s = await seedAnalyticsStore(db, CALLS, END_US);
    process.stderr.write(
      `seeded ${s.events.toLocaleString('en-US')} events, ${s.sessions} sessions in ${s.seconds.toFixed(1)} s (${((s.seconds * 1e6) / s.events).toFixed(1)} µs/event)\n`,
    );
  }
  const server = await startServe(db, tmp.dir);
  try {
    const week = { from: formatUs(END_US - 7 * DAY_US), to: formatUs(END_US) };
    const month = { from: formatUs(END_US - 30 * DAY_US), to: formatUs(END_US) };
    const turn = firstTurn(db);
    const cases: Array<[string, string, number]> = [
      ...[
        'model',
        'provider',
        'session',
        'day',
        'hour',
        'gateway_key',
        'user',
        'team',
        'parent_session',
        'is_worker',
        'none',
      ].map((g): [string, string, number] => [
        `cost group_by=${g}`,
        `/analytics/cost?${q({ ...week, group_by: g })}`,
        TARGET_MS,
      ]),
      [
        'cost user + team filters, no workers',
        `/analytics/cost?${q({ ...week, user: 'usr_7', team: 'team_3', include_workers: 'false' })}`,
        TARGET_MS,
      ],
      ['cache_effectiveness', `/analytics/cache_effectiveness?${q(week)}`, TARGET_MS],
      ['routing', `/analytics/routing?${q(week)}`, TARGET_MS],
      ['reliability', `/analytics/reliability?${q(week)}`, TARGET_MS],
      ['savings', `/analytics/savings?${q(week)}`, TARGET_MS],
      ['by_key', `/analytics/by_key?${q(week)}`, TARGET_MS],
      ['by_team', `/analytics/by_team?${q(week)}`, TARGET_MS],
      ['sessions order=recency', '/analytics/sessions?order=recency&limit=25', TARGET_MS],
      ['sessions order=cost', '/analytics/sessions?order=cost&limit=25', TARGET_MS],
      ['turns/{id}', `/analytics/turns/${turn}`, TARGET_MS],
      ['cost group_by=day, 30 days', `/analytics/cost?${q({ ...month, group_by: 'day' })}`, TARGET_DAY_30_MS],
    ];
    const timings: Timing[] = [];
    for (const [name, path, target] of cases)
      timings.push({ name, target, ...(await time(server.url + path, server.pid)) });
    const exported = await measureExport(server, db);
    report(timings, exported);
    if (args.out)
      writeFileSync(
        args.out,
        `${JSON.stringify({ calls: CALLS, runs: RUNS, timings, export: exported, loadavg: loadavg() }, null, 2)}\n`,
      );
  } finally {
    await server.stop();
    if (!args.db) tmp.cleanup();
  }
}

// --- internal ---

interface Serve {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

async function startServe(db: string, home: string): Promise<Serve> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [SVC_BIN, 'serve', '--port', String(port)], {
    env: isolatedEnv(home, { SVC_DB_PATH: db }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`svc serve exited: ${stderr}`);
    if (
      await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 100)); // the first open of an older store builds the indexes
  }
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

/** One warm-up, then RUNS timed requests (to the last byte of the body), with the server's CPU time. */
async function time(
  url: string,
  pid: number,
): Promise<{ p50: number; max: number; cpu: number; bytes: number }> {
  let bytes = 0;
  const once = async () => {
    const started = performance.now();
    const res = await fetch(url);
    const body = await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: ${res.status} ${new TextDecoder().decode(body).slice(0, 200)}`);
    bytes = body.byteLength;
    return performance.now() - started;
  };
  await once();
  const ms: number[] = [];
  const cpu0 = cpuMsOf(pid);
  for (let i = 0; i < RUNS; i++) ms.push(await once());
  const cpu = (cpuMsOf(pid) - cpu0) / RUNS;
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor((ms.length - 1) / 2)], max: ms[ms.length - 1], cpu, bytes };
}

/** Streams the heavy user's export, counting it without keeping it, while sampling the server's RSS. */
async function measureExport(server: Serve, db: string) {
  const before = rssKbOf(server.pid);
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKbOf(server.pid));
  }, 5);
  const started = performance.now();
  const res = await fetch(`${server.url}/analytics/user/usr_heavy/export`);
  const declared = Number(res.headers.get('x-svc-row-count'));
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    for (const b of chunk) if (b === 10) lines++;
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, rssKbOf(server.pid));
  let audited = 0;
  for (let i = 0; i < 100 && audited === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const d = new DatabaseSync(db, { readOnly: true });
    audited = Number(
      (
        d.prepare("SELECT count(*) AS n FROM events WHERE type = 'analytics.user_exported'").get() as {
          n: number;
        }
      ).n,
    );
    d.close();
  }
  return {
    rows: lines,
    declared,
    bytes,
    seconds,
    rssBeforeMb: before / 1024,
    rssGrowthMb: (peak - before) / 1024,
    audited,
  };
}

function report(timings: Timing[], e: Awaited<ReturnType<typeof measureExport>>): void {
  const lines = [
    `analytics benchmark: ${CALLS.toLocaleString('en-US')} llm.call_completed over 30 days, p50 of ${RUNS} after a warm-up, load average ${loadavg()[0].toFixed(2)}`,
    '',
    `${'endpoint'.padEnd(40)} ${'p50 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'cpu ms'.padStart(8)} ${'target'.padStart(7)} ${'bytes'.padStart(9)}`,
    ...timings.map(
      (t) =>
        `${t.name.padEnd(40)} ${t.p50.toFixed(0).padStart(8)} ${t.max.toFixed(0).padStart(8)} ${t.cpu.toFixed(0).padStart(8)} ${(t.p50 <= t.target ? `≤${t.target}` : `>${t.target}!`).padStart(7)} ${String(t.bytes).padStart(9)}`,
    ),
    '',
    `export of usr_heavy: ${e.rows.toLocaleString('en-US')} rows (X-Svc-Row-Count ${e.declared.toLocaleString('en-US')}), ${(e.bytes / 1e6).toFixed(1)} MB in ${e.seconds.toFixed(1)} s; server RSS ${e.rssBeforeMb.toFixed(0)} MB before, growth ${e.rssGrowthMb.toFixed(1)} MB (target ≤ ${TARGET_EXPORT_RSS_MB}); audit events ${e.audited}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

function q(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

function firstTurn(db: string): string {
  const d = new DatabaseSync(db, { readOnly: true });
  try {
    return (
      d
        .prepare(
          "SELECT turn_id FROM events WHERE type = 'llm.call_completed' AND session_id IS NOT NULL LIMIT 1",
        )
        .get() as {
        turn_id: string;
      }
    ).turn_id;
  } finally {
    d.close();
  }
}

await main();

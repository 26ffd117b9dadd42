/**
 * Gateway overhead benchmark: `npm run bench [-- --quick] [--out FILE] [--soak S] [--profile DIR] [--only …]`.
 * Targets: (a) the fake provider directly, (b) the do-nothing node:http passthrough proxy (the floor), (h) the
 * same passthrough on Hono (the gateway's framework), (c) the built `svc gateway`
 * (auth, routing, pricing, trace store, metrics), each alone on core 1; the load generator (this
 * process) and the fake upstream of (b) and (c) share core 0. See test/bench/README.md.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../helpers/svc.ts';
import { summarizeProfile } from './cpu-profile.ts';
import { runLoad } from './load.ts';
import { pinToCore, waitForQuiet } from './proc.ts';
import { type BenchProcess, startFake, startGateway, startPassthrough } from './processes.ts';
import * as report from './report.ts';
import { benchRequest, SHAPES } from './requests.ts';
import { runSoak } from './soak.ts';
import { runStreamProbe } from './stream-probe.ts';
import { compareUpstreamClients } from './upstream-clients.ts';

const LOAD_CORE = 0;
const SERVER_CORE = 1;
const CONCURRENCIES = [1, 64];
const DRIP_MS = 5;
/** A window in which other processes used more than this % of one core is measured once more. */
const NOISY_PCT = 30;
const PARTS = ['load', 'stream', 'clients', 'profile', 'soak'] as const;
type Part = (typeof PARTS)[number];

const PLANS = {
  full: {
    warmupS: 1,
    firstWarmupS: 3,
    durationS: 5,
    streamWarmupS: 0.3,
    streamS: 2.5,
    clientRequests: 800,
    clientRounds: 2,
    profileS: 10,
  },
  quick: {
    warmupS: 0.2,
    firstWarmupS: 0.5,
    durationS: 0.8,
    streamWarmupS: 0.15,
    streamS: 0.5,
    clientRequests: 200,
    clientRounds: 1,
    profileS: 3,
  },
};

interface Target {
  id: report.TargetId;
  proc: BenchProcess;
  token: string;
  warmed: boolean;
}

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    soak: { type: 'string' },
    'soak-rate': { type: 'string', default: '200' },
    profile: { type: 'string' },
    'profile-connections': { type: 'string', default: '64' },
    only: { type: 'string' },
  },
});
const plan = args.quick ? PLANS.quick : PLANS.full;
const parts = selectParts();
const owned: BenchProcess[] = [];
let quietWaitMs = 0;
/** Before each measured window: wait (bounded) for other work on the box to stop. */
const quiet = async () => {
  quietWaitMs += await waitForQuiet();
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

pinToCore(process.pid, LOAD_CORE);
const results: Record<string, unknown> = { meta: meta() };
try {
  await run();
} finally {
  await stopAll();
}
(results.meta as Record<string, unknown>).quietWaitS = Math.round(quietWaitMs / 100) / 10;
if (quietWaitMs > 1000)
  note(`waited ${(quietWaitMs / 1000).toFixed(1)} s in total for other work on the box to stop`);
if (args.out) {
  writeFileSync(args.out, `${JSON.stringify(results, null, 2)}\n`);
  note(`results written to ${args.out}`);
}

// --- internal ---

async function run(): Promise<void> {
  note(`plan ${args.quick ? 'quick' : 'full'}: ${[...parts].join(', ')}`);
  const upstream = own(await startFake(LOAD_CORE));
  if (parts.has('load') || parts.has('stream')) {
    const gw = own(await startGateway(SERVER_CORE, upstream.url));
    const targets: Target[] = [
      { id: 'a', proc: own(await startFake(SERVER_CORE)), token: 'sk-bench', warmed: false },
      {
        id: 'b',
        proc: own(await startPassthrough(SERVER_CORE, upstream.url)),
        token: 'sk-bench',
        warmed: false,
      },
      {
        id: 'h',
        proc: own(await startPassthrough(SERVER_CORE, upstream.url, 'hono')),
        token: 'sk-bench',
        warmed: false,
      },
      { id: 'c', proc: gw, token: gw.token, warmed: false },
    ];
    const load = parts.has('load') ? await measureLoad(targets, upstream.pid) : [];
    const streams = parts.has('stream') ? await measureStreams(targets) : [];
    for (const t of targets) await stop(t.proc);
    print('Non-streaming (closed loop, autocannon)', report.renderLoad(load));
    print('Streaming (one stream at a time, own undici client)', report.renderStreams(streams, DRIP_MS));
    const derived = report.derive(load, streams);
    print('Derived', report.renderDerived(derived));
    Object.assign(results, { load, streams, derived });
  }
  if (parts.has('clients')) {
    note('upstream client micro-benchmark');
    const rows = await compareUpstreamClients(
      upstream.url,
      SERVER_CORE,
      plan.clientRequests,
      plan.clientRounds,
    );
    print(
      'Upstream client: same call to the fake, client process pinned to core 1',
      report.renderClients(rows),
    );
    results.upstreamClients = rows;
  }
  if (parts.has('profile')) results.profile = await profileGateway(upstream);
  if (parts.has('soak')) results.soak = await soak(upstream);
}

async function measureLoad(targets: Target[], upstreamPid: number): Promise<report.LoadRow[]> {
  // every target first serves every shape for a while, so the first measured shape does not also pay the
  // JIT warm-up of code the later ones share (it used to make whichever shape came first look the dearest)
  for (const t of targets) {
    if (t.warmed) continue;
    note(`warm-up ${report.TARGETS[t.id]}: every shape in turn`);
    await runLoad({
      url: t.proc.url,
      request: SHAPES.map((shape) => benchRequest(shape, t.token)),
      connections: 8,
      durationS: plan.firstWarmupS,
      warmupS: 0,
      serverPid: t.proc.pid,
      otherPids: [upstreamPid],
    });
    t.warmed = true;
  }
  const rows: report.LoadRow[] = [];
  for (const shape of SHAPES) {
    for (const concurrency of CONCURRENCIES) {
      for (const t of targets) {
        note(`load ${shape} c=${concurrency} ${report.TARGETS[t.id]}`);
        const options = {
          url: t.proc.url,
          request: benchRequest(shape, t.token),
          connections: concurrency,
          durationS: plan.durationS,
          warmupS: t.warmed ? plan.warmupS : plan.firstWarmupS,
          serverPid: t.proc.pid,
          otherPids: [upstreamPid],
          beforeMeasure: quiet,
        };
        let result = await runLoad(options);
        if (result.foreignCpuPct > NOISY_PCT) {
          note(`  other work used ${result.foreignCpuPct.toFixed(0)}% of a core: measuring once more`);
          const again = await runLoad({ ...options, warmupS: plan.warmupS });
          if (again.foreignCpuPct < result.foreignCpuPct) result = again;
        }
        t.warmed = true;
        rows.push({ shape, concurrency, target: t.id, ...result });
      }
    }
  }
  return rows;
}

async function measureStreams(targets: Target[]): Promise<report.StreamRow[]> {
  const rows: report.StreamRow[] = [];
  for (const shape of SHAPES) {
    for (const t of targets) {
      note(`stream ${shape} ${report.TARGETS[t.id]}`);
      const req = benchRequest(shape, t.token, { stream: true, dripMs: DRIP_MS });
      const result = await runStreamProbe(t.proc.url, req, plan.streamS, plan.streamWarmupS, quiet);
      rows.push({ shape, target: t.id, ...result });
    }
  }
  return rows;
}

/** A fresh gateway under `node --cpu-prof`, non-streaming load cycling through the shapes. */
async function profileGateway(upstream: BenchProcess) {
  const dir = resolve(args.profile ?? join(tmpdir(), 'svc-bench-profile'));
  const connections = Number(args['profile-connections']);
  note(`profiling svc gateway at c=${connections} for ${plan.profileS} s into ${dir}`);
  const gw = own(await startGateway(SERVER_CORE, upstream.url, ['--cpu-prof', `--cpu-prof-dir=${dir}`]));
  const before = new Set(listProfiles(dir));
  const nowUs = () => Number(process.hrtime.bigint() / 1000n); // the profile's clock (CLOCK_MONOTONIC)
  let fromUs = 0;
  const load = await runLoad({
    url: gw.url,
    request: SHAPES.map((shape) => benchRequest(shape, gw.token)),
    connections,
    durationS: plan.profileS,
    warmupS: plan.warmupS,
    serverPid: gw.pid,
    otherPids: [upstream.pid],
    beforeMeasure: async () => {
      await quiet();
      fromUs = nowUs();
    },
  });
  const toUs = nowUs();
  await stop(gw); // the profile is written at exit
  const file = listProfiles(dir).find((f) => !before.has(f));
  if (!file) throw new Error(`no new .cpuprofile in ${dir}`);
  const summary = summarizeProfile(join(dir, file), { top: 20, windowUs: [fromUs, toUs] });
  const title = `CPU profile of svc gateway, c=${connections}, ${SHAPES.join('/')} in turn`;
  const figures = `${Math.round(load.rps)} req/s, ${load.cpuMsPerReq.toFixed(3)} CPU ms/req under the profiler`;
  print(`${title}: ${figures} (${join(dir, file)})`, report.renderProfile(summary));
  return { file: join(dir, file), connections, rps: load.rps, cpuMsPerReq: load.cpuMsPerReq, ...summary };
}

async function soak(upstream: BenchProcess) {
  const seconds = Number(args.soak);
  const rate = Number(args['soak-rate']);
  note(`soak: ${seconds} s at ${rate} req/s against a fresh svc gateway`);
  const gw = own(await startGateway(SERVER_CORE, upstream.url));
  const intervalS = Math.min(5, Math.max(1, seconds / 30));
  const result = await runSoak(gw, [upstream.pid], { seconds, rate, intervalS });
  await stop(gw);
  print('Memory soak (svc gateway RSS from /proc/<pid>/status)', report.renderSoak(result));
  return result;
}

function selectParts(): Set<Part> {
  const listed = args.only?.split(',').map((p) => p.trim());
  for (const p of listed ?? []) {
    if (!PARTS.includes(p as Part)) throw new Error(`--only: unknown part '${p}' (${PARTS.join(', ')})`);
  }
  const chosen = new Set<Part>((listed as Part[] | undefined) ?? ['load', 'stream', 'clients']);
  if (!listed && args.profile !== undefined) chosen.add('profile');
  if (!listed && args.soak !== undefined) chosen.add('soak');
  if (chosen.has('soak') && !(Number(args.soak) > 0)) throw new Error('--soak needs a number of seconds');
  return chosen;
}

function meta() {
  const git = (...a: string[]) => {
    try {
      return execFileSync('git', a, { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  };
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model,
    cores: cpus().length,
    commit: git('rev-parse', '--short', 'HEAD'),
    srcDirty: git('status', '--porcelain', 'src') !== '',
    loadAverage1m: loadavg()[0],
    plan: { name: args.quick ? 'quick' : 'full', ...plan, concurrencies: CONCURRENCIES, dripMs: DRIP_MS },
    pinning: `targets on core ${SERVER_CORE}; load generator and the fake upstream of (b)/(c) on core ${LOAD_CORE}`,
  };
}

function listProfiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  } catch {
    return [];
  }
}

function own<P extends BenchProcess>(p: P): P {
  owned.push(p);
  return p;
}

async function stop(p: BenchProcess): Promise<void> {
  const at = owned.indexOf(p);
  if (at >= 0) owned.splice(at, 1);
  await p.stop();
}

async function stopAll(): Promise<void> {
  await Promise.all(owned.splice(0).map((p) => p.stop()));
}

function print(title: string, body: string): void {
  if (body.trim() === '') return;
  process.stdout.write(`\n== ${title}\n${body}\n`);
}

function note(line: string): void {
  process.stderr.write(`[bench +${(performance.now() / 1000).toFixed(1)}s] ${line}\n`);
}

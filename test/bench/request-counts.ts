/**
 * What a server does per request, counted rather than timed (other work on the box changes CPU times, not
 * these counts): `node test/bench/request-counts.ts [--shape openai] [--connections 1] [--requests 3000]
 * [--strace] [--stream] [--targets bhc]`. The floor (b), its Hono twin (h) and the built `svc gateway` (c) in
 * turn (`--targets c`: the gateway alone; `--stream`: streamed requests), alone on core 1
 * with the fake on core 0, each warmed up and then given `--requests` requests; per request: CPU and
 * context switches (wakeups) per thread from /proc/<pid>/task, bytes allocated on the JS heap, garbage
 * collections, their pause and the bytes scavenges promoted to the old generation (gc-window.ts), and with
 * `--strace` the system calls of all threads (strace -c; it slows the server, so CPU figures of that pass
 * are not comparable).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, ROOT, SVC_BIN } from '../helpers/svc.ts';
import { runLoad } from './load.ts';
import { pinToCore } from './proc.ts';
import { type BenchProcess, createGatewayHome, spawnPinned, startFake } from './processes.ts';
import { benchRequest, type Shape } from './requests.ts';

const { values: args } = parseArgs({
  options: {
    shape: { type: 'string', default: 'openai' },
    connections: { type: 'string', default: '1' },
    requests: { type: 'string', default: '3000' },
    strace: { type: 'boolean', default: false },
    stream: { type: 'boolean', default: false },
    targets: { type: 'string', default: 'bhc' },
  },
});
const shape = args.shape as Shape;
const connections = Number(args.connections);
const requests = Number(args.requests);
const dir = mkdtempSync(join(tmpdir(), 'svc-counts-'));
const hook = ['--import', join(ROOT, 'test/bench/gc-window.ts')];

pinToCore(process.pid, 0);
const fake = await startFake(0);
const home = await createGatewayHome(fake.url);
const env = { ...process.env, GC_WINDOW_DIR: dir };
const targets: Array<[string, (port: number) => Promise<BenchProcess>, string]> = [
  [
    'floor (b)',
    (port) =>
      spawnPinned('b', 1, [...hook, bench('passthrough-proxy.ts'), String(port), fake.url], { port, env }),
    'x',
  ],
  [
    'hono (h)',
    (port) =>
      spawnPinned('h', 1, [...hook, bench('passthrough-hono.ts'), String(port), fake.url], { port, env }),
    'x',
  ],
  [
    'svc gateway (c)',
    (port) =>
      spawnPinned('c', 1, [...hook, SVC_BIN, 'gateway', '--port', String(port)], {
        port,
        env: { ...home.files.env, GC_WINDOW_DIR: dir },
        readyPath: '/healthz',
      }),
    home.token,
  ],
];
try {
  for (const [name, start, token] of targets) {
    if (!args.targets.includes(name.at(-2) ?? '')) continue;
    const server = await start(await freePort());
    try {
      await measure(name, server, token);
    } finally {
      await server.stop();
    }
  }
} finally {
  await fake.stop();
  home.cleanup();
  rmSync(dir, { recursive: true, force: true });
}

async function measure(name: string, server: BenchProcess, token: string): Promise<void> {
  const request = benchRequest(shape, token, { stream: args.stream });
  const load = (n: number, c = connections) =>
    runLoad({
      url: server.url,
      request,
      connections: c,
      durationS: 600,
      amount: n,
      warmupS: 0,
      serverPid: server.pid,
      otherPids: [fake.pid],
    });
  await load(4000, 8); // JIT, pools
  const before = threads(server.pid);
  process.kill(server.pid, 'SIGUSR2');
  const r = await load(requests);
  process.kill(server.pid, 'SIGUSR2');
  const after = threads(server.pid);
  const gcFile = join(dir, `gc-${server.pid}.json`);
  while (!existsSync(gcFile)) await new Promise((res) => setTimeout(res, 50));
  await new Promise((res) => setTimeout(res, 50));
  const gc = summarizeGc(JSON.parse(readFileSync(gcFile, 'utf8')), r.ok);
  console.log(
    `${name}: ${shape} c=${connections}, ${r.ok} requests (${r.failed} failed), CPU ${r.cpuMsPerReq.toFixed(3)} ms/request, foreign load ${r.foreignCpuPct.toFixed(0)} %`,
  );
  console.log(
    `  JS heap: ${gc.allocatedKiB.toFixed(1)} KiB allocated, ${gc.promotedKiB.toFixed(2)} KiB promoted by scavenges, ` +
      `${gc.perThousand.toFixed(2)} GCs per 1,000 (${gc.kinds}), GC pause ${gc.pauseUs.toFixed(1)} µs`,
  );
  console.log('  thread            user ms  sys ms  wakeups  preempted');
  for (const [tid, t] of after) {
    const b = before.get(tid) ?? { name: t.name, ticks: [0, 0, 0, 0] };
    const d = t.ticks.map((x, i) => (x - b.ticks[i]) / r.ok);
    if (d.every((x) => x === 0)) continue;
    console.log(
      `  ${`${t.name} ${tid}`.padEnd(18)}${d.map((x, i) => (i < 2 ? x * 10 : x).toFixed(3).padStart(8)).join(' ')}`,
    );
  }
  if (args.strace) await straceCounts(server, load);
}

async function straceCounts(server: BenchProcess, load: (n: number) => Promise<unknown>): Promise<void> {
  const out = join(dir, `strace-${server.pid}.txt`);
  const tids = readdirSync(`/proc/${server.pid}/task`).join(',');
  const strace: ChildProcess = spawn('strace', ['-c', '-f', '-o', out, '-p', tids], { stdio: 'ignore' });
  await new Promise((res) => setTimeout(res, 1000)); // attached
  await load(requests);
  strace.kill('SIGINT');
  await new Promise((res) => strace.once('exit', res));
  const rows = readFileSync(out, 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 5 && /^\d+$/.test(f[3]) && f.at(-1) !== 'total');
  const per = rows
    .map((f) => [f.at(-1)!, Number(f[3]) / requests] as const)
    .filter(([, n]) => n >= 0.01)
    .sort((a, b) => b[1] - a[1]);
  const total = per.reduce((a, [, n]) => a + n, 0);
  console.log(`  syscalls per request (strace -c, all threads): ${total.toFixed(1)}`);
  console.log(`    ${per.map(([s, n]) => `${s} ${n.toFixed(2)}`).join(', ')}`);
}

/** utime, stime (clock ticks), voluntary and involuntary context switches of each thread. */
function threads(pid: number): Map<string, { name: string; ticks: number[] }> {
  const m = new Map<string, { name: string; ticks: number[] }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ctx = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
      m.set(tid, {
        name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        ticks: [
          Number(f[11]),
          Number(f[12]),
          ctx('voluntary_ctxt_switches'),
          ctx('nonvoluntary_ctxt_switches'),
        ],
      });
    } catch {
      // the thread ended meanwhile
    }
  }
  return m;
}

interface HeapStats {
  usedHeapSize: number;
}
interface SpaceStats {
  spaceName: string;
  spaceUsedSize: number;
}
interface GcStat {
  gcType: string;
  cost: number;
  beforeGC: { heapStatistics: HeapStats; heapSpaceStatistics: SpaceStats[] };
  afterGC: { heapStatistics: HeapStats; heapSpaceStatistics: SpaceStats[] };
}

function summarizeGc(g: { startUsed: number; endUsed: number; statistics: GcStat[] }, n: number) {
  let allocated = 0;
  let promoted = 0;
  let pause = 0;
  let last = g.startUsed;
  const kinds = new Map<string, number>();
  const old = (spaces: SpaceStats[]) =>
    spaces.filter((s) => s.spaceName !== 'new_space').reduce((a, s) => a + s.spaceUsedSize, 0);
  for (const s of g.statistics) {
    allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - last);
    last = s.afterGC.heapStatistics.usedHeapSize;
    pause += s.cost;
    kinds.set(s.gcType, (kinds.get(s.gcType) ?? 0) + 1);
    if (s.gcType === 'Scavenge')
      promoted += old(s.afterGC.heapSpaceStatistics) - old(s.beforeGC.heapSpaceStatistics);
  }
  allocated += Math.max(0, g.endUsed - last);
  return {
    allocatedKiB: allocated / n / 1024,
    promotedKiB: promoted / n / 1024,
    perThousand: (g.statistics.length * 1000) / n,
    kinds: [...kinds].map(([k, v]) => `${v} ${k}`).join(', ') || 'none',
    pauseUs: pause / n,
  };
}

function bench(file: string): string {
  return join(ROOT, 'test/bench', file);
}

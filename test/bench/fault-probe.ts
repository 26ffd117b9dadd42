/**
 * Fault probe of the built `svc gateway` (issue 17): `npm run fault-probe [-- --quick] [--out FILE]
 * [--only kill,hostile,cap,rss,slow,upstream] [--rounds N] [--load-seconds S] [--rss-requests N] …`.
 * The fake provider runs as its own process; each part starts its own gateway. It prints counts, not
 * verdicts: answered requests without their event after kill -9, undocumented answers to hostile
 * requests, spend past a cap under concurrency, RSS after many requests, slow clients, upstream faults.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ROOT } from '../helpers/svc.ts';
import { runCapOvershoot } from './fault/cap-overshoot.ts';
import { startCountingProxy } from './fault/counting-proxy.ts';
import { runHostile } from './fault/hostile.ts';
import { hostileCases } from './fault/hostile-cases.ts';
import { runKillRounds } from './fault/kill-rounds.ts';
import * as render from './fault/render.ts';
import { runRss } from './fault/rss.ts';
import { runSlowClients } from './fault/slow-clients.ts';
import { ALWAYS_FAILING, FAULTS, runFaults, runRetryCounts } from './fault/upstream-faults.ts';
import { pinToCore } from './proc.ts';
import {
  type BenchProcess,
  createGatewayHome,
  type GatewayHome,
  launchGateway,
  startFake,
} from './processes.ts';

const LOAD_CORE = 0;
const SERVER_CORE = 1;
const MAX_BODY_BYTES = 32 * 1024 * 1024; // the gateway's default SVC_GATEWAY_MAX_BODY_BYTES
const PARTS = ['kill', 'hostile', 'cap', 'rss', 'slow', 'upstream'] as const;
type Part = (typeof PARTS)[number];

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    only: { type: 'string' },
    rounds: { type: 'string' },
    'load-seconds': { type: 'string' },
    connections: { type: 'string', default: '32' },
    'rss-requests': { type: 'string' },
    'cap-concurrent': { type: 'string', default: '50' },
    'slow-cap': { type: 'string' },
  },
});
const plan = {
  rounds: Number(args.rounds ?? (args.quick ? 2 : 5)),
  loadSeconds: Number(args['load-seconds'] ?? (args.quick ? 2 : 3)),
  connections: Number(args.connections),
  rssRequests: Number(args['rss-requests'] ?? (args.quick ? 5000 : 30_000)),
  capConcurrent: Number(args['cap-concurrent']),
  callsPerCap: 10,
  slowCapS: Number(args['slow-cap'] ?? (args.quick ? 15 : 100)),
};
const parts = selectParts();
const owned: Array<{ stop(): Promise<void> }> = [];
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

pinToCore(process.pid, LOAD_CORE);
const results: Record<string, unknown> = { meta: meta() };
try {
  await run();
} finally {
  await stopAll();
}
if (args.out) {
  writeFileSync(args.out, `${JSON.stringify(results, null, 2)}\n`);
  note(`results written to ${args.out}`);
}

// --- internal ---

async function run(): Promise<void> {
  note(`plan ${args.quick ? 'quick' : 'full'}: ${[...parts].join(', ')} ${JSON.stringify(plan)}`);
  const fake = own(await startFake(LOAD_CORE));
  // the slow clients only wait: they run beside the other parts, on a gateway of their own
  const slow = parts.has('slow') ? slowClients(fake.url) : undefined;
  if (parts.has('kill')) {
    note(
      `kill -9 under load: ${plan.rounds} rounds of ${plan.loadSeconds} s at ${plan.connections} connections`,
    );
    const rounds = await runKillRounds({
      upstream: fake.url,
      core: SERVER_CORE,
      rounds: plan.rounds,
      seconds: plan.loadSeconds,
      connections: plan.connections,
      restartMs: 1500,
      note,
    });
    print(
      'kill -9 under load (answered = 200 with the whole body and svc-request-id)',
      render.renderKill(rounds),
    );
    results.kill = rounds;
  }
  if (parts.has('hostile')) {
    const { gw } = await gateway(fake.url);
    const cases = hostileCases(gw.token, MAX_BODY_BYTES);
    note(`hostile inputs: ${cases.length} requests`);
    const hostile = await runHostile(gw.url, cases);
    print('hostile inputs', render.renderHostile(hostile));
    results.hostile = hostile;
  }
  if (parts.has('cap')) {
    note(`cap overshoot: ${plan.capConcurrent} concurrent CJK calls per shape`);
    const { gw, home } = await gateway(fake.url);
    const cap = await runCapOvershoot({
      url: gw.url,
      home,
      concurrent: plan.capConcurrent,
      callsPerCap: plan.callsPerCap,
    });
    print(
      'concurrent cap overshoot, 4,000 CJK characters, max_tokens 200',
      render.renderCap(cap, plan.capConcurrent, plan.callsPerCap),
    );
    results.cap = cap;
  }
  if (parts.has('rss')) {
    note(`RSS: ${plan.rssRequests} requests`);
    const { gw, home } = await gateway(fake.url);
    const rss = await runRss(gw, home, [fake.pid], {
      requests: plan.rssRequests,
      connections: plan.connections,
    });
    print('memory (VmRSS of svc gateway)', render.renderRss(rss));
    results.rss = rss;
  }
  if (parts.has('upstream')) await upstreamFaults(fake.url);
  if (slow) {
    note('waiting for the slow clients');
    const r = await slow;
    print('slow clients', render.renderSlow(r));
    results.slow = r;
  }
}

async function slowClients(upstream: string) {
  const { gw } = await gateway(upstream);
  return runSlowClients(gw.url, gw.token, plan.slowCapS);
}

async function upstreamFaults(upstream: string): Promise<void> {
  note('upstream faults through the counting proxy');
  const proxy = await startCountingProxy(upstream);
  owned.push({ stop: () => proxy.close() });
  const { gw, home } = await gateway(proxy.url);
  const faults = await runFaults(gw, home.files.db, FAULTS);
  const retries = await runRetryCounts(gw.url, gw.token, proxy, ALWAYS_FAILING);
  print('upstream faults', render.renderFaults(faults, retries));
  results.upstream = { faults, retries };
}

/** A fresh home and gateway, both released at the end. */
async function gateway(
  upstream: string,
): Promise<{ gw: BenchProcess & { token: string }; home: GatewayHome }> {
  const home = await createGatewayHome(upstream);
  owned.push({ stop: async () => home.cleanup() });
  const gw = own(await launchGateway(SERVER_CORE, home));
  return { gw, home };
}

function selectParts(): Set<Part> {
  const listed = args.only?.split(',').map((p) => p.trim());
  for (const p of listed ?? []) {
    if (!PARTS.includes(p as Part)) throw new Error(`--only: unknown part '${p}' (${PARTS.join(', ')})`);
  }
  return new Set<Part>((listed as Part[] | undefined) ?? PARTS);
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
    plan: { name: args.quick ? 'quick' : 'full', ...plan },
  };
}

function own<P extends { stop(): Promise<void> }>(p: P): P {
  owned.push(p);
  return p;
}

async function stopAll(): Promise<void> {
  // gateways first (they flush into their homes), then homes and the rest, newest first
  for (const p of owned.splice(0).reverse()) await p.stop().catch(() => {});
}

function print(title: string, body: string): void {
  process.stdout.write(`\n== ${title}\n${body}\n`);
}

function note(line: string): void {
  process.stderr.write(`[fault-probe +${(performance.now() / 1000).toFixed(1)}s] ${line}\n`);
}

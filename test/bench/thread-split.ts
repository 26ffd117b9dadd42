/** Scratch: per-thread CPU of svc gateway under c=N load of one shape. */
import { readdirSync, readFileSync } from 'node:fs';
import { runLoad } from './load.ts';
import { startFake, startGateway, startPassthrough } from './processes.ts';
import { benchRequest, type Shape } from './requests.ts';
import { pinToCore } from './proc.ts';

pinToCore(process.pid, 0);
const shape = (process.argv[2] ?? 'anthropic') as Shape;
const conns = Number(process.argv[3] ?? 1);
const seconds = Number(process.argv[4] ?? 8);
const fake = await startFake(0);
const gw = process.env.TARGET === 'b' ? await startPassthrough(1, fake.url) : await startGateway(1, fake.url, process.env.NODEFLAGS ? process.env.NODEFLAGS.split(' ') : []);
const token = 'token' in gw ? (gw as { token: string }).token : 'sk-bench';
const threads = () => {
  const out = new Map<string, number>();
  for (const t of readdirSync(`/proc/${gw.pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${gw.pid}/task/${t}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(f[11]) + Number(f[12]);
      out.set(`${comm}#${t}`, ticks);
    } catch {}
  }
  return out;
};
let before = new Map<string, number>();
const r = await runLoad({
  url: gw.url,
  request: benchRequest(shape, token),
  connections: conns,
  durationS: seconds,
  warmupS: 2,
  serverPid: gw.pid,
  otherPids: [fake.pid],
  beforeMeasure: async () => {
    before = threads();
    if (process.env.HOOK) {
      const { spawn } = await import('node:child_process');
      spawn('bash', ['-c', process.env.HOOK.replaceAll('{pid}', String(gw.pid))], { stdio: 'inherit' });
    }
    if (process.env.PERF) {
      const { spawn } = await import('node:child_process');
      spawn('perf', ['record', '-F', '2000', '-g', '-p', String(gw.pid), '-o', process.env.PERF, '--', 'sleep', String(seconds - 1)], { stdio: 'ignore' });
    }
  },
});
const after = threads();
const total = r.rps * seconds;
console.log(`${shape} c=${conns}: ${Math.round(r.rps)} req/s, ${r.cpuMsPerReq.toFixed(3)} CPU ms/req`);
const rows = [...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, d]) => d > 0);
rows.sort((a, b) => b[1] - a[1]);
for (const [k, d] of rows) console.log(`  ${k.padEnd(24)} ${((d * 10 * 1000) / total).toFixed(1)} µs/req`);
await gw.stop();
console.log(gw.stderr().split('\n').filter((l) => l.includes('SCRATCH')).join('\n'));
await fake.stop();

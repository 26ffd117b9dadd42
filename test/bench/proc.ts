/**
 * Linux process accounting for the gateway benchmark: CPU time and RSS of a pid from /proc, the machine's
 * busy time (to spot other work on the box), and pinning a pid to one core with taskset.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime + stime of every thread of `pid`, in ms (resolution 1000 / CLK_TCK, usually 10 ms). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at field 3; utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** Resident set size of `pid` in KiB (VmRSS). */
export function rssKbOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return m ? Number(m[1]) : 0;
}

/** Busy time of every core since boot (all states but idle and iowait), in ms. */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  return ((total - ticks[3] - ticks[4]) * 1000) / CLK_TCK;
}

/** Pins every thread of `pid` (and the threads it starts later) to `core`. */
export function pinToCore(pid: number, core: number): void {
  execFileSync('taskset', ['-a', '-c', '-p', String(core), String(pid)], { stdio: 'ignore' });
}

/**
 * Waits, up to `maxMs`, until the whole machine was busy less than `pct` % of one core over a short window
 * (other work on the box skews every figure); resolves with the time waited.
 */
export async function waitForQuiet(pct = 25, maxMs = 5_000): Promise<number> {
  const start = performance.now();
  for (;;) {
    const busy0 = machineBusyMs();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 150));
    const busyPct = ((machineBusyMs() - busy0) / (performance.now() - t0)) * 100;
    const waited = performance.now() - start;
    if (busyPct < pct || waited > maxMs) return waited;
  }
}

/** cutime + cstime of `pid`: CPU of the children it has already waited for (a postmaster's ended backends), in ms. */
export function reapedCpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLK_TCK;
}

/**
 * Whether a process still runs, for tests that check what a command or a killed server left behind: a
 * zombie (killed, waiting for its reaper) counts as gone.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** Alive and not a zombie. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false; // gone between the two checks
  }
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** True once `pid` is gone or a zombie; gives up (false) after about 5 s. */
export async function diesSoon(pid: number): Promise<boolean> {
  for (let i = 0; i < 250; i++) {
    if (!isRunning(pid)) return true;
    await sleep(20);
  }
  return false;
}

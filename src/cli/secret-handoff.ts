/**
 * @module svc serve's secrets out of its exec-time environment. A workspace command runs as the server's
 * user, and such a process reads the environment the server was started with (`/proc/<pid>/environ`,
 * `ps e`), whatever process.env holds since: `tr '\0' '\n' < /proc/$PPID/environ` in run_command printed
 * the provider keys that child-env.ts keeps out of the command's own environment. So before the agent
 * server loads, the process replaces itself (process.execve: same pid, stdio and signals' targets) with an
 * environment without the names run_command must not see; they cross in a private file that the new image
 * reads and removes first, before any command could run. This module is main.ts's first import, so both
 * happen before any other module is loaded (and reads process.env).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { STRIPPED } from '../agent/tools/child-env.ts';

/** The variable naming the file that holds the moved names (itself an SVC_ name, so no child sees it). */
const HANDOFF = 'SVC_SECRET_HANDOFF';

/**
 * Re-executes this process without the names child-env.ts strips, when it holds any. Where that cannot be
 * done (no process.execve: not Linux or an older Node; an IPC channel, which exec would close; no writable
 * temp folder), the process goes on as it is.
 */
export function execWithoutSecrets(): void {
  if (typeof process.execve !== 'function' || process.platform !== 'linux') return;
  if (process.env[HANDOFF] !== undefined || process.env.NODE_CHANNEL_FD !== undefined) return;
  const moved: Record<string, string> = {};
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined) (STRIPPED.test(name) ? moved : kept)[name] = value;
  }
  if (Object.keys(moved).length === 0) return;
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), 'svc-env-')); // mode 0700
    const file = join(dir, 'env.json');
    writeFileSync(file, JSON.stringify(moved), { mode: 0o600, flag: 'wx' });
    kept[HANDOFF] = file;
    const argv = [process.execPath, ...process.execArgv, ...process.argv.slice(1)];
    process.execve(process.execPath, argv, kept);
  } catch {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Takes back the names execWithoutSecrets moved aside, and removes their file, when this image is its exec;
 * whether it was.
 */
export function restoreHandedOff(): boolean {
  const file = process.env[HANDOFF];
  if (file === undefined) return false;
  delete process.env[HANDOFF];
  try {
    Object.assign(process.env, JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>);
  } catch {
    // not a file execWithoutSecrets wrote (a value set by hand): nothing to take back
  } finally {
    if (/^svc-env-/.test(basename(dirname(file)))) rmSync(dirname(file), { recursive: true, force: true });
  }
  return true;
}

/** `svc serve` (not its help): the one command that runs what a model writes. */
const serving = process.argv[2] === 'serve' && !process.argv.some((a) => a === '--help' || a === '-h');
if (!restoreHandedOff() && serving) execWithoutSecrets();

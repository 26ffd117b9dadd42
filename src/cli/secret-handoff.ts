/**
 * @module svc serve's secrets out of its exec-time environment. A workspace command runs as the server's
 * user, and such a process reads the environment the server was started with (`/proc/<pid>/environ`,
 * `ps e`), whatever process.env holds since: `tr '\0' '\n' < /proc/$PPID/environ` in run_command printed
 * the provider keys that child-env.ts keeps out of the command's own environment. So before the agent
 * server loads, the process replaces itself (process.execve: same pid, stdio and signals' targets) with an
 * environment without the names run_command must not see; they cross in a private file that the new image
 * reads and removes first, before any command could run. A store URL given as a flag (`--database-url`, a
 * `--db-path postgres://…`), which may hold the database password, crosses the same way, so the server's
 * command line (`/proc/<pid>/cmdline`) does not show it either. This module is main.ts's first import, so
 * both happen before any other module is loaded (and reads process.env or process.argv).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { STRIPPED } from '../agent/tools/child-env.ts';

/** The variable naming the file that holds the moved names (itself an SVC_ name, so no child sees it). */
const HANDOFF = 'SVC_SECRET_HANDOFF';

/** A handoff folder's name: svc-env-<pid of the start that made it>-<random>. */
const FOLDER = /^svc-env-(\d+)-/;

/** What crosses the exec: the moved names, and the whole command line when a store URL was taken off it. */
interface Handoff {
  env: Record<string, string>;
  argv?: string[];
}

/**
 * Re-executes this process without the names child-env.ts strips and the store URL flags, when it has any. Where that cannot be
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
  const args = process.argv.slice(1);
  const shown = withoutStoreUrls(args);
  if (Object.keys(moved).length === 0 && shown.length === args.length) return;
  const handoff: Handoff = shown.length === args.length ? { env: moved } : { env: moved, argv: args };
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), `svc-env-${process.pid}-`)); // mode 0700
    const file = join(dir, 'env.json');
    writeFileSync(file, JSON.stringify(handoff), { mode: 0o600, flag: 'wx' });
    kept[HANDOFF] = file;
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...shown], kept);
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
    const handoff = JSON.parse(readFileSync(file, 'utf8')) as Handoff;
    Object.assign(process.env, handoff.env);
    if (handoff.argv) process.argv = [process.argv[0], ...handoff.argv];
  } catch (err) {
    // the keys or the store URL the start was given are not here: starting without them would run on other
    // settings (the default store in place of a --database-url) in silence
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    process.stderr.write(
      `svc: the settings this start handed to itself in ${file} (SVC_SECRET_HANDOFF) could not be read back (${reason}); start svc serve again without SVC_SECRET_HANDOFF set.\n`,
    );
    process.exit(1);
  } finally {
    if (FOLDER.test(basename(dirname(file)))) rmSync(dirname(file), { recursive: true, force: true });
  }
  return true;
}

/** The command line without `--database-url` and a `--db-path` naming a PostgreSQL URL, with their values. */
function withoutStoreUrls(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split(/=(.*)/s, 2);
    const isStoreFlag = flag === '--database-url' || flag === '--db-path';
    const value = inline ?? args[i + 1];
    if (!isStoreFlag || value === undefined) {
      out.push(args[i]);
      continue;
    }
    if (flag === '--database-url' || /^postgres(ql)?:\/\//i.test(value)) {
      if (inline === undefined) i++; // its value, the next word
      continue;
    }
    out.push(args[i]);
  }
  return out;
}

/**
 * Removes the handoff folders of starts that ended before their new image read them (a SIGTERM or kill -9
 * in the few hundred ms between the two, which left the provider keys in a file a later run_command of the
 * same user could read): a folder whose process is gone, or that names this process, which has made none
 * yet (a container's pid 1 of an earlier run). A start under way (its process alive) keeps its folder.
 */
function removeLeftovers(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return; // no temp folder to read: none left there either
  }
  for (const name of names) {
    const pid = FOLDER.exec(name)?.[1];
    if (pid === undefined || (Number(pid) !== process.pid && isAlive(Number(pid)))) continue;
    try {
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
    } catch {
      // another user's folder: not ours to remove, and not readable by our commands either
    }
  }
}

/** Whether a process with this id runs (EPERM: it does, as another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `svc serve` (not its help): the one command that runs what a model writes. */
const serving = process.argv[2] === 'serve' && !process.argv.some((a) => a === '--help' || a === '-h');
if (!restoreHandedOff() && serving) {
  removeLeftovers();
  execWithoutSecrets();
}
